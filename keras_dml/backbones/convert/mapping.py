"""Shared part of the conversions: check a state dict against a layer plan, copy the tensors."""

import dataclasses

import numpy as np

BATCHNORM_KEYS = ("weight", "bias", "running_mean", "running_var")
# Bookkeeping buffer of PyTorch BatchNorm layers; carries no weights.
IGNORED_SUFFIXES = ("num_batches_tracked",)


@dataclasses.dataclass(frozen=True)
class ConvBN:
    """One convolution to copy: Keras and PyTorch names of the conv and of its BatchNorm."""

    conv: str
    torch_conv: str
    bn: str | None = None
    torch_bn: str | None = None
    torch_bias: bool = False


def kernel_to_keras(weight):
    """PyTorch OIHW convolution kernel -> Keras HWIO.

    Examples:
    >>> kernel_to_keras(np.zeros((64, 3, 7, 5))).shape
    (7, 5, 3, 64)
    """
    return np.transpose(weight, (2, 3, 1, 0))


def _expected_shapes(model, plan):
    """`{torch key: (shape, keras layer name)}` in plan order."""
    expected = {}
    for entry in plan:
        kernel_shape = tuple(model.get_layer(entry.conv).kernel.shape)
        out_channels = kernel_shape[-1]
        oihw = (out_channels, kernel_shape[2], kernel_shape[0], kernel_shape[1])
        expected[f"{entry.torch_conv}.weight"] = (oihw, entry.conv)
        if entry.torch_bias:
            expected[f"{entry.torch_conv}.bias"] = ((out_channels,), entry.conv)
        if entry.bn is not None:
            for key in BATCHNORM_KEYS:
                expected[f"{entry.torch_bn}.{key}"] = ((out_channels,), entry.bn)
    return expected


def check_state_dict(state_dict, model, plan, ignored_prefixes, source):
    """Raises a one-line `ValueError` naming the first missing key, unexpected key or wrong shape.

    `ignored_prefixes` are source keys outside the backbone (classifier, auxiliary heads);
    `source` names the source in messages.
    """
    expected = _expected_shapes(model, plan)
    for key, (_, layer) in expected.items():
        if key not in state_dict:
            prefixed = [name for name in state_dict if name.endswith(f".{key}")]
            hint = f" It holds {prefixed[0]!r}: strip that prefix." if prefixed else ""
            raise ValueError(
                f"The state dict lacks {key!r} (weights of Keras layer {layer!r}): it is not a "
                f"complete {source} state dict.{hint}"
            )
    for key in state_dict:
        known = key in expected or key.startswith(ignored_prefixes)
        if not known and not key.endswith(IGNORED_SUFFIXES):
            raise ValueError(
                f"Unexpected key {key!r} in the state dict: it is not part of a {source} state "
                "dict (another architecture or variant?)."
            )
    for key, (shape, layer) in expected.items():
        actual = tuple(state_dict[key].shape)
        if actual != shape:
            raise ValueError(
                f"{key!r} has shape {actual} in the state dict, but Keras layer {layer!r} needs "
                f"{shape} (PyTorch layout): the state dict is not a {source} state dict."
            )


def copy_weights(state_dict, model, plan):
    """Sets every planned layer of `model` from a checked state dict (`RuntimeError` for a gap)."""
    covered = set()
    for entry in plan:
        conv = model.get_layer(entry.conv)
        values = [kernel_to_keras(state_dict[f"{entry.torch_conv}.weight"])]
        bias = state_dict[f"{entry.torch_conv}.bias"] if entry.torch_bias else None
        if conv.use_bias:
            values.append(bias)
        conv.set_weights(values)
        covered.add(entry.conv)
        if entry.bn is None:
            continue
        gamma, beta, mean, var = (state_dict[f"{entry.torch_bn}.{k}"] for k in BATCHNORM_KEYS)
        if bias is not None and not conv.use_bias:
            mean = mean - bias
        model.get_layer(entry.bn).set_weights([gamma, beta, mean, var])
        covered.add(entry.bn)
    left = [layer.name for layer in model.layers if layer.weights and layer.name not in covered]
    if left:
        raise RuntimeError(f"The conversion plan misses the Keras layers {left}.")
