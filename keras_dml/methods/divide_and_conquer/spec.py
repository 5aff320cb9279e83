"""`keras-dml train --method dc`: how a run configuration builds and fits Divide & Conquer."""

import dataclasses

from keras_dml.methods.divide_and_conquer.callback import DivideAndConquerCallback
from keras_dml.methods.division.batches import prepare_division
from keras_dml.methods.registry import get_method, register_method
from keras_dml.models.divide_and_conquer import DivideAndConquer


@dataclasses.dataclass(frozen=True)
class DivideAndConquerOptions:
    """`method_options` of a D&C run configuration (CVPR 2019, Sec. 4.2).

    Args:
        recluster_every: int. T, epochs between divisions. Defaults to `2`.
        conquer_epoch: int, `"auto"` or `None`. First conquer epoch (`conquer_epoch_for`).
            Defaults to `"auto"`.
        conquer_sampling: str. Conquer batches: `"all"` or `"clusters"`. Defaults to `"all"`.
        cluster_on: str. `"embedding"` or `"features"`. Defaults to `"embedding"`.
        epoch_length: int or `None`. Batches per epoch; `None`: samples // batch size.
        kmeans_niter: int. K-means iterations. Defaults to `100`.
        kmeans_nredo: int. K-means restarts. Defaults to `5`.
        similarity: str. `"iou"` or `"overlap"` cluster matching. Defaults to `"iou"`.
        state_dir: str or `None`. Where divisions are saved for resuming. Defaults to `None`.
        log_learner_recall: bool. Per-learner validation Recall@1. Defaults to `True`.
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
    """The first conquer epoch of a run; `"auto"`: the last 5% of `epochs`, at least one.

    Returns:
        int, or `None` when the run never merges (also `"auto"` with one epoch).

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
    """Cluster-conditioned batches, `DivideAndConquerCallback` and `SamplerEpochCallback`."""
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
    model=DivideAndConquer,
    tiny={"embedding_dim": 16, "num_learners": 2},
    training_only_weights=training_only_weights,
    title="Divide & Conquer (CVPR 2019)",
    demo={
        "model": {"embedding_dim": 64, "num_learners": 2},
        "method_options": {"recluster_every": 2},
    },
)
def build_divide_and_conquer(config, backbone, splits):
    """`DivideAndConquer(backbone, **config["model"])`."""
    del splits
    return DivideAndConquer(backbone, **config["model"])
