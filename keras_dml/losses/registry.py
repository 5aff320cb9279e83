"""Resolve losses by name or config, for configuration files and the CLI."""

import keras

from keras_dml.losses.additive_margin import ArcFaceLoss, CosFaceLoss
from keras_dml.losses.binomial_deviance import BinomialDevianceLoss
from keras_dml.losses.circle import CircleLoss
from keras_dml.losses.contrastive import ContrastiveLoss
from keras_dml.losses.cross_batch_memory import CrossBatchMemory
from keras_dml.losses.fast_ap import FastAPLoss
from keras_dml.losses.lifted_structure import LiftedStructureLoss
from keras_dml.losses.margin import MarginLoss
from keras_dml.losses.margin_layer import LearnableMarginLoss
from keras_dml.losses.multi_similarity import MultiSimilarityLoss
from keras_dml.losses.normalized_softmax import NormalizedSoftmaxLoss
from keras_dml.losses.npairs import NPairsLoss
from keras_dml.losses.ntxent import NTXentLoss
from keras_dml.losses.proxy_anchor import ProxyAnchorLoss
from keras_dml.losses.proxy_nca import ProxyNCALoss
from keras_dml.losses.snr_contrastive import SNRContrastiveLoss
from keras_dml.losses.soft_triple import SoftTripleLoss
from keras_dml.losses.subcenter_arcface import SubCenterArcFaceLoss
from keras_dml.losses.supcon import SupConLoss
from keras_dml.losses.triplet import TripletLoss
from keras_dml.losses.tuplet_margin import TupletMarginLoss
from keras_dml.utils.suggestions import did_you_mean

LOSSES = {
    "contrastive": ContrastiveLoss,
    "triplet": TripletLoss,
    "margin": MarginLoss,
    "learnable_margin": LearnableMarginLoss,
    "binomial_deviance": BinomialDevianceLoss,
    "proxy_nca": ProxyNCALoss,
    "multi_similarity": MultiSimilarityLoss,
    "normalized_softmax": NormalizedSoftmaxLoss,
    "proxy_anchor": ProxyAnchorLoss,
    "arcface": ArcFaceLoss,
    "cosface": CosFaceLoss,
    "ntxent": NTXentLoss,
    "supcon": SupConLoss,
    "circle": CircleLoss,
    "lifted_structure": LiftedStructureLoss,
    "npairs": NPairsLoss,
    "tuplet_margin": TupletMarginLoss,
    "snr_contrastive": SNRContrastiveLoss,
    "subcenter_arcface": SubCenterArcFaceLoss,
    "soft_triple": SoftTripleLoss,
    "fast_ap": FastAPLoss,
    "cross_batch_memory": CrossBatchMemory,
}

# Losses that hold weights (trainable, or XBM's memory): `keras.layers.Layer`s the model must own.
LAYER_LOSSES = [
    "cross_batch_memory",
    "learnable_margin",
    "proxy_nca",
    "normalized_softmax",
    "proxy_anchor",
    "arcface",
    "cosface",
    "subcenter_arcface",
    "soft_triple",
]


def register_loss(name, layer=False):
    """Registers a loss class under `name`, so configs and `get` can name it.

    Args:
        name: str. The configuration name (lower case; `-` and `_` are interchangeable in `get`).
        layer: bool. The loss holds trainable weights (a `keras.layers.Layer` the model must
            own and call in `compute_loss`). Defaults to `False`.

    Returns:
        A class decorator that registers the class and returns it unchanged.

    Raises:
        ValueError: when `name` is taken by another class.

    Examples:
    >>> @register_loss("my_loss")  # doctest: +SKIP
    ... class MyLoss(keras_dml.losses.MetricLoss): ...
    """
    key = _key(name)

    def decorator(cls):
        if key in LOSSES and LOSSES[key] is not cls:
            raise ValueError(
                f"A loss named {key!r} is registered already ({LOSSES[key].__name__}). "
                f"Choose another name. Received: name={name!r}"
            )
        LOSSES[key] = cls
        if layer and key not in LAYER_LOSSES:
            LAYER_LOSSES.append(key)
        return cls

    return decorator


def list_losses(verbose=False):
    """Names of the registered losses, sorted.

    Args:
        verbose: bool. Return `{name: first docstring line}` instead. Defaults to `False`.

    Examples:
    >>> "margin" in list_losses()
    True
    """
    if verbose:
        return {name: _summary(LOSSES[name]) for name in sorted(LOSSES)}
    return sorted(LOSSES)


def _summary(cls):
    lines = (cls.__doc__ or "").strip().splitlines()
    return lines[0] if lines else ""


def _key(name):
    return str(name).strip().lower().replace("-", "_")


def _unknown(identifier):
    hint = did_you_mean(identifier, LOSSES)
    return ValueError(f"Unknown loss {identifier!r}.{hint} Known names: {sorted(LOSSES)}.")


def get(identifier, **kwargs):
    """Returns a loss instance from a name, a config dict or an instance.

    Args:
        identifier: one of
            - a registered name (`list_losses()` gives them all, `list_losses(verbose=True)`
              with a summary each; `-` and `_` and case are interchangeable), built with
              `**kwargs`;
            - a dict `{"name": <name>, **arguments}` (the form used in training configs);
            - a Keras serialized dict `{"class_name": ..., "config": ...}`;
            - a loss or loss-layer instance, returned unchanged.
        **kwargs: constructor arguments, merged over the dict's arguments.

    Returns:
        A `keras.losses.Loss` (usable in `model.compile(loss=...)`), or for the names in
        `LAYER_LOSSES` a `keras.layers.Layer` holding trainable weights, which the model must own:
        `EmbeddingModel.compile(loss=layer)` attaches it; other models call it in `compute_loss`.

    Raises:
        ValueError: for an unknown name or an unusable identifier; the message lists the names.

    Examples:
    >>> loss = get("triplet", margin=0.2, mining="batch-hard")
    >>> loss = get({"name": "margin", "beta": 1.2})
    >>> proxy_loss = get("proxy_nca", num_classes=100, embedding_dim=128)
    >>> arcface = get("arcface", num_classes=100, embedding_dim=128, margin=0.5)
    """
    if isinstance(identifier, (keras.losses.Loss, keras.layers.Layer)):
        if kwargs:
            raise ValueError(
                "Keyword arguments cannot be applied to a loss instance. "
                f"Received: identifier={identifier!r}, kwargs={kwargs}"
            )
        return identifier
    if isinstance(identifier, dict):
        if "class_name" in identifier:
            loss = keras.saving.deserialize_keras_object(identifier)
            if kwargs:
                loss = type(loss).from_config({**loss.get_config(), **kwargs})
            return loss
        arguments = dict(identifier)
        if "name" not in arguments:
            raise ValueError(
                "A loss config dict needs a 'name' key (or Keras' 'class_name'/'config'). "
                f"Known names: {sorted(LOSSES)}. Received: {identifier!r}"
            )
        name = arguments.pop("name")
        return get(name, **{**arguments, **kwargs})
    if isinstance(identifier, str):
        key = _key(identifier)
        if key not in LOSSES:
            raise _unknown(identifier)
        return LOSSES[key](**kwargs)
    raise ValueError(
        "Cannot interpret a loss from "
        f"{identifier!r}: expected a name ({sorted(LOSSES)}), a config dict or a loss instance."
    )
