"""`ImageNormalization`: raw pixels in [0, 255] to the input range a backbone was trained with."""

import keras
import numpy as np
from keras import ops

# Per-channel statistics in RGB order and pixel units ([0, 255]); `y = (x - mean) / std`, then the
# channel axis is reversed when `reverse_channels` is true (RGB -> BGR).
_IMAGENET_MEAN_RGB = (0.485, 0.456, 0.406)
_IMAGENET_STD_RGB = (0.229, 0.224, 0.225)
_PRESETS = {
    # keras.applications.{resnet50,vgg16}.preprocess_input: RGB -> BGR, subtract the ImageNet
    # mean in BGR order (103.939, 116.779, 123.68), no scaling.
    "caffe": ((123.68, 116.779, 103.939), (1.0, 1.0, 1.0), True),
    # torchvision / keras `mode="torch"`: x / 255, then ImageNet mean and std.
    "torch": (
        tuple(255.0 * m for m in _IMAGENET_MEAN_RGB),
        tuple(255.0 * s for s in _IMAGENET_STD_RGB),
        False,
    ),
    # keras.applications.mobilenet_v2.preprocess_input / Inception: x / 127.5 - 1.
    "tf": ((127.5,), (127.5,), False),
    "none": ((0.0,), (1.0,), False),
}
MODES = (*_PRESETS, "custom")


def _as_float_tuple(values, name):
    if values is None:
        return None
    if isinstance(values, (int, float)):
        values = (values,)
    values = tuple(float(v) for v in np.asarray(values, dtype="float64").reshape(-1))
    if not values:
        raise ValueError(f"`{name}` must hold at least one value. Received: {name}={values}")
    return values


@keras.saving.register_keras_serializable(package="keras_dml")
class ImageNormalization(keras.layers.Layer):
    """Normalises raw pixels in [0, 255] the way a pretrained backbone expects.

    Args:
        mode: str. `"caffe"`, `"torch"`, `"tf"`, `"none"` or `"custom"`. Defaults to `"caffe"`.
        mean: float or sequence. `"custom"`: per-channel mean in pixels, RGB. Defaults to `None`.
        std: float or sequence. `"custom"`: per-channel std in pixels. Defaults to `None`.
        reverse_channels: bool. `"custom"`: RGB -> BGR after normalising. Defaults to `None`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: tensor `[N, H, W, C]` of raw pixels in [0, 255], float or integer.

    Returns:
        `(x - mean) / std`, channels optionally reversed, in the compute dtype.

    Raises:
        ValueError: an unknown mode, `mean`/`std` with a preset mode, a `std` <= 0, or
            statistics whose length does not match the channel count.

    Examples:
    >>> import numpy as np
    >>> keras.ops.convert_to_numpy(ImageNormalization("tf")(np.array([[[[0.0, 127.5, 255.0]]]])))
    array([[[[-1.,  0.,  1.]]]], dtype=float32)
    """

    def __init__(self, mode="caffe", mean=None, std=None, reverse_channels=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError(
                f"Unknown normalisation mode. Expected one of {list(MODES)}. "
                f"Received: mode={mode!r}"
            )
        if mode != "custom" and (mean is not None or std is not None or reverse_channels):
            raise ValueError(
                "`mean`, `std` and `reverse_channels` can only be set with mode='custom'; the "
                f"preset modes fix them. Received: mode={mode!r}, mean={mean}, std={std}, "
                f"reverse_channels={reverse_channels}"
            )
        self.mode = mode
        self.mean = _as_float_tuple(mean, "mean")
        self.std = _as_float_tuple(std, "std")
        self.reverse_channels = None if reverse_channels is None else bool(reverse_channels)
        if mode == "custom":
            stats = (self.mean or (0.0,), self.std or (1.0,), bool(reverse_channels))
        else:
            stats = _PRESETS[mode]
        if min(stats[1]) <= 0.0:
            raise ValueError(f"`std` must be positive. Received: std={stats[1]}")
        if len(stats[0]) > 1 and len(stats[1]) > 1 and len(stats[0]) != len(stats[1]):
            raise ValueError(
                "`mean` and `std` must have the same length (or one value each). "
                f"Received: mean={stats[0]}, std={stats[1]}"
            )
        self._mean_values, self._std_values, self._reverse = stats

    def build(self, input_shape):
        channels = input_shape[-1]
        for name, values in (("mean", self._mean_values), ("std", self._std_values)):
            if len(values) > 1 and channels is not None and len(values) != channels:
                raise ValueError(
                    f"ImageNormalization(mode={self.mode!r}) has {len(values)} `{name}` values "
                    f"but the input has {channels} channels; the preset modes expect RGB images "
                    f"(3 channels), use mode='tf', 'none' or 'custom' otherwise. "
                    f"Received: input_shape={tuple(input_shape)}"
                )
        self.built = True

    def call(self, inputs):
        x = ops.cast(inputs, self.compute_dtype)
        mean = ops.convert_to_tensor(np.asarray(self._mean_values), dtype=self.compute_dtype)
        inv_std = ops.convert_to_tensor(
            1.0 / np.asarray(self._std_values, dtype="float64"), dtype=self.compute_dtype
        )
        x = (x - mean) * inv_std
        if self._reverse:
            x = ops.flip(x, axis=-1)
        return x

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "mode": self.mode,
                "mean": None if self.mean is None else list(self.mean),
                "std": None if self.std is None else list(self.std),
                "reverse_channels": self.reverse_channels,
            }
        )
        return config
