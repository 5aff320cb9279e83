"""`MetricLoss`: the `keras.losses.Loss` class of every in-batch metric loss function."""

import inspect

import keras

from keras_dml.miners.base import PairMiner
from keras_dml.miners.registry import get as get_miner
from keras_dml.pairs.reduction import propagate_nonfinite
from keras_dml.pairs.references import with_pairs
from keras_dml.utils.argument_config import ArgumentConfig

REDUCTION = "sum_over_batch_size"  # Keras' default: the scalar loss unchanged


class MetricLoss(ArgumentConfig, keras.losses.Loss):
    """A `keras.losses.Loss` over `(y_true=labels [B], y_pred=embeddings [B, D])`.

    It calls `fn(labels, embeddings, **fn_kwargs)` in float32; each keyword argument is also
    an attribute of the loss.

    Args:
        fn: callable. The pure loss function.
        name, reduction, dtype: `keras.losses.Loss`'s; `dtype` defaults to `"float32"`.
        miner: the miner `fn` takes, or, for a function with `pair_mask`, an optional pair
            miner whose pairs become the `pair_mask`.
        **fn_kwargs: keyword arguments of `fn`.
    """

    def __init__(self, fn, name=None, reduction=REDUCTION, dtype=None, miner=None, **fn_kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype or "float32")
        self.fn = fn
        self._fn_kwargs = fn_kwargs
        for key, value in fn_kwargs.items():
            setattr(self, key, value)
        self._mines_pairs = False
        if "miner" in inspect.signature(self.fn).parameters:
            self._fn_kwargs["miner"] = miner  # the subclass resolved its own miner
        elif miner is not None:
            miner = pair_miner_for(self.fn, miner, type(self).__name__)
            self._mines_pairs = True
        self.miner = miner

    @property
    def fn_kwargs(self):
        """The keyword arguments this loss passes to `fn` (a copy)."""
        return dict(self._fn_kwargs)

    def compute(self, y_true, y_pred, return_count=False, pair_mask=None, miner=None):
        """`fn` on the batch: the loss, or `(loss, num_valid)` with `return_count`.

        Args:
            pair_mask: optional bool tensor `[B, B]` or `ReferenceBlock`: the pairs allowed; a pair
                miner chooses among them.
            miner: optional miner for this call, in place of the one `fn` takes.
        """
        kwargs = dict(self._fn_kwargs)
        if miner is not None:
            kwargs["miner"] = miner
        if self._mines_pairs:
            mined = self.miner(y_pred, y_true, pair_mask=pair_mask).pair_mask()
            pair_mask = with_pairs(pair_mask, mined)
        if pair_mask is not None:
            kwargs["pair_mask"] = pair_mask
        return self.fn(y_true, y_pred, return_count=return_count, **kwargs)

    def call(self, y_true, y_pred):
        return propagate_nonfinite(self.compute(y_true, y_pred), y_pred)

    def loss_and_count(self, y_true, y_pred):
        """`(loss, num_valid)` as float32 / int32; call it instead of the loss."""
        loss, count = self.compute(y_true, y_pred, return_count=True)
        return propagate_nonfinite(loss, y_pred), count


def pair_miner_for(fn, miner, loss_name):
    """The pair miner `miner` resolves to, for a loss function `fn` that takes `pair_mask`.

    Raises:
        ValueError: one line, when `fn` takes no `pair_mask` or `miner` selects triplets.
    """
    miner = get_miner(miner)
    if "pair_mask" not in inspect.signature(fn).parameters:
        raise ValueError(
            f"{loss_name} builds its tuples from the batch alone and takes no miner; pass "
            f"miner=None. Received: miner={miner!r}"
        )
    if not isinstance(miner, PairMiner):
        raise ValueError(
            f"{loss_name} is computed on pairs, so it takes a pair miner (multi_similarity, "
            f"all_pairs); triplet miners serve the triplet and margin losses. Received: "
            f"miner={miner!r}"
        )
    return miner


def check_positive(name, value, hint):
    """`value` as a float; a one-line `ValueError` naming `name` and the `hint` unless > 0."""
    if not float(value) > 0.0:
        raise ValueError(f"`{name}` must be > 0 ({hint}). Received: {name}={value}")
    return float(value)
