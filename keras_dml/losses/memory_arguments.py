"""Checks of `CrossBatchMemory`'s arguments: the loss it can wrap, positive sizes."""

import inspect

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.loss_lookup import get as get_loss


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
