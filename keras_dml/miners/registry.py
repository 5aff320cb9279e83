"""The miner registry: names and configurations to miner instances (`@register_miner`)."""

import keras

from keras_dml.miners.base import Miner
from keras_dml.utils.registry import Registry

MINERS = Registry("miner")


def register_miner(name):
    """Class decorator registering a miner under `name` for configurations and `get`."""
    return MINERS.register(name)


def list_miners():
    """Names of the registered miners, sorted."""
    return MINERS.names()


def get(identifier, **kwargs):
    """A miner from a registered name, a `{"name": ...}` dict, a Keras config or a miner.

    Raises:
        ValueError: for an unknown name or anything else; the message lists the names.

    Examples:
    >>> get({"name": "multi_similarity", "epsilon": 0.2})
    MultiSimilarityMiner(epsilon=0.2)
    """
    if isinstance(identifier, Miner) and not kwargs:
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:
        miner = keras.saving.deserialize_keras_object(identifier)
        if isinstance(miner, Miner) and not kwargs:
            return miner
    elif isinstance(identifier, dict) and "name" in identifier:
        arguments = dict(identifier)
        return get(arguments.pop("name"), **{**arguments, **kwargs})
    elif isinstance(identifier, str):
        return MINERS.get(identifier)(**kwargs)
    raise ValueError(
        f"Cannot interpret a miner from {identifier!r} (with {kwargs or 'no arguments'}): "
        f"expected a name ({list_miners()}), a {{'name': ...}} dict or a Miner."
    )
