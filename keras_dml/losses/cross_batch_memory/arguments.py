"""Checks of `CrossBatchMemory`'s arguments: the loss it can wrap, its miner, positive sizes."""

import inspect

import keras

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import get as get_loss
from keras_dml.miners.base import Miner, PairMiner, TripletMiner
from keras_dml.miners.registry import get as get_miner


def wrappable_loss(loss):
    """The pair loss `loss` resolves to; a one-line `ValueError` when XBM cannot wrap it."""
    resolved = get_loss(loss)
    fn = getattr(resolved, "fn", None)
    if not isinstance(resolved, MetricLoss) or "pair_mask" not in inspect.signature(fn).parameters:
        raise ValueError(
            f"CrossBatchMemory wraps a pair loss that takes `pair_mask` (contrastive, triplet, "
            f"margin, multi_similarity, binomial_deviance, ntxent, supcon, circle, "
            f"lifted_structure, tuplet_margin, snr_contrastive, fast_ap); "
            f"{type(resolved).__name__} builds its tuples from the batch alone. Received: "
            f"loss={loss!r}"
        )
    return resolved


def positive_int(name, value):
    """`value` as an int; a one-line `ValueError` unless it is a positive integer."""
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    return int(value)


def memory_miner(miner, inner_loss):
    """The miner of a cross-batch memory resolved: `None`, a `Miner`, or a pair-mask callable.

    Raises:
        ValueError: one line, for anything else, or a triplet miner for a loss that mines none.
    """
    if isinstance(miner, dict) and "class_name" in miner:
        miner = keras.saving.deserialize_keras_object(miner)
    elif isinstance(miner, (str, dict)):
        miner = get_miner(miner)
    if isinstance(miner, TripletMiner) and not isinstance(inner_loss.miner, TripletMiner):
        raise ValueError(
            f"A triplet miner replaces the wrapped loss's own triplet miner, and "
            f"{type(inner_loss).__name__} mines none (the triplet and margin losses do); give "
            f"it a pair miner instead. Received: miner={miner!r}"
        )
    known = isinstance(miner, (PairMiner, TripletMiner))
    if miner is not None and not known and (isinstance(miner, Miner) or not callable(miner)):
        raise ValueError(
            "`miner` must be None, a keras_dml miner (a name, a dict or an object) or a "
            "callable (labels, embeddings, ref_labels, ref_embeddings) -> bool [B, M]. "
            f"Received: miner={miner!r}"
        )
    return miner
