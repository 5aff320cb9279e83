"""Run-configuration hooks of DCML for `keras_dml.training` (`keras-dml train --method dcml`)."""

from keras_dml.training.methods import MethodSpec, build_optimizer


def build_dcml_model(config, backbone):
    """Builds an uncompiled `DCML` from a run configuration.

    Args:
        config: dict. A run configuration (`keras_dml.training.config` schema). `model` holds
            `DCML` keyword arguments (`num_learners`, `learner_dim`, `num_compositors`,
            `lambda_reinforce`, `lambda_subtask`, `subtask_loss`, ...); `loss` is `J_dis`
            (`keras_dml.losses.get` form) unless `model` names a `loss` itself. Without a
            `subtask_loss`, `J_T` is a copy of `J_dis` (the paper's setting).
        backbone: `keras.Model`. The backbone built from `config["backbone"]`.

    Returns:
        A `DCML` model.

    Examples:
    >>> from keras_dml.training import load_config
    >>> config = load_config("training/configs/dcml_fashion_mnist.json")
    >>> model = build_dcml_model(config, backbone)

    References:
        Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.2.
    """
    from keras_dml.models.dcml.model import DCML

    options = dict(config.get("model", {}))
    options.setdefault("loss", dict(config.get("loss") or {"name": "margin"}))
    return DCML(backbone, **options)


def compile_dcml(config, model):
    """Compiles with `config["optimizer"]` only: DCML's losses are part of the model."""
    options = dict(config.get("method_options", {}))
    if options:
        raise ValueError(
            f"DCML has no method_options. Received: {sorted(options)}. Set the model's "
            "arguments under `model` and J_dis under `loss`."
        )
    model.compile(optimizer=build_optimizer(config))


DCML_SPEC = MethodSpec(
    name="dcml",
    description="DCML: K learners, M learnable compositors, self-reinforced loss (CVPR 2021)",
    build=build_dcml_model,
    compile=compile_dcml,
)
