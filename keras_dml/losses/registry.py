"""The loss registry: names to loss classes (`@register_loss`), configurations to instances."""

import inspect

import keras

from keras_dml.utils.registry import Registry, normal_name

LOSSES = Registry(
    "loss", plural="losses", hint=" Register your own with @keras_dml.losses.register_loss."
)


def register_loss(name):
    """Class decorator registering a loss under `name` for configurations and `get`."""
    return LOSSES.register(name)


def list_losses(verbose=False):
    """Names of the registered losses, sorted (`{name: first docstring line}` if verbose)."""
    return LOSSES.describe() if verbose else LOSSES.names()


def get(identifier, **kwargs):
    """A loss from a registered name (built with `**kwargs`), a `{"name": ..., **arguments}` dict,
    a Keras config or an instance (returned unchanged).

    Returns:
        A `keras.losses.Loss`, or a `keras.layers.Layer` for a loss that holds weights.

    Raises:
        ValueError: for an unknown name or an unusable identifier; the message lists the names.

    Examples:
    >>> loss = get("triplet", margin=0.2, mining="batch-hard")
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
                f"Known names: {LOSSES.names()}. Received: {identifier!r}"
            )
        name = arguments.pop("name")
        return get(name, **{**arguments, **kwargs})
    if isinstance(identifier, str):
        key = LOSSES.key(identifier)
        if kwargs.get("miner") is not None and not _takes_miner(LOSSES.get(key)):
            takers = [name for name, cls in LOSSES.items() if _takes_miner(cls)]
            raise ValueError(
                f"The {key} loss takes no miner (it builds its tuples itself or learns class "
                f"vectors); the losses that do: {takers}. Received: miner={kwargs['miner']!r}"
            )
        return LOSSES.get(key)(**kwargs)
    raise ValueError(
        "Cannot interpret a loss from "
        f"{identifier!r}: expected a name ({LOSSES.names()}), a config dict or a loss instance."
    )


def _takes_miner(cls):
    return "miner" in inspect.signature(cls.__init__).parameters


def loss_class(name):
    """The class registered under `name` (`-`, `_` and case interchangeable), or `None`."""
    key = normal_name(name)
    return LOSSES.get(key) if key in LOSSES else None
