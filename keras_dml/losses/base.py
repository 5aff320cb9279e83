"""Base class for the `keras.losses.Loss` wrappers of the in-batch metric losses."""

import keras

from keras_dml.losses.reduction import propagate_nonfinite


class MetricLoss(keras.losses.Loss):
    """A `keras.losses.Loss` over `(y_true=labels [B], y_pred=embeddings [B, D])`.

    Wraps a pure loss function `fn(labels, embeddings, return_count=False, **fn_kwargs)` in the
    style of Keras' `LossFunctionWrapper`. `call` returns the scalar loss, so
    `model.compile(loss=...)` works; the loss is always computed in float32 (mixed precision
    safe). Per-sample `sample_weight` has no meaning for an in-batch pair loss; Keras would apply
    it to the scalar as a plain factor.

    Subclasses pass their function and its keyword arguments and implement `get_config` with
    their constructor arguments.

    Args:
        fn: callable. The pure loss function.
        name: str. Name of the loss instance.
        reduction: str. Keras reduction applied to the (already scalar) loss. Defaults to
            `"sum_over_batch_size"`, which leaves the scalar unchanged.
        dtype: dtype of the computation. Defaults to `"float32"`.
        **fn_kwargs: keyword arguments forwarded to `fn`.
    """

    def __init__(self, fn, name=None, reduction="sum_over_batch_size", dtype=None, **fn_kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype or "float32")
        self.fn = fn
        self._fn_kwargs = fn_kwargs

    @property
    def fn_kwargs(self):
        """The keyword arguments this loss passes to `fn` (a copy), e.g. for a wrapper."""
        return dict(self._fn_kwargs)

    def call(self, y_true, y_pred):
        loss = self.fn(y_true, y_pred, return_count=False, **self._fn_kwargs)
        return propagate_nonfinite(loss, y_pred)

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
        loss, count = self.fn(y_true, y_pred, return_count=True, **self._fn_kwargs)
        return propagate_nonfinite(loss, y_pred), count
