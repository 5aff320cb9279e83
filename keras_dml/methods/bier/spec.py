"""`keras-dml train --method bier`: how a run configuration builds and compiles BIER / A-BIER."""

import dataclasses

from keras_dml import backbones
from keras_dml.methods.defaults import build_loss, build_optimizer
from keras_dml.methods.registry import get_method, register_method
from keras_dml.models.bier import BIER
from keras_dml.models.boosting.pair_losses import LOSSES


@dataclasses.dataclass(frozen=True)
class BIEROptions:
    """`method_options` of a BIER run configuration.

    Args:
        embedding_lr_multiplier: float. Learning-rate factor of the embedding heads (paper: 10).
            Defaults to `1.0`.
    """

    embedding_lr_multiplier: float = 1.0


def compile_bier(config, model):
    """Compiles with `config["optimizer"]`; `method_options.embedding_lr_multiplier` (paper: 10)."""
    options = get_method("bier").parse_options(config)
    loss = config.get("loss")
    if loss and loss.get("name") not in LOSSES:
        # Not a Table 1 form: each group trains with this loss, without boosting weights.
        loss = build_loss(
            config, embedding_dim=model.embedding_dim, num_memories=model.loss_memory_keys
        )
    else:
        loss = None
    model.compile(
        optimizer=build_optimizer(config),
        embedding_lr_multiplier=float(options.embedding_lr_multiplier),
        loss=loss,
    )


def tiny_bier(backbone):
    """A small A-BIER (adversarial diversity with a training-only regressor) for tests."""
    return BIER(
        backbone, embedding_dim=24, num_learners=3, diversity="adversarial", regressor_units=8
    )


@register_method(
    "bier",
    description="BIER / A-BIER: online gradient boosting over embedding groups (+ diversity loss)",
    compile=compile_bier,
    options=BIEROptions,
    tiny=tiny_bier,
    training_only_weights=lambda model: model.diversity_layer.weights,
    title="BIER / A-BIER (TPAMI 2020)",
    demo={
        "model": {"embedding_dim": 64, "num_learners": 3},
        "loss": {"name": "binomial_deviance"},
    },
)
def build_bier_model(config, backbone, splits=None):
    """Builds an uncompiled `BIER` from `config["model"]` (constructor keyword arguments).

    BIER's boosted loss is part of the model: a top-level `config["loss"]` naming a Table 1 form
    (`binomial_deviance`, `contrastive`, `triplet`) becomes `BIER(loss=name,
    loss_options=options)` unless `config["model"]` sets `loss` itself. Any other registered loss
    is compiled (`compile_bier`): each group trains with it on its own slice, without boosting.
    """
    del splits
    model_options = dict(config.get("model", {}))
    loss = config.get("loss")
    if loss and loss.get("name") in LOSSES:  # a Table 1 form: boosted (other losses: compile)
        if "loss" in model_options:
            raise ValueError(
                "BIER's loss is set twice: in `loss` and in `model.loss`. Keep one of them."
            )
        loss = dict(loss)
        model_options["loss"] = loss.pop("name")
        model_options["loss_options"] = {**loss, **model_options.get("loss_options", {})}
    return BIER(backbone, **model_options)


# The keys `build_bier` reads; `resolve_config` fills every one of them in.
_RESOLVED_KEYS = ("backbone", "image_size", "loss", "method_options", "model", "optimizer")


def _check_resolved(config):
    missing = [key for key in _RESOLVED_KEYS if key not in config]
    if missing:
        raise ValueError(
            f"build_bier needs a resolved run configuration; missing keys {missing}: pass it "
            "through keras_dml.training.resolve_config (load_config returns one resolved)."
        )


def build_bier(config, backbone=None):
    """Builds and compiles a `BIER` model from a run configuration.

    Args:
        config: dict. A run configuration resolved by `keras_dml.training.resolve_config` (or
            read by `keras_dml.training.load_config`) with `"method": "bier"`; `model` holds
            `BIER` keyword arguments, `optimizer` the Keras optimizer,
            `method_options.embedding_lr_multiplier` the heads' learning-rate factor.
        backbone: `keras.Model`. Defaults to `None`: built from `config["backbone"]` and
            `config["image_size"]`.

    Returns:
        A compiled `BIER` model, ready for `fit` on m-per-class batches.

    Raises:
        ValueError: for a configuration that was not resolved (a key missing).

    Examples:
    >>> from keras_dml.training import load_config
    >>> model = build_bier(load_config("training/configs/bier_fashion_mnist.json"))

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4 (training setup).
    """
    _check_resolved(config)
    if backbone is None:
        options = dict(config["backbone"])
        size = config["image_size"]
        backbone = backbones.get(options.pop("name"), input_shape=(size, size, 3), **options)
    model = build_bier_model(config, backbone)
    compile_bier(config, model)
    return model
