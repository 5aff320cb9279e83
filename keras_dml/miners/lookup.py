"""The miner table and its look-ups: names and config dicts to miner instances."""

import keras

from keras_dml.miners.all_pairs import AllPairsMiner
from keras_dml.miners.all_triplets import AllTripletsMiner
from keras_dml.miners.base import Miner
from keras_dml.miners.batch_hard import BatchHardMiner
from keras_dml.miners.closest import ClosestNegativeMiner
from keras_dml.miners.distance_weighted import DistanceWeightedMiner
from keras_dml.miners.multi_similarity import MultiSimilarityMiner
from keras_dml.miners.random_negative import RandomNegativeMiner
from keras_dml.miners.semi_hard import SemiHardMiner
from keras_dml.utils.suggestions import did_you_mean

# Registered name -> miner class.
MINERS = {
    "all_pairs": AllPairsMiner,
    "all_triplets": AllTripletsMiner,
    "batch_hard": BatchHardMiner,
    "closest": ClosestNegativeMiner,
    "distance_weighted": DistanceWeightedMiner,
    "multi_similarity": MultiSimilarityMiner,
    "random": RandomNegativeMiner,
    "semi_hard": SemiHardMiner,
}


def list_miners():
    """Names of the registered miners, sorted.

    Examples:
    >>> "semi_hard" in list_miners()
    True
    """
    return sorted(MINERS)


def get(identifier, **kwargs):
    """Returns a miner from a name, a config dict or an instance.

    Args:
        identifier: a registered name (`list_miners()`; `-`, `_` and case interchangeable),
            built with `**kwargs`; a dict `{"name": <name>, **arguments}` (the form of run
            configurations); a Keras serialised dict `{"class_name": ..., "config": ...}`; or
            a `Miner`, returned unchanged.
        **kwargs: constructor arguments, merged over the dict's arguments.

    Returns:
        A `keras_dml.miners.Miner`.

    Raises:
        ValueError: for an unknown name or anything else; the message lists the names.

    Examples:
    >>> get("semi-hard")
    SemiHardMiner()
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
        key = identifier.strip().lower().replace("-", "_")
        if key not in MINERS:
            hint = did_you_mean(identifier, MINERS)
            raise ValueError(f"Unknown miner {identifier!r}.{hint} Known names: {list_miners()}.")
        return MINERS[key](**kwargs)
    raise ValueError(
        f"Cannot interpret a miner from {identifier!r} (with {kwargs or 'no arguments'}): "
        f"expected a name ({list_miners()}), a {{'name': ...}} dict or a Miner."
    )
