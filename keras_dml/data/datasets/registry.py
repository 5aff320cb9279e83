"""Registry of dataset names and `load_dataset`, the single entry point to every dataset."""

import inspect

from keras_dml.utils.registry import Registry
from keras_dml.utils.suggestions import did_you_mean_keys

DATASETS = Registry("dataset", hint=" For your own images use `image_folder` or `from_arrays`.")


def register_dataset(name, description=""):
    """Decorator registering `loader(split, data_dir, image_size, val_fraction, seed, **kwargs)`.

    Args:
        name: str. Name passed to `load_dataset`.
        description: str. One line shown by `list_datasets(details=True)`. Defaults to `""`.

    Returns:
        The decorator, which returns the loader unchanged.

    Examples:
    >>> @register_dataset("my_data", "two classes")
    ... def load_my_data(split, data_dir, image_size, val_fraction, seed, **kwargs):
    ...     ...
    """

    return DATASETS.register(name, description=description)


def list_datasets(details=False):
    """Returns the registered dataset names (sorted), or `{name: description}` with `details`."""
    return DATASETS.describe() if details else DATASETS.names()


def load_dataset(
    name,
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=None,
    seed=0,
    **kwargs,
):
    """Loads a split of a metric learning dataset as an `ImageDataset`.

    Splits divide *classes* (evaluation is on unseen classes): `"train"` is the official training
    classes minus a seeded held-out fraction `val_fraction` (at least one class) that forms `"val"`;
    `"trainval"` is all training classes; `"test"` the official test classes; In-shop and
    VehicleID also have `"query"` / `"gallery"`. Choose checkpoints and hyper-parameters on
    `"val"`: the reference implementations selected them on test Recall@1, which overstates
    results; test classes are never used for model selection here.

    Args:
        name: str. One of `list_datasets()`: `"cub200"`, `"cars196"`, `"sop"`, `"inshop"`,
            `"vehicleid"` (official folder layouts), `"tfds:caltech_birds2011"`,
            `"tfds:cars196"`, `"tfds:stanford_online_products"` (TensorFlow Datasets),
            `"digits"`, `"fashion_mnist"`, `"hangul"`, `"kanji"` (built in, no network) and
            `"image_folder"`.
        split: str. Defaults to `"train"`.
        data_dir: str. Folder holding the dataset. Defaults to `None` (the loader's default
            places, e.g. `~/.keras/datasets/<name>`).
        image_size: int or (height, width). Default crop size of `as_tf_dataset`.
            Defaults to `None` (224 for photographs, 32 for `digits` / `fashion_mnist` /
            `hangul` / `kanji`).
        val_fraction: float in [0, 1). Fraction of training classes held out as `"val"`.
            Defaults to `None`: the dataset's own default (0.15; 0.34 for `digits`, so that its
            validation split has two classes).
        seed: int. Seed of the held-out class choice (and other seeded splits). Defaults to `0`.
        **kwargs: loader options, e.g. `test_size="large"` for VehicleID, `verify=False` to
            skip the file check, `num_train_classes` / `num_test_classes` for `hangul` / `kanji`.

    Returns:
        `ImageDataset`.

    Raises:
        ValueError: unknown name (the message lists the known names and close matches),
            unknown split, or an option (`**kwargs`) the dataset's loader does not take.
        FileNotFoundError: the dataset files are not where the loader looked.

    Examples:
    >>> load_dataset("digits", split="test").class_names
    ['5', '6', '7', '8', '9']

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016
        (CUB / Cars / SOP class splits); Liu et al., "DeepFashion", CVPR 2016 (In-shop);
        Liu et al., "Deep Relative Distance Learning", CVPR 2016 (VehicleID).
    """
    loader = DATASETS.get(name)
    if val_fraction is not None:
        kwargs["val_fraction"] = val_fraction
    _check_options(name, loader, kwargs)
    return loader(split=split, data_dir=data_dir, image_size=image_size, seed=seed, **kwargs)


# Arguments every loader takes from `load_dataset` itself (not options a user sets).
_COMMON = ("split", "data_dir", "image_size", "seed")


def _check_options(name, loader, options):
    """Raises for options the loader of `name` does not take (a typo must not be a traceback).

    Loaders that take `**kwargs` (e.g. the TFDS ones, which pass them on) are not checked.
    """
    parameters = inspect.signature(loader).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = sorted(p.name for p in parameters if p.name not in _COMMON)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        hint = did_you_mean_keys(unknown, accepted)
        raise ValueError(
            f"Dataset {name!r} has no option(s) {unknown}.{hint} Its options: {accepted} "
            '(config: "dataset_options"; CLI: --set dataset_options.NAME=VALUE). '
            f"Received: {', '.join(f'{u}={options[u]!r}' for u in unknown)}"
        )
