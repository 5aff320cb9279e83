"""Freezing BatchNormalization layers (inference mode, fixed statistics)."""

import keras


def freeze_batchnorm(model):
    """Freezes every BatchNormalization layer of a model (nested models included).

    Sets `trainable=False` on each `keras.layers.BatchNormalization`. In Keras 3 a frozen
    BatchNormalization layer always runs in inference mode: it normalises with its moving
    statistics, never updates them, and its scale/offset receive no gradient, also inside
    `fit`. This is how the Divide & Conquer reference code fine-tunes ResNet-50 with small
    batches. The flag is saved in `.keras` files.

    Args:
        model: `keras.Model` or layer.

    Returns:
        int. The number of BatchNormalization layers frozen.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> freeze_batchnorm(backbone)
    4

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning",
        CVPR 2019 (reference implementation: BatchNorm statistics frozen).
    """
    count = 0
    stack = [model]
    seen = set()
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.trainable = False
            count += 1
        stack.extend(getattr(layer, "layers", []) or [])
    return count
