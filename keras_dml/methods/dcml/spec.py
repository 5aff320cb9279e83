"""`keras-dml train --method dcml`: how a run configuration builds and compiles DCML."""

from keras_dml.methods.defaults import compile_optimizer_only
from keras_dml.methods.registry import register_method
from keras_dml.models.dcml import DCML


@register_method(
    "dcml",
    description="DCML: K learners, M learnable compositors, self-reinforced loss (CVPR 2021)",
    compile=compile_optimizer_only,
    model=DCML,
    tiny={"num_learners": 2, "learner_dim": 8, "num_compositors": 3},
    training_only_weights=lambda model: model.compositor.weights,
    title="DCML, deep compositional metric learning (CVPR 2021)",
    demo={"model": {"num_learners": 4, "learner_dim": 16, "num_compositors": 4}},
)
def build_dcml(config, backbone, splits=None):
    """Builds an uncompiled `DCML` from `config["model"]`, with `config["loss"]` as `J_dis`.

    References:
        Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.2.
    """
    del splits
    options = dict(config.get("model", {}))
    if config.get("loss") is not None:
        options.setdefault("loss", dict(config["loss"]))
    return DCML(backbone, **options)
