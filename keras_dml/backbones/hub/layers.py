"""Layers that put a keras-hub backbone's graph inside a keras-dml model and save it."""

import importlib
import inspect

import keras
import numpy as np
from keras import ops

# Index tensors keras-hub layers create in `build` (a ViT's `position_ids`). Held as NumPy arrays,
# they become constants of a traced graph instead of captured inputs (an ONNX graph input).
_INDEX_ATTRIBUTES = ("position_ids",)
# Arguments every `keras.layers.Layer` takes besides its own.
_LAYER_ARGUMENTS = ("name", "trainable", "dtype", "autocast", "input_dim", "input_shape")


def _class_of(path):
    module_name, _, class_name = path.rpartition(".")
    if not module_name.startswith("keras_hub."):
        raise ValueError(
            f"KerasHubLayer wraps keras-hub layers only. Received: layer class {path!r}"
        )
    return getattr(importlib.import_module(module_name), class_name)


def _init_config(cls, config):
    """The entries of `config` that `cls.__init__` takes.

    keras-hub configs also hold sizes derived from the other arguments (a ViT's `num_patches`,
    `key_dim`), which the constructors refuse.
    """
    names = set(_LAYER_ARGUMENTS)
    for klass in cls.__mro__:
        if klass is keras.layers.Layer:
            break
        names |= set(inspect.signature(klass.__init__).parameters)
    return {key: value for key, value in config.items() if key in names}


@keras.saving.register_keras_serializable(package="keras_dml")
class KerasHubLayer(keras.layers.Layer):
    """A keras-hub layer, saved by class path and constructor arguments.

    keras-hub is imported when the layer is built or loaded, not when keras-dml is.

    Args:
        layer_class: str. Import path of the keras-hub layer class.
        layer_config: dict. Its `get_config()`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Examples:
    >>> from keras_hub.src.models.vit.vit_layers import ViTEncoderBlock
    >>> block = KerasHubLayer.wrapping(ViTEncoderBlock(2, 8, 16))
    >>> block(keras.ops.ones((1, 5, 8))).shape
    (1, 5, 8)
    """

    def __init__(self, layer_class, layer_config, **kwargs):
        super().__init__(**kwargs)
        self.layer_class = str(layer_class)
        cls = _class_of(self.layer_class)
        self.layer_config = _init_config(cls, dict(layer_config))
        self.layer = cls.from_config(self.layer_config)

    @classmethod
    def wrapping(cls, layer):
        """A `KerasHubLayer` holding `layer` itself (its weights, built or not)."""
        path = f"{type(layer).__module__}.{type(layer).__qualname__}"
        wrapper = cls(path, layer.get_config(), name=f"hub_{layer.name}")
        wrapper.layer = layer
        wrapper._index_constants()
        return wrapper

    def _index_constants(self):
        for name in _INDEX_ATTRIBUTES:
            value = getattr(self.layer, name, None)
            if value is not None and not isinstance(value, np.ndarray):
                setattr(self.layer, name, np.asarray(keras.ops.convert_to_numpy(value)))

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(input_shape)
        self._index_constants()
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return self.layer(inputs, *args, **kwargs)

    def compute_output_spec(self, inputs, *args, **kwargs):
        return self.layer.compute_output_spec(inputs, *args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update({"layer_class": self.layer_class, "layer_config": self.layer_config})
        return config


@keras.saving.register_keras_serializable(package="keras_dml")
class TokensToMap(keras.layers.Layer):
    """Patch tokens as a feature map, the class token repeated at every position.

    Args:
        grid: tuple `(h, w)`. Patch rows and columns.
        prefix_tokens: int. Tokens before the patches (class token first, then registers).
            Defaults to `1`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: tensor `[N, prefix_tokens + h * w, D]`.

    Returns:
        `[N, h, w, 2D]`: each patch token, then the class token (`[N, h, w, D]` without prefix
        tokens). Global average pooling gives the mean patch token next to the class token.

    Examples:
    >>> TokensToMap((2, 2))(keras.ops.ones((1, 5, 3))).shape
    (1, 2, 2, 6)
    """

    def __init__(self, grid, prefix_tokens=1, **kwargs):
        super().__init__(**kwargs)
        self.grid = tuple(int(size) for size in grid)
        self.prefix_tokens = int(prefix_tokens)

    def call(self, inputs):
        height, width = self.grid
        patches = inputs[:, self.prefix_tokens :, :]
        patch_map = ops.reshape(patches, (-1, height, width, inputs.shape[-1]))
        if not self.prefix_tokens:
            return patch_map
        cls = ops.expand_dims(ops.expand_dims(inputs[:, 0, :], 1), 1)
        return ops.concatenate([patch_map, ops.broadcast_to(cls, ops.shape(patch_map))], axis=-1)

    def compute_output_shape(self, input_shape):
        channels = input_shape[-1]
        if self.prefix_tokens and channels is not None:
            channels = 2 * channels
        return (input_shape[0], *self.grid, channels)

    def get_config(self):
        config = super().get_config()
        config.update({"grid": list(self.grid), "prefix_tokens": self.prefix_tokens})
        return config


@keras.saving.register_keras_serializable(package="keras_dml")
class MapToTokens(keras.layers.Layer):
    """`TokensToMap` undone: a map back to `[N, 1 + h * w, D]` (`[N, h * w, D]` without class).

    The class token is the mean over positions of the map's second half, so a spatial mask on
    the map (ABE's attention) weighs it too; unmasked, the round trip is exact.

    Args:
        class_token: bool. Whether the map carries a class token. Defaults to `True`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Examples:
    >>> tokens = keras.ops.ones((1, 5, 3))
    >>> MapToTokens()(TokensToMap((2, 2))(tokens)).shape
    (1, 5, 3)
    """

    def __init__(self, class_token=True, **kwargs):
        super().__init__(**kwargs)
        self.class_token = bool(class_token)

    def call(self, inputs):
        height, width, channels = inputs.shape[1:]
        dim = channels // 2 if self.class_token else channels
        patches = ops.reshape(inputs[..., :dim], (-1, height * width, dim))
        if not self.class_token:
            return patches
        cls = ops.mean(inputs[..., dim:], axis=(1, 2))
        return ops.concatenate([ops.expand_dims(cls, 1), patches], axis=1)

    def compute_output_shape(self, input_shape):
        height, width, channels = input_shape[1:]
        dim = channels // 2 if self.class_token else channels
        return (input_shape[0], height * width + int(self.class_token), dim)

    def get_config(self):
        config = super().get_config()
        config.update({"class_token": self.class_token})
        return config
