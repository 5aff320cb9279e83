"""Base class for the `keras.losses.Loss` wrappers of the in-batch metric losses."""

import inspect

import keras

from keras_dml.miners.base import PairMiner
from keras_dml.miners.registry import get as get_miner
from keras_dml.pairs.reduction import propagate_nonfinite
from keras_dml.utils.argument_config import ArgumentConfig


class MetricLoss(ArgumentConfig, keras.losses.Loss):
    """A `keras.losses.Loss` over `(y_true=labels [B], y_pred=embeddings [B, D])`.

    Wraps a pure loss function `fn(labels, embeddings, return_count=False, **fn_kwargs)` in the
    style of Keras' `LossFunctionWrapper`. `call` returns the scalar loss, so
    `model.compile(loss=...)` works; the loss is always computed in float32 (mixed precision
    safe). Per-sample `sample_weight` has no meaning for an in-batch pair loss; Keras would apply
    it to the scalar as a plain factor.

    Subclasses pass their function and its keyword arguments; `ArgumentConfig` serialises their
    constructor's arguments, so none writes `get_config`.

    Miners: a function that mines itself takes `miner=` (triplet, margin, multi-similarity); the
    subclass resolves its miner and `fn` receives it. For a function that takes `pair_mask`,
    `miner` is a pair miner (`keras_dml.miners.PairMiner`, a name or a dict) whose chosen pairs
    become the `pair_mask` (within any `pair_mask` a wrapper passes), as a pair loss with a miner
    in pytorch-metric-learning.

    Args:
        fn: callable. The pure loss function.
        name: str. Name of the loss instance.
        reduction: str. Keras reduction applied to the (already scalar) loss. Defaults to
            `"sum_over_batch_size"`, which leaves the scalar unchanged.
        dtype: dtype of the computation. Defaults to `"float32"`.
        miner: the miner `fn` takes, or for a function that takes `pair_mask` an optional pair
            miner. Defaults to `None`.
        **fn_kwargs: keyword arguments forwarded to `fn`.

    Raises:
        ValueError: when `miner` is not a pair miner, or `fn` takes neither `miner` nor
            `pair_mask`.
    """

    def __init__(
        self, fn, name=None, reduction="sum_over_batch_size", dtype=None, miner=None, **fn_kwargs
    ):
        super().__init__(name=name, reduction=reduction, dtype=dtype or "float32")
        self.fn = fn
        self._fn_kwargs = fn_kwargs
        self._mines_pairs = False
        if "miner" in inspect.signature(fn).parameters:
            self._fn_kwargs["miner"] = miner  # the subclass resolved its own miner
        elif miner is not None:
            miner = pair_miner_for(fn, miner, type(self).__name__)
            self._mines_pairs = True
        self.miner = miner

    @property
    def fn_kwargs(self):
        """The keyword arguments this loss passes to `fn` (a copy), e.g. for a wrapper."""
        return dict(self._fn_kwargs)

    def compute(self, y_true, y_pred, return_count=False, pair_mask=None, miner=None):
        """`fn` on the batch, with this loss's arguments and its pair miner's pairs.

        Args:
            y_true: int tensor `[B]`. Class labels.
            y_pred: float tensor `[B, D]`. Embeddings.
            return_count: bool. Also return the int32 count of valid terms.
            pair_mask: optional bool tensor `[B, B]`: the pairs allowed (e.g. a cross-batch
                memory's); a pair miner chooses among them.
            miner: optional miner for this call in place of the one `fn` takes (a loss that
                mines itself), e.g. a cross-batch memory's triplet miner.

        Returns:
            What `fn` returns: the loss, or `(loss, num_valid)`.
        """
        kwargs = dict(self._fn_kwargs)
        if miner is not None:
            kwargs["miner"] = miner
        if self._mines_pairs:
            pair_mask = self.miner(y_pred, y_true, pair_mask=pair_mask).pair_mask()
        if pair_mask is not None:
            kwargs["pair_mask"] = pair_mask
        return self.fn(y_true, y_pred, return_count=return_count, **kwargs)

    def call(self, y_true, y_pred):
        return propagate_nonfinite(self.compute(y_true, y_pred), y_pred)

    def loss_and_count(self, y_true, y_pred):
        """Returns `(loss, num_valid)`: the float32 loss and the int32 count of valid terms.

        Use it where the number of valid pairs / triplets should be logged as a metric, e.g. in
        a model's `compute_loss` or `train_step`. For stochastic mining it draws a new sample,
        so call it instead of (not in addition to) the loss.

        Args:
            y_true: int tensor `[B]`. Class labels.
            y_pred: float tensor `[B, D]`. Embeddings.

        Returns:
            Tuple of a float32 scalar and an int32 scalar.
        """
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
