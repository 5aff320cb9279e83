"""The loss table and its look-ups: names to loss classes, configs to loss instances.

The table starts empty; `keras_dml.losses.registry` fills it with the built-in losses when the
`keras_dml.losses` package is imported, and `register_loss` adds others. Modules that resolve a
loss from inside the loss family (class-based losses, cross-batch memory) import this module,
which imports no loss, so the family's imports point one way.
"""

import inspect

import keras

from keras_dml.utils.suggestions import did_you_mean

# Registered name -> loss class.
LOSSES = {}

# Losses that hold weights (trainable, or XBM's memory): `keras.layers.Layer`s the model must own.
LAYER_LOSSES = []


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
        if kwargs.get("miner") is not None and not _takes_miner(LOSSES[key]):
            takers = sorted(name for name, cls in LOSSES.items() if _takes_miner(cls))
            raise ValueError(
                f"The {key} loss takes no miner (it builds its tuples itself or learns class "
                f"vectors); the losses that do: {takers}. Received: miner={kwargs['miner']!r}"
            )
        return LOSSES[key](**kwargs)
    raise ValueError(
        "Cannot interpret a loss from "
        f"{identifier!r}: expected a name ({sorted(LOSSES)}), a config dict or a loss instance."
    )


def _takes_miner(cls):
    return "miner" in inspect.signature(cls.__init__).parameters


def loss_class(name):
    """The class registered under `name` (`-`, `_` and case interchangeable), or `None`."""
    return LOSSES.get(_key(name))
