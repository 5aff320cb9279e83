"""`keras-dml train --method bier`: how a run configuration builds and compiles BIER / A-BIER."""

import dataclasses

from keras_dml.methods.defaults import build_loss, build_optimizer
from keras_dml.methods.registry import get_method, register_method
from keras_dml.models.bier import BIER
from keras_dml.models.boosting.pair_losses import LOSSES


@dataclasses.dataclass(frozen=True)
class BIEROptions:
    """`method_options` of a BIER run configuration.

    Args:
        embedding_lr_multiplier: float. Heads' learning-rate factor (paper: 10). Defaults to `1.0`.
    """

    embedding_lr_multiplier: float = 1.0


def compile_bier(config, model):
    """Compiles with `config["optimizer"]` and `method_options.embedding_lr_multiplier`."""
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


@register_method(
    "bier",
    description="BIER / A-BIER: online gradient boosting over embedding groups (+ diversity loss)",
    compile=compile_bier,
    options=BIEROptions,
    model=BIER,
    # A small A-BIER (adversarial diversity with a training-only regressor).
    tiny={
        "embedding_dim": 24,
        "num_learners": 3,
        "diversity": "adversarial",
        "regressor_units": 8,
    },
    training_only_weights=lambda model: model.diversity_layer.weights,
    default_loss={"name": "binomial_deviance"},
    title="BIER / A-BIER (TPAMI 2020)",
    demo={
        "model": {"embedding_dim": 64, "num_learners": 3},
        "loss": {"name": "binomial_deviance"},
    },
)
def build_bier_model(config, backbone, splits=None):
    """Builds an uncompiled `BIER` from `config["model"]`; a Table 1 `loss` becomes its own."""
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
