"""`keras-dml train --method abe | mheads`: how a run configuration builds ABE and M-heads."""

from keras_dml.methods.defaults import compile_optimizer_only
from keras_dml.methods.registry import register_method
from keras_dml.models.abe import ABE
from keras_dml.models.mheads import MHeads


def model_options(config):
    """`config["model"]` with a top-level `loss` entry mapped to `metric_loss`."""
    options = dict(config.get("model", {}))
    if config.get("loss"):
        if options.get("metric_loss") is not None:
            raise ValueError(
                "The metric loss is set twice: in `loss` and in `model.metric_loss`. Keep one."
            )
        options["metric_loss"] = dict(config["loss"])
    return options


@register_method(
    "abe",
    description="ABE-M: M attention masks on a shared trunk, shared embedding G, divergence loss",
    compile=compile_optimizer_only,
    default_loss=None,  # the model's own contrastive loss (Eq. 10)
    model=ABE,
    tiny={"num_learners": 2, "embedding_dim": 16},
    title="ABE, attention-based ensemble (ECCV 2018)",
    demo={"model": {"embedding_dim": 64, "num_learners": 2}},
)
def build_abe(config, backbone, splits=None):
    """Builds an uncompiled `ABE` from `config["model"]` (constructor keyword arguments)."""
    del splits
    return ABE(backbone, **model_options(config))


@register_method(
    "mheads",
    description="M-heads: shared bottom layers, M separate copies of the top (ABE's baseline)",
    compile=compile_optimizer_only,
    default_loss=None,  # the model's own contrastive loss (Eq. 10)
    model=MHeads,
    tiny={"num_learners": 2, "embedding_dim": 16},
    title="M-heads (ABE's baseline, ECCV 2018)",
)
def build_mheads(config, backbone, splits=None):
    """Builds an uncompiled `MHeads` from `config["model"]` (constructor keyword arguments)."""
    del splits
    return MHeads(backbone, **model_options(config))
