"""Run-configuration hooks of BIER for `keras_dml.training` (`keras-dml train --method bier`)."""

from keras_dml.training.methods import MethodSpec, build_optimizer


def build_bier_model(config, backbone):
    """Builds an uncompiled `BIER` from `config["model"]` (constructor keyword arguments).

    BIER's loss is part of the model: a top-level `config["loss"]` (`{"name": ..., **options}`)
    becomes `BIER(loss=name, loss_options=options)` unless `config["model"]` sets `loss` itself.
    """
    from keras_dml.models.bier.model import BIER

    model_options = dict(config.get("model", {}))
    loss = config.get("loss")
    if loss:
        if "loss" in model_options:
            raise ValueError(
                "BIER's loss is set twice: in `loss` and in `model.loss`. Keep one of them."
            )
        loss = dict(loss)
        model_options["loss"] = loss.pop("name")
        model_options["loss_options"] = {**loss, **model_options.get("loss_options", {})}
    return BIER(backbone, **model_options)


def compile_bier(config, model):
    """Compiles with `config["optimizer"]`; `method_options.embedding_lr_multiplier` (paper: 10)."""
    options = dict(config.get("method_options", {}))
    unknown = sorted(set(options) - {"embedding_lr_multiplier"})
    if unknown:
        raise ValueError(
            f"Unknown BIER method_options {unknown}; known: ['embedding_lr_multiplier']."
        )
    model.compile(
        optimizer=build_optimizer(config),
        embedding_lr_multiplier=float(options.get("embedding_lr_multiplier", 1.0)),
    )


def build_bier(config, backbone=None):
    """Builds and compiles a `BIER` model from a run configuration.

    Args:
        config: dict. A run configuration (`keras_dml.training.config` schema) with
            `"method": "bier"`; `model` holds `BIER` keyword arguments, `optimizer` the Keras
            optimizer, `method_options.embedding_lr_multiplier` the heads' learning-rate factor.
        backbone: `keras.Model`. Defaults to `None`: built from `config["backbone"]` and
            `config["image_size"]`.

    Returns:
        A compiled `BIER` model, ready for `fit` on m-per-class batches.

    Examples:
    >>> from keras_dml.training import load_config
    >>> model = build_bier(load_config("training/configs/bier_fashion_mnist.json"))

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4 (training setup).
    """
    from keras_dml.training.config import resolve_config

    config = resolve_config(config)
    if backbone is None:
        from keras_dml import backbones

        options = dict(config["backbone"])
        size = config["image_size"]
        backbone = backbones.get(options.pop("name"), input_shape=(size, size, 3), **options)
    model = build_bier_model(config, backbone)
    compile_bier(config, model)
    return model


METHOD = MethodSpec(
    name="bier",
    description="BIER / A-BIER: online gradient boosting over embedding groups (+ diversity loss)",
    build=build_bier_model,
    compile=compile_bier,
)
