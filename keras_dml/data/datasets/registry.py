"""The dataset registry (`DATASETS`) and `load_dataset`, the entry point to every dataset."""

import inspect

from keras_dml.utils.registry import Registry
from keras_dml.utils.suggestions import did_you_mean_keys

DATASETS = Registry("dataset", hint=" For your own images use `image_folder` or `from_arrays`.")


def register_dataset(name, description=""):
    """Decorator registering `loader(split, data_dir, image_size, seed, **options)` as `name`.

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
    """Loads a split of a registered dataset as an `ImageDataset` (splits: docs/data.md).

    Args:
        name: str. One of `list_datasets()`.
        split: str. `"train"`, `"val"`, `"trainval"`, `"test"` (and `"query"` / `"gallery"`
            for `inshop` and `vehicleid`). Defaults to `"train"`.
        data_dir: str. Folder holding the dataset. Defaults to `None` (the loader's default
            places under `$KERAS_DML_DATA_DIR` or `~/.keras/datasets`).
        image_size: int or (height, width). Default crop size of the pipelines. Defaults to
            `None` (the dataset's: 224 for photographs, 32 for the built-in small images).
        val_fraction: float in [0, 1). Training classes held out as `"val"`. Defaults to `None`
            (the dataset's own).
        seed: int. Seed of the held-out class choice. Defaults to `0`.
        **kwargs: the loader's own options (e.g. `verify=False`).

    Returns:
        `ImageDataset`.

    Raises:
        ValueError: an unknown name, split or option.
        FileNotFoundError: the dataset files are not where the loader looked.

    Examples:
    >>> load_dataset("digits", split="test").class_names
    ['6', '7', '8', '9']

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
    """Raises for options the loader of `name` does not take (not for `**kwargs` loaders)."""
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
