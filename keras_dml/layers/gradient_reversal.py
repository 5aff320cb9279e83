"""`GradientReversal`: identity forward, gradient multiplied by `-lambda_` backward."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_dml")
class GradientReversal(keras.layers.Layer):
    """Identity in the forward pass; multiplies the incoming gradient by `-lambda_` backward.

    Placed between a feature generator and an adversary, the adversary minimises its loss while
    the generator, receiving the reversed gradient, maximises it, in one forward/backward pass
    and without alternating updates (Ganin et al.). A-BIER places it between the learner
    embeddings and the adversarial regressors (Eq. 7-9), so that the regressors make two learners
    as similar as possible and the learners make themselves as dissimilar as possible.

    The layer needs no registered custom gradient: it computes
    `y = -lambda_ * x + stop_gradient((1 + lambda_) * x)`, whose value is `x` and whose derivative
    is `-lambda_`. It therefore works on every Keras backend, under `tf.function`, XLA and export.
    The forward value equals `x` up to one floating-point rounding of the two terms.

    Args:
        lambda_: float. Factor of the reversed gradient; `0.0` blocks the gradient, `1.0` flips
            its sign (the setting of A-BIER, which scales the adversarial loss with
            `lambda_div` instead). Defaults to `1.0`.
        **kwargs: standard `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: a tensor of any shape.

    Returns:
        A tensor equal to `inputs` (same shape and dtype).

    Examples:
    >>> import numpy as np
    >>> layer = GradientReversal(lambda_=0.5)
    >>> y = layer(np.ones((2, 3), "float32"))  # forward: identity
    >>> # backward: d(sum(y))/dx == -0.5 everywhere

    References:
        Ganin and Lempitsky, "Unsupervised Domain Adaptation by Backpropagation", ICML 2015.
        Opitz et al., "Deep Metric Learning with BIER: Boosting Independent Embeddings
        Robustly", TPAMI 2020, Sec. 3.2.2 (Eq. 7-9).
    """

    def __init__(self, lambda_=1.0, **kwargs):
        super().__init__(**kwargs)
        try:
            lambda_ = float(lambda_)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"`lambda_` must be a number. Received: lambda_={lambda_!r}"
            ) from error
        if lambda_ < 0.0:
            raise ValueError(
                "`lambda_` must be >= 0 (the layer adds the minus sign itself). "
                f"Received: lambda_={lambda_}"
            )
        self.lambda_ = lambda_
        self.supports_masking = True

    def call(self, inputs):
        inputs = ops.convert_to_tensor(inputs)
        factor = ops.cast(self.lambda_, inputs.dtype)
        return -factor * inputs + ops.stop_gradient((1.0 + factor) * inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"lambda_": self.lambda_})
        return config
