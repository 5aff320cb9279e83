"""`LocalResponseNormalization`: Caffe's across-channel LRN, used by the original GoogLeNet."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_dml")
class LocalResponseNormalization(keras.layers.Layer):
    """Across-channel local response normalisation with Caffe's definition.

    `y_c = x_c / (bias + alpha / size * sum_{c' in window(c)} x_{c'}^2) ** beta`.

    Args:
        size: int. Odd number of channels in the window. Defaults to `5`.
        alpha: float. Scale of the squared sum (divided by `size`). Defaults to `1e-4`.
        beta: float. Exponent. Defaults to `0.75`.
        bias: float. Additive constant `k`. Defaults to `1.0`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: tensor `[N, H, W, C]`.

    Returns:
        Tensor of the same shape.

    References:
        Krizhevsky et al., "ImageNet Classification with Deep Convolutional Neural Networks",
        NIPS 2012 (Sec. 3.3).
    """

    def __init__(self, size=5, alpha=1e-4, beta=0.75, bias=1.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or size < 1 or size % 2 == 0:
            raise ValueError(f"`size` must be a positive odd integer. Received: size={size}")
        if bias <= 0:
            raise ValueError(f"`bias` must be positive. Received: bias={bias}")
        self.size = size
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.bias = float(bias)

    def call(self, inputs):
        squared = ops.square(inputs)
        half = self.size // 2
        padded = ops.pad(squared, [[0, 0], [0, 0], [0, 0], [half, half]])
        channels = ops.shape(inputs)[-1]
        window_sum = padded[..., 0:channels]
        for offset in range(1, self.size):
            window_sum = window_sum + padded[..., offset : offset + channels]
        scale = self.bias + (self.alpha / self.size) * window_sum
        return inputs * ops.power(scale, -self.beta)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"size": self.size, "alpha": self.alpha, "beta": self.beta, "bias": self.bias}
        )
        return config
