"""`GradientReversal`: identity forward, gradient multiplied by `-lambda_` backward."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_dml")
class GradientReversal(keras.layers.Layer):
    """Identity in the forward pass; multiplies the incoming gradient by `-lambda_` backward.

    Args:
        lambda_: float. Factor of the reversed gradient (`0.0` blocks it). Defaults to `1.0`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: a tensor of any shape.

    Returns:
        A tensor equal to `inputs`.

    References:
        Ganin and Lempitsky, "Unsupervised Domain Adaptation by Backpropagation", ICML 2015;
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 3.2.2 (Eq. 7-9).
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
        # Value x, derivative -lambda_, without a custom gradient: works on every backend.
        return -factor * inputs + ops.stop_gradient((1.0 + factor) * inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"lambda_": self.lambda_})
        return config
