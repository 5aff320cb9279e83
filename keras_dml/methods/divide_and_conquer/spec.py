"""`keras-dml train --method dc`: how a run configuration builds and fits Divide & Conquer.

`build_divide_and_conquer_training(config, train_data, val_data, backbone)` does everything in one
call for scripts that do not use the registry.
"""

import dataclasses

from keras_dml import backbones
from keras_dml.methods.defaults import compile_with_config
from keras_dml.methods.divide_and_conquer.callback import DivideAndConquerCallback
from keras_dml.methods.division.batches import prepare_division
from keras_dml.methods.registry import get_method, register_method
from keras_dml.models.divide_and_conquer import DivideAndConquer


@dataclasses.dataclass(frozen=True)
class DivideAndConquerOptions:
    """`method_options` of a D&C run configuration (CVPR 2019, Sec. 4.2).

    Args:
        recluster_every: int. Epochs between divisions (T). Defaults to `2`.
        conquer_epoch: int, `"auto"` or `None`. First epoch (counted from 0) of the conquer
            stage, where the learners are merged and the whole embedding is fine-tuned (Sec. 3.3).
            `"auto"` (the default) conquers in the last 5% of the epochs, at least the last one,
            as the reference code's last 10 of 200 epochs; a 1-epoch run only divides. `None`
            never merges.
        conquer_sampling: str. Batches of the conquer stage: `"all"` (the default;
            class-balanced over the whole training set, as the reference code's final stage) or
            `"clusters"` (still per cluster, as its intermediate full-embedding stage).
        cluster_on: str. `"embedding"` (the paper) or `"features"` (the reference code).
        epoch_length: int or `None`. Batches per epoch. The pipeline fixes the dataset's
            cardinality when it is built, so the default is a constant (training samples //
            batch_size) rather than the sampler's "max"/"min", which change with every division.
        kmeans_niter: int. K-means iterations. Defaults to `100`.
        kmeans_nredo: int. K-means restarts. Defaults to `5`.
        similarity: str. How clusters are matched to the previous division. Defaults to `"iou"`.
        state_dir: str or `None`. Where divisions are saved for resuming.
        log_learner_recall: bool. Per-learner validation Recall@1 at each division.
    """

    recluster_every: int = 2
    conquer_epoch: int | str | None = "auto"
    conquer_sampling: str = "all"
    cluster_on: str = "embedding"
    epoch_length: int | None = None
    kmeans_niter: int = 100
    kmeans_nredo: int = 5
    similarity: str = "iou"
    state_dir: str | None = None
    log_learner_recall: bool = True

    def __post_init__(self):
        value = self.conquer_epoch
        valid_int = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not (value is None or value == "auto" or valid_int):
            raise ValueError(
                "`method_options.conquer_epoch` must be an epoch >= 0, 'auto' (the last 5% of "
                f"the epochs) or null (never merge). Received: conquer_epoch={value!r}"
            )


# The reference code fine-tunes the merged embedding in its last 10 of 200 epochs.
CONQUER_SHARE = 0.05


def conquer_epoch_for(conquer_epoch, epochs):
    """The first conquer epoch a run of `epochs` epochs uses.

    Args:
        conquer_epoch: int, `"auto"` or `None` (`DivideAndConquerOptions.conquer_epoch`).
        epochs: int. The run's number of epochs.

    Returns:
        An int, or `None` when the run never merges: `"auto"` gives the last
        `max(1, round(0.05 * epochs))` epochs, and `None` for a 1-epoch run (nothing to divide
        before it).

    Examples:
        >>> [conquer_epoch_for("auto", epochs) for epochs in (200, 3, 1)]
        [190, 2, None]
    """
    if conquer_epoch != "auto":
        return conquer_epoch
    if epochs < 2:
        return None
    return epochs - max(1, round(CONQUER_SHARE * epochs))


def prepare_divide_and_conquer(config, model, splits):
    """Cluster-conditioned training batches and the re-clustering callback.

    Args:
        config: resolved run configuration (`batch_size`, `m_per_class`, `image_size`, `seed`,
            `method_options`).
        model: the `DivideAndConquer` model.
        splits: dict of loaded splits: `train` and, for per-learner Recall@1, `val`.

    Returns:
        `(train_dataset, [DivideAndConquerCallback, SamplerEpochCallback])`: a `tf.data.Dataset` of
        `(images, {"labels", "clusters"})` whose batches follow the sampler the callback updates.
    """
    del model
    options = get_method("dc").parse_options(config)
    return prepare_division(
        config,
        splits,
        options,
        DivideAndConquerCallback,
        recluster_every=options.recluster_every,
        conquer_epoch=conquer_epoch_for(options.conquer_epoch, config["epochs"]),
        conquer_sampling=options.conquer_sampling,
        val_data=splits.get("val") if options.log_learner_recall else None,
        state_dir=options.state_dir,
    )


def training_only_weights(model):
    """The stage and division counter: state `call` never reads."""
    return [model.stage_variable, model.division_count]


@register_method(
    "dc",
    description="Divide & Conquer (CVPR 2019): K learners on K k-means clusters, re-clustered "
    "every T epochs, then merged",
    prepare=prepare_divide_and_conquer,
    options=DivideAndConquerOptions,
    uses_state_dir=True,
    classes_per_learner=2,
    tiny=lambda backbone: DivideAndConquer(backbone, embedding_dim=16),
    training_only_weights=training_only_weights,
    title="Divide & Conquer (CVPR 2019)",
    demo={
        "model": {"embedding_dim": 64, "num_learners": 2},
        "method_options": {"recluster_every": 2},
    },
)
def build_divide_and_conquer(config, backbone, splits):
    """`DivideAndConquer(backbone, **config["model"])` (K = `model.num_learners`, default 4)."""
    del splits
    return DivideAndConquer(backbone, **config["model"])


def build_divide_and_conquer_training(config, train_data, val_data=None, backbone=None):
    """Builds, compiles and wires a D&C model from a resolved run configuration.

    Args:
        config: dict. A configuration resolved by `keras_dml.training.resolve_config`.
        train_data: training `ImageDataset`.
        val_data: validation `ImageDataset` or `None`.
        backbone: `keras.Model` or `None` to build `config["backbone"]` at `config["image_size"]`.

    Returns:
        `(model, fit_kwargs)`; train with `model.fit(**fit_kwargs)` (`x`, `epochs`, `callbacks`).

    Examples:
    >>> # config = keras_dml.training.load_config("training/configs/dc_fashion_mnist.json")
    >>> # model, fit_kwargs = build_divide_and_conquer_training(config, train, val)
    >>> # model.fit(**fit_kwargs)
    """
    if backbone is None:
        options = dict(config["backbone"])
        size = config["image_size"]
        backbone = backbones.get(options.pop("name"), input_shape=(size, size, 3), **options)
    splits = {"train": train_data, "val": val_data}
    model = build_divide_and_conquer(config, backbone, splits)
    compile_with_config(config, model)
    dataset, callbacks = prepare_divide_and_conquer(config, model, splits)
    return model, {"x": dataset, "epochs": config["epochs"], "callbacks": callbacks}
