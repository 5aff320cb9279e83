"""Image decoding and seeded, stateless augmentation with TensorFlow ops on [0, 255] pixels."""

import tensorflow as tf

from keras_dml.data.transform_options import (
    AUGMENTATIONS,
    check_augmentation,
    default_resize_size,
    image_size_hw,
)
from keras_dml.data.transform_options import checked_resize_size as _checked_resize_size

__all__ = [
    "AUGMENTATIONS",
    "center_crop",
    "check_augmentation",
    "decode_image",
    "default_resize_size",
    "ensure_rgb",
    "image_size_hw",
    "preprocess_for_eval",
    "preprocess_for_train",
    "random_crop",
    "random_resized_crop",
    "resize_shorter_side",
]


def decode_image(contents):
    """Decodes JPEG/PNG/GIF/BMP/WebP bytes to a uint8 `[H, W, 3]` tensor (first GIF frame)."""
    image = tf.io.decode_image(contents, channels=3, expand_animations=False)
    image.set_shape([None, None, 3])
    return image


def ensure_rgb(image):
    """Returns `image` `[H, W, C]` with 3 channels (grey images are repeated)."""
    if image.shape[-1] == 1:
        return tf.image.grayscale_to_rgb(image)
    return image


def resize_shorter_side(image, size):
    """Resizes so the shorter side equals `size`: float32 `[H', W', 3]` (antialiased bilinear)."""
    shape = tf.cast(tf.shape(image)[:2], tf.float32)
    scale = tf.cast(size, tf.float32) / tf.reduce_min(shape)
    new_hw = tf.maximum(tf.cast(tf.round(shape * scale), tf.int32), size)
    image = tf.image.resize(tf.cast(image, tf.float32), new_hw, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0)


def center_crop(image, crop_hw):
    """Takes the central `crop_hw` window of an image at least that large."""
    height, width = crop_hw
    shape = tf.shape(image)
    top = (shape[0] - height) // 2
    left = (shape[1] - width) // 2
    crop = image[top : top + height, left : left + width, :]
    crop.set_shape([height, width, 3])
    return crop


def random_crop(image, crop_hw, seed):
    """Random `crop_hw` window (stateless, `seed` shape [2])."""
    return tf.image.stateless_random_crop(image, [crop_hw[0], crop_hw[1], 3], seed=seed)


def random_resized_crop(image, crop_hw, seed, scale=(0.16, 1.0), ratio=(3 / 4, 4 / 3)):
    """Inception-style crop (area fraction `scale`, aspect ratio `ratio`), resized to `crop_hw`.

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (the crop sampling).
    """
    begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
        tf.shape(image),
        bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]),
        seed=seed,
        min_object_covered=0.0,
        aspect_ratio_range=ratio,
        area_range=scale,
        max_attempts=20,
        use_image_if_no_bounding_boxes=True,
    )
    crop = tf.slice(image, begin, size)
    crop = tf.image.resize(tf.cast(crop, tf.float32), crop_hw, antialias=True)
    crop = tf.clip_by_value(crop, 0.0, 255.0)
    crop.set_shape([crop_hw[0], crop_hw[1], 3])
    return crop


def preprocess_for_eval(image, image_size, resize_size=None):
    """Evaluation transform: keep an image at `image_size`, else resize and center crop.

    Args:
        image: uint8 or float `[H, W, C]` tensor, C in {1, 3}.
        image_size: int or (height, width). Output size.
        resize_size: int. Shorter side before cropping. Defaults to `None` (`default_resize_size`).

    Returns:
        float32 `[height, width, 3]` tensor in [0, 255].
    """
    crop_hw = image_size_hw(image_size)
    resize_size = _checked_resize_size(crop_hw, resize_size)
    image = ensure_rgb(image)
    shape = tf.shape(image)
    at_size = tf.logical_and(tf.equal(shape[0], crop_hw[0]), tf.equal(shape[1], crop_hw[1]))

    def keep():
        # An identity here (the sizes match); written so that the graph also builds when the
        # static shape differs and this branch is never taken.
        kept = tf.cast(image, tf.float32)
        return tf.image.resize_with_crop_or_pad(kept, crop_hw[0], crop_hw[1])

    def resize_and_crop():
        return center_crop(resize_shorter_side(image, resize_size), crop_hw)

    out = tf.cond(at_size, keep, resize_and_crop)
    out.set_shape([crop_hw[0], crop_hw[1], 3])
    return out


def preprocess_for_train(image, image_size, seed, resize_size=None, augmentation="crop_flip"):
    """Training transform: the chosen augmentation of one image.

    Args:
        image: uint8 or float `[H, W, C]` tensor, C in {1, 3}.
        image_size: int or (height, width). Output size.
        seed: int tensor of shape [2] for the stateless random ops.
        resize_size: int. Shorter side before cropping. Defaults to `None` (`default_resize_size`).
        augmentation: str. One of `AUGMENTATIONS` (docs/data.md). Defaults to `"crop_flip"`.

    Returns:
        float32 `[height, width, 3]` tensor in [0, 255].

    Examples:
    >>> image = tf.reshape(tf.range(16 * 16 * 3) % 256, [16, 16, 3])
    >>> out = preprocess_for_train(image, 16, tf.constant([0, 1]), augmentation="none")
    >>> bool(tf.reduce_all(out == tf.cast(image, tf.float32)))
    True
    """
    if callable(augmentation) or augmentation not in AUGMENTATIONS:
        raise ValueError(
            f"Unknown `augmentation` for one image; choose one of {AUGMENTATIONS} (a Keras "
            "pipeline is applied to whole batches by `make_tf_dataset`). "
            f"Received: augmentation={augmentation!r}"
        )
    crop_hw = image_size_hw(image_size)
    image = ensure_rgb(image)
    if augmentation in ("none", "flip"):
        out = preprocess_for_eval(image, crop_hw, resize_size)
    elif augmentation in ("crop", "crop_flip"):
        image = resize_shorter_side(image, _checked_resize_size(crop_hw, resize_size))
        out = random_crop(image, crop_hw, tf.random.experimental.stateless_split(seed, 2)[0])
    else:
        out = random_resized_crop(
            image, crop_hw, tf.random.experimental.stateless_split(seed, 2)[0]
        )
    if augmentation.endswith("flip"):
        out = tf.image.stateless_random_flip_left_right(
            out, seed=tf.random.experimental.stateless_split(seed, 2)[1]
        )
    return out
