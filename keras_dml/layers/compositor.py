"""`Compositor`: DCML's learnable, signed re-weighting of K sub-embeddings, M at a time."""

import keras
from keras import ops


def straight_through_sign(x):
    """`sgn(tanh(x))` (+1 where `x > 0`, else -1) forward, the gradient of `tanh(x)` backward.

    References:
        DCML (Zheng et al., CVPR 2021), Eq. (5); Bengio, Léonard, Courville, "Estimating or
        Propagating Gradients Through Stochastic Neurons", 2013.
    """
    soft = ops.tanh(x)
    hard = ops.where(x > 0, ops.ones_like(soft), -ops.ones_like(soft))
    return soft + ops.stop_gradient(hard - soft)


@keras.saving.register_keras_serializable(package="keras_dml")
class Compositor(keras.layers.Layer):
    """M compositors over K sub-embeddings, computed together (DCML Eq. 4-5).

    Args:
        num_compositors: int. M, the number of compositors. Defaults to `8`.
        num_learners: int. K, the sub-embeddings each compositor weights. Defaults to `4`.
        kernel_initializer: initializer of both kernels. Defaults to `RandomNormal(0, 1)`.
        bias_initializer: initializer of both biases. Defaults to `RandomNormal(0, 1)`.
        **kwargs: standard `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        inputs: float tensor `[N, D]`. The concatenated sub-embeddings.

    Returns:
        float tensor `[N, M, K]`: the signed weights `c_m^k = t_m^k * s_m^k`.

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Sec. 3.2,
        Eq. (4) (weighting score), Eq. (5) (sign score with straight-through gradient), Fig. 2.
    """

    def __init__(
        self,
        num_compositors=8,
        num_learners=4,
        kernel_initializer=None,
        bias_initializer=None,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        for name, value in (("num_compositors", num_compositors), ("num_learners", num_learners)):
            if int(value) != value or int(value) < 1:
                raise ValueError(f"`{name}` must be a positive int. Received: {name}={value}")
        self.num_compositors = int(num_compositors)
        self.num_learners = int(num_learners)
        standard_normal = {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 1.0}}
        self.kernel_initializer = keras.initializers.get(kernel_initializer or standard_normal)
        self.bias_initializer = keras.initializers.get(bias_initializer or standard_normal)

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError(
                f"Compositor needs a known input size. Received: input_shape={input_shape}"
            )
        units = self.num_compositors * self.num_learners
        self.weighting_kernel = self.add_weight(
            name="weighting_kernel", shape=(input_dim, units), initializer=self.kernel_initializer
        )
        self.weighting_bias = self.add_weight(
            name="weighting_bias", shape=(units,), initializer=self.bias_initializer
        )
        self.sign_kernel = self.add_weight(
            name="sign_kernel", shape=(input_dim, units), initializer=self.kernel_initializer
        )
        self.sign_bias = self.add_weight(
            name="sign_bias", shape=(units,), initializer=self.bias_initializer
        )

    def _dense(self, inputs, kernel, bias):
        outputs = ops.matmul(inputs, kernel) + bias
        return ops.reshape(outputs, (-1, self.num_compositors, self.num_learners))

    def scores(self, inputs):
        """`[N, M, K]` `weighting_logits`, `weighting_scores`, `sign_scores` and `weights`."""
        inputs = ops.cast(inputs, self.compute_dtype)
        if not self.built:
            self.build(inputs.shape)
        logits = self._dense(inputs, self.weighting_kernel, self.weighting_bias)
        weighting = ops.softmax(logits, axis=-1)
        signs = straight_through_sign(self._dense(inputs, self.sign_kernel, self.sign_bias))
        return {
            "weighting_logits": logits,
            "weighting_scores": weighting,
            "sign_scores": signs,
            "weights": weighting * signs,
        }

    def call(self, inputs):
        return self.scores(inputs)["weights"]

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.num_compositors, self.num_learners)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_compositors=self.num_compositors,
            num_learners=self.num_learners,
            kernel_initializer=keras.initializers.serialize(self.kernel_initializer),
            bias_initializer=keras.initializers.serialize(self.bias_initializer),
        )
        return config
