"""`keras-dml train --method dcml`: how a run configuration builds and compiles DCML."""

from keras_dml.methods.defaults import compile_optimizer_only
from keras_dml.methods.registry import register_method
from keras_dml.models.dcml import DCML


@register_method(
    "dcml",
    description="DCML: K learners, M learnable compositors, self-reinforced loss (CVPR 2021)",
    compile=compile_optimizer_only,
    tiny=lambda backbone: DCML(backbone, num_learners=2, learner_dim=8, num_compositors=3),
    training_only_weights=lambda model: model.compositor.weights,
    title="DCML, deep compositional metric learning (CVPR 2021)",
    demo={"model": {"num_learners": 4, "learner_dim": 16, "num_compositors": 4}},
)
def build_dcml(config, backbone, splits=None):
    """Builds an uncompiled `DCML` from a run configuration.

    Args:
        config: dict. A run configuration (`keras_dml.training.run_config` schema). `model` holds
            `DCML` keyword arguments (`num_learners`, `learner_dim`, `num_compositors`,
            `lambda_reinforce`, `lambda_subtask`, `subtask_loss`, ...); `loss` is `J_dis`
            (`keras_dml.losses.get` form) unless `model` names a `loss` itself. Without a
            `subtask_loss`, `J_T` is a copy of `J_dis` (the paper's setting).
        backbone: `keras.Model`. The backbone built from `config["backbone"]`.
        splits: dict of loaded splits. Unused.

    Returns:
        A `DCML` model.

    Examples:
    >>> from keras_dml.training import load_config
    >>> config = load_config("training/configs/dcml_fashion_mnist.json")
    >>> model = build_dcml(config, backbone, splits)

    References:
        Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.2.
    """
    del splits
    options = dict(config.get("model", {}))
    options.setdefault("loss", dict(config.get("loss") or {"name": "margin"}))
    return DCML(backbone, **options)
