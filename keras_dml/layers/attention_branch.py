"""`AttentionBranch`: the M per-learner attention modules A'_m of ABE (Kim et al., ECCV 2018)."""

import keras
from keras import ops

INTERPOLATIONS = ("bilinear", "nearest")


@keras.saving.register_keras_serializable(package="keras_dml")
class AttentionBranch(keras.layers.Layer):
    """M attention modules: per-learner 1x1 convolutions + sigmoid over a shared attention trunk.

    Args:
        num_learners: int. Number of learners M. Defaults to `1`.
        channels: int. Channels of each mask (those of `S(x)`). Defaults to `None`: taken from
            `features` (required when called on the trunk output alone).
        activation: str or callable. Mask activation. Defaults to `"sigmoid"`.
        use_bias: bool. Bias per mask channel. Defaults to `True`.
        kernel_initializer: initializer of each 1x1 kernel. Defaults to `"glorot_uniform"`.
        bias_initializer: initializer of each bias. Defaults to `"zeros"`.
        interpolation: `"bilinear"` or `"nearest"`, to resize masks. Defaults to `"bilinear"`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: the trunk output `C(S(x))` `[N, h', w', C_trunk]`, or `[features, trunk_features]`
            with `features = S(x)` `[N, h, w, channels]`.
        learner: int or `None`. Compute only this learner's module. Defaults to `None`.

    Returns:
        Masks `[N, M, h', w', channels]` (trunk output alone) or attended features
        `S(x) * A_m(S(x))` `[N, M, h, w, channels]`.

    References:
        Kim, Goyal, Chawla, Lee, Kwon, "Attention-based Ensemble for Deep Metric Learning",
        ECCV 2018: Eq. 7 (attended features), Sec. 4 and Fig. 3 (A_m = 1x1 conv on the
        inception 4a-4e trunk, sigmoid).
    """

    def __init__(
        self,
        num_learners=1,
        channels=None,
        activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        interpolation="bilinear",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if int(num_learners) < 1:
            raise ValueError(f"`num_learners` must be >= 1. Received: num_learners={num_learners}")
        if channels is not None and int(channels) < 1:
            raise ValueError(f"`channels` must be a positive int. Received: channels={channels}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"`interpolation` must be one of {INTERPOLATIONS}. "
                f"Received: interpolation={interpolation!r}"
            )
        self.num_learners = int(num_learners)
        self.channels = None if channels is None else int(channels)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.interpolation = interpolation

    @staticmethod
    def _split_shapes(input_shape):
        """`(features_shape or None, trunk_shape)` from a single shape or a pair of shapes."""
        if (
            isinstance(input_shape, (list, tuple))
            and input_shape
            and isinstance(input_shape[0], (list, tuple))
        ):
            if len(input_shape) != 2:
                raise ValueError(
                    "AttentionBranch takes the trunk output or [features, trunk_features]. "
                    f"Received {len(input_shape)} inputs."
                )
            return tuple(input_shape[0]), tuple(input_shape[1])
        return None, tuple(input_shape)

    def build(self, input_shape):
        features_shape, trunk_shape = self._split_shapes(input_shape)
        if len(trunk_shape) != 4:
            raise ValueError(
                f"The trunk features must be 4-D [N, h, w, C]. Received shape {trunk_shape}."
            )
        if features_shape is not None:
            if len(features_shape) != 4:
                raise ValueError(
                    f"`features` must be 4-D [N, h, w, C]. Received shape {features_shape}."
                )
            if self.channels is None:
                self.channels = int(features_shape[-1])
            elif self.channels != features_shape[-1]:
                raise ValueError(
                    f"`channels`={self.channels} differs from the channels of `features` "
                    f"({features_shape[-1]}): the masks multiply S(x) element-wise (Eq. 7)."
                )
        if self.channels is None:
            raise ValueError(
                "Pass `channels` (the channels of S(x)) or call the layer on "
                "[features, trunk_features] so it can infer them."
            )
        trunk_channels = int(trunk_shape[-1])
        self.kernels = [
            self.add_weight(
                shape=(trunk_channels, self.channels),
                initializer=_fresh(self.kernel_initializer),
                name=f"learner_{m}_kernel",
            )
            for m in range(self.num_learners)
        ]
        self.biases = []
        if self.use_bias:
            self.biases = [
                self.add_weight(
                    shape=(self.channels,),
                    initializer=_fresh(self.bias_initializer),
                    name=f"learner_{m}_bias",
                )
                for m in range(self.num_learners)
            ]
        self.built = True

    def _check_learner(self, learner):
        if learner is None:
            return list(range(self.num_learners))
        if not 0 <= int(learner) < self.num_learners:
            raise ValueError(
                f"`learner` must be in [0, {self.num_learners}). Received: learner={learner}"
            )
        return [int(learner)]

    def masks(self, trunk_features, learner=None):
        """Masks `A'_m(trunk_features)` `[N, M, h', w', channels]` (M = 1 when `learner` set)."""
        learners = self._check_learner(learner)
        kernel = ops.stack([self.kernels[m].value for m in learners], axis=0)
        logits = ops.einsum("nhwc,mcd->nmhwd", trunk_features, ops.cast(kernel, self.compute_dtype))
        if self.use_bias:
            bias = ops.stack([self.biases[m].value for m in learners], axis=0)
            logits = logits + ops.cast(bias, self.compute_dtype)[None, :, None, None, :]
        return self.activation(logits)

    def _resize(self, masks, size):
        shape = ops.shape(masks)
        if tuple(masks.shape[2:4]) == tuple(size):
            return masks
        flat = ops.reshape(masks, (-1, shape[2], shape[3], self.channels))
        flat = ops.image.resize(flat, size, interpolation=self.interpolation)
        return ops.reshape(flat, (-1, shape[1], size[0], size[1], self.channels))

    def call(self, inputs, learner=None):
        if isinstance(inputs, (list, tuple)):
            features, trunk_features = inputs
        else:
            features, trunk_features = None, inputs
        masks = self.masks(trunk_features, learner=learner)
        if features is not None:
            masks = self._resize(masks, tuple(features.shape[1:3]))
            masks = ops.expand_dims(features, 1) * masks
        if learner is not None:
            masks = ops.squeeze(masks, axis=1)
        return masks

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_learners": self.num_learners,
                "channels": self.channels,
                "activation": keras.activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "interpolation": self.interpolation,
            }
        )
        return config


def _fresh(initializer):
    """A new instance of `initializer`, so that each learner's module gets its own values."""
    return keras.initializers.deserialize(keras.initializers.serialize(initializer))
