"""`keras-dml train --method hdc`: how a run configuration builds and fits hierarchical D&C."""

import dataclasses

from keras_dml.methods.division.batches import prepare_division
from keras_dml.methods.hierarchical_divide_and_conquer.callback import (
    HierarchicalDivideAndConquerCallback,
)
from keras_dml.methods.registry import get_method, register_method
from keras_dml.models.hierarchical_divide_and_conquer import HierarchicalDivideAndConquer

# The method's registered name (`--method hdc`).
NAME = "hdc"


@dataclasses.dataclass(frozen=True)
class HierarchicalDivideAndConquerOptions:
    """`method_options` of an HDC run configuration (TPAMI 2021, Tab. 9 / Sec. 3).

    Args:
        division_every: int. Epochs between divisions. Defaults to `2`.
        finetune_epoch: int or `None`. First epoch of the final fine-tuning. Defaults to `None`.
        cluster_on: str. `"embedding"` or `"features"`. Defaults to `"embedding"`.
        freeze_backbone: bool. Freeze the backbone the epoch after a division. Defaults to `False`.
        split_attempts: int. 2-means restarts per split. Defaults to `30`.
        epoch_length: int or `None`. Batches per epoch; `None`: samples // batch size.
        kmeans_niter: int. K-means iterations. Defaults to `100`.
        kmeans_nredo: int. K-means restarts. Defaults to `5`.
        similarity: str. `"iou"` or `"overlap"` cluster matching. Defaults to `"iou"`.
    """

    division_every: int = 2
    finetune_epoch: int | None = None
    cluster_on: str = "embedding"
    freeze_backbone: bool = False
    split_attempts: int = 30
    epoch_length: int | None = None
    kmeans_niter: int = 100
    kmeans_nredo: int = 5
    similarity: str = "iou"


def prepare_hierarchical_divide_and_conquer(config, model, splits):
    """Cluster-conditioned batches, the division callback and `SamplerEpochCallback`."""
    del model
    options = get_method(NAME).parse_options(config)
    return prepare_division(
        config,
        splits,
        options,
        HierarchicalDivideAndConquerCallback,
        division_every=options.division_every,
        finetune_epoch=options.finetune_epoch,
        freeze_backbone=options.freeze_backbone,
        split_attempts=options.split_attempts,
    )


def training_only_weights(model):
    """Training state `call` never reads (`num_active` is read: it selects the summed masks)."""
    names = (
        "division_depth",
        "recluster_count",
        "stage_variable",
        "backbone_frozen",
        "cluster_assignment",
    )
    return [getattr(model, n) for n in names if hasattr(model, n)]


@register_method(
    NAME,
    description="Hierarchical Divide & Conquer (TPAMI 2021): progressive 2-means division, "
    "soft masks per cluster, mask orthogonality loss",
    prepare=prepare_hierarchical_divide_and_conquer,
    options=HierarchicalDivideAndConquerOptions,
    learners_option="max_learners",
    classes_per_learner=2,
    model=HierarchicalDivideAndConquer,
    tiny={"embedding_dim": 16, "max_learners": 2},
    training_only_weights=training_only_weights,
    title="Hierarchical Divide & Conquer with learned soft masks (TPAMI)",
    demo={
        "model": {"embedding_dim": 64, "max_learners": 2},
        "method_options": {"division_every": 2},
    },
)
def build_hierarchical_divide_and_conquer(config, backbone, splits):
    """`HierarchicalDivideAndConquer(backbone, **config["model"])`, keeping the assignment."""
    options = dict(config["model"])
    if options.get("num_train_samples") is None:
        options["num_train_samples"] = len(splits["train"].labels)
    return HierarchicalDivideAndConquer(backbone, **options)
