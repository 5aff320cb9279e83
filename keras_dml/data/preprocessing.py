"""Image decoding and augmentation for the input pipeline (TensorFlow ops, raw [0, 255] pixels).

Images stay raw pixels in [0, 255] as float32: every backbone normalises inside the model, so the
pipeline only decodes, resizes and crops. Training uses the standard DML augmentation (resize the
shorter side, random crop, random horizontal flip; or an Inception-style random resized crop);
evaluation resizes the shorter side and takes the center crop. Random ops are stateless and take
an explicit `seed` tensor of shape [2], so a seeded pipeline is reproducible.
"""

import tensorflow as tf

AUGMENTATIONS = ("crop_flip", "resized_crop_flip")


def image_size_hw(image_size):
    """Returns `image_size` (int or (height, width)) as a validated `(height, width)` tuple."""
    if isinstance(image_size, int | float):
        image_size = (image_size, image_size)
    size = tuple(int(s) for s in image_size)
    if len(size) != 2 or min(size) < 1:
        raise ValueError(
            "`image_size` must be a positive int or (height, width). "
            f"Received: image_size={image_size}"
        )
    return size


def default_resize_size(image_size):
    """Shorter-side size before cropping: 256 for 224 crops, scaled proportionally.

    Args:
        image_size: int or (height, width). The crop size.

    Returns:
        int: `round(max(height, width) * 256 / 224)`.

    Examples:
    >>> default_resize_size(224), default_resize_size(32)
    (256, 37)
    """
    return int(round(max(image_size_hw(image_size)) * 256 / 224))


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
    """Resizes so the shorter side equals `size`, keeping the aspect ratio.

    Args:
        image: `[H, W, 3]` tensor, any numeric dtype.
        size: int. Target length of the shorter side.

    Returns:
        float32 `[H', W', 3]` tensor in the input's value range (bilinear with antialiasing).
    """
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


def random_crop_flip(image, crop_hw, seed):
    """Random `crop_hw` window then random horizontal flip (stateless, `seed` shape [2])."""
    seeds = tf.random.experimental.stateless_split(seed, num=2)
    crop = tf.image.stateless_random_crop(image, [crop_hw[0], crop_hw[1], 3], seed=seeds[0])
    return tf.image.stateless_random_flip_left_right(crop, seed=seeds[1])


def random_resized_crop_flip(image, crop_hw, seed, scale=(0.16, 1.0), ratio=(3 / 4, 4 / 3)):
    """Inception-style crop (random area and aspect ratio) resized to `crop_hw`, then flip.

    Args:
        image: `[H, W, 3]` tensor.
        crop_hw: (height, width) of the output.
        seed: int tensor of shape [2].
        scale: (min, max) fraction of the image area covered by the crop. Defaults to
            `(0.16, 1.0)`, the range common in metric learning recipes.
        ratio: (min, max) aspect ratio of the crop. Defaults to `(3/4, 4/3)`.

    Returns:
        float32 `[height, width, 3]` tensor in [0, 255].
    """
    seeds = tf.random.experimental.stateless_split(seed, num=2)
    begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
        tf.shape(image),
        bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]),
        seed=seeds[0],
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
    return tf.image.stateless_random_flip_left_right(crop, seed=seeds[1])


def preprocess_for_eval(image, image_size, resize_size=None):
    """Evaluation transform: resize the shorter side to `resize_size`, center crop `image_size`.

    Args:
        image: uint8 or float `[H, W, C]` tensor, C in {1, 3}.
        image_size: int or (height, width). Output size.
        resize_size: int. Shorter side before cropping, >= the crop. Defaults to `None`
            (`default_resize_size(image_size)`).

    Returns:
        float32 `[height, width, 3]` tensor in [0, 255].

    Examples:
    >>> out = preprocess_for_eval(tf.zeros([30, 40, 3], tf.uint8), 32)
    >>> tuple(out.shape)
    (32, 32, 3)
    """
    crop_hw = image_size_hw(image_size)
    resize_size = _checked_resize_size(crop_hw, resize_size)
    image = resize_shorter_side(ensure_rgb(image), resize_size)
    return center_crop(image, crop_hw)


def preprocess_for_train(image, image_size, seed, resize_size=None, augmentation="crop_flip"):
    """Training transform with random crop and horizontal flip.

    Args:
        image: uint8 or float `[H, W, C]` tensor, C in {1, 3}.
        image_size: int or (height, width). Output size.
        seed: int tensor of shape [2] for the stateless random ops.
        resize_size: int. Shorter side before the random crop (`"crop_flip"` only).
            Defaults to `None` (`default_resize_size(image_size)`).
        augmentation: str. `"crop_flip"`: resize shorter side, random crop, flip (the reference
            D&C / BIER pipelines); `"resized_crop_flip"`: random resized crop, flip.
            Defaults to `"crop_flip"`.

    Returns:
        float32 `[height, width, 3]` tensor in [0, 255].
    """
    crop_hw = image_size_hw(image_size)
    image = ensure_rgb(image)
    if augmentation == "crop_flip":
        image = resize_shorter_side(image, _checked_resize_size(crop_hw, resize_size))
        return random_crop_flip(image, crop_hw, seed)
    if augmentation == "resized_crop_flip":
        return random_resized_crop_flip(image, crop_hw, seed)
    raise ValueError(
        f"Unknown `augmentation`; choose one of {AUGMENTATIONS}. "
        f"Received: augmentation={augmentation!r}"
    )


def _checked_resize_size(crop_hw, resize_size):
    if resize_size is None:
        return default_resize_size(crop_hw)
    if int(resize_size) < max(crop_hw):
        raise ValueError(
            "`resize_size` (shorter side before cropping) must be at least the crop size "
            f"{max(crop_hw)}. Received: resize_size={resize_size}"
        )
    return int(resize_size)
