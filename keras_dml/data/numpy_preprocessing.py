"""Image decoding and augmentation in NumPy and PIL: the `tf.data` transforms without TensorFlow.

How they differ from the `tf.data` ones (resize kernel, JPEG decoder, random draws): docs/data.md.
"""

import numpy as np
from PIL import Image

from keras_dml.data.transform_options import (
    AUGMENTATIONS,
    checked_resize_size,
    image_size_hw,
)

# Largest difference (grey levels) from the tf.data evaluation transform on PNG and in-memory
# images (PIL's bilinear kernel against TensorFlow's antialiased one, then uint8 rounding).
EVAL_TOLERANCE = 1.0


def decode_image_file(path):
    """Decodes an image file to a uint8 `[H, W, 3]` array (first GIF frame, grey repeated).

    Raises:
        OSError: the file is missing or cannot be decoded (PIL's error).
    """
    with Image.open(path) as image:
        image.seek(0)
        return np.asarray(image.convert("RGB"))


def ensure_rgb(image):
    """Returns a uint8 `[H, W, 3]` array from an `[H, W]`, `[H, W, 1]` or `[H, W, 3]` one."""
    image = np.asarray(image)
    if image.ndim == 2:
        image = image[..., None]
    if image.shape[-1] == 1:
        image = np.repeat(image, 3, axis=-1)
    return image


def resize_to(image, height, width):
    """Resizes a uint8 `[H, W, 3]` array to `[height, width, 3]` (PIL bilinear, antialiased)."""
    if image.shape[:2] == (height, width):
        return image
    resized = Image.fromarray(image).resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(resized)


def resize_shorter_side(image, size):
    """Resizes so the shorter side equals `size` (output size as the `tf.data` function's).

    Examples:
    >>> resize_shorter_side(np.zeros((20, 40, 3), np.uint8), 10).shape
    (10, 20, 3)
    """
    height, width = image.shape[:2]
    scale = np.float32(size) / np.float32(min(height, width))
    new_height = max(int(np.round(np.float32(height) * scale)), size)
    new_width = max(int(np.round(np.float32(width) * scale)), size)
    return resize_to(image, new_height, new_width)


def center_crop(image, crop_hw):
    """Takes the central `crop_hw` window (top-left rounding as the `tf.data` path)."""
    height, width = crop_hw
    top = (image.shape[0] - height) // 2
    left = (image.shape[1] - width) // 2
    return image[top : top + height, left : left + width]


def random_crop(image, crop_hw, rng):
    """A random `crop_hw` window, every offset equally likely (`tf.image.random_crop`'s law)."""
    height, width = crop_hw
    if image.shape[0] < height or image.shape[1] < width:
        raise ValueError(
            f"`random_crop` needs an image at least {crop_hw}; resize it first. "
            f"Received: image of shape {image.shape}"
        )
    top = int(rng.integers(0, image.shape[0] - height + 1))
    left = int(rng.integers(0, image.shape[1] - width + 1))
    return image[top : top + height, left : left + width]


def sample_crop_box(height, width, rng, scale=(0.16, 1.0), ratio=(3 / 4, 4 / 3), attempts=20):
    """Samples an Inception-style crop box `(top, left, box_height, box_width)`.

    TensorFlow's `sample_distorted_bounding_box` law (`min_object_covered=0`), the whole image
    after `attempts` failed draws; `scale` and `ratio` as `random_resized_crop`'s.

    Examples:
    >>> top, left, h, w = sample_crop_box(100, 100, np.random.default_rng(0))
    >>> 0.16 * 100 * 100 <= h * w <= 100 * 100 and top + h <= 100 and left + w <= 100
    True

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (the crop sampling).
    """
    min_area, max_area = scale[0] * height * width, scale[1] * height * width
    for _ in range(attempts):
        aspect = float(rng.uniform(ratio[0], ratio[1]))
        min_height = int(round(np.sqrt(min_area / aspect)))
        max_height = int(round(np.sqrt(max_area / aspect)))
        if round(max_height * aspect) > width:
            max_height = int((width + 0.5 - 1e-7) / aspect)
        max_height = min(max_height, height)
        min_height = min(min_height, max_height)
        box_height = min_height + int(rng.integers(0, max_height - min_height + 1))
        box_width = int(round(box_height * aspect))
        if box_width * box_height < min_area:
            box_height += 1
            box_width = int(round(box_height * aspect))
        area = box_width * box_height
        if not (
            min_area <= area <= max_area and 0 < box_width <= width and 0 < box_height <= height
        ):
            continue
        top = int(rng.integers(0, height - box_height + 1))
        left = int(rng.integers(0, width - box_width + 1))
        return top, left, box_height, box_width
    return 0, 0, height, width


def random_resized_crop(image, crop_hw, rng):
    """Inception-style crop (`sample_crop_box`) of a uint8 image, resized to `crop_hw`."""
    top, left, box_height, box_width = sample_crop_box(image.shape[0], image.shape[1], rng)
    box = image[top : top + box_height, left : left + box_width]
    return resize_to(box, crop_hw[0], crop_hw[1])


def image_generator(seed_words, position):
    """The generator of the image at `position` of a batch seeded `batch_seed(...)` words."""
    return np.random.default_rng([int(seed_words[0]), int(seed_words[1]), int(position)])


def preprocess_for_eval(image, image_size, resize_size=None, dtype="float32"):
    """The NumPy `preprocessing.preprocess_for_eval`; `dtype="uint8"` keeps the same pixels.

    Examples:
    >>> preprocess_for_eval(np.zeros((30, 40, 3), np.uint8), 32).shape
    (32, 32, 3)
    """
    crop_hw = image_size_hw(image_size)
    size = checked_resize_size(crop_hw, resize_size)
    image = ensure_rgb(image)
    if image.shape[:2] != crop_hw:
        image = center_crop(resize_shorter_side(image, size), crop_hw)
    return image.astype(dtype)


def preprocess_for_train(
    image, image_size, rng, resize_size=None, augmentation="crop_flip", dtype="float32"
):
    """The NumPy `preprocessing.preprocess_for_train`, drawing from `rng` (`image_generator`).

    Examples:
    >>> image = (np.arange(16 * 16 * 3) % 256).astype(np.uint8).reshape(16, 16, 3)
    >>> out = preprocess_for_train(image, 16, np.random.default_rng(0), augmentation="none")
    >>> bool((out == image).all())
    True
    """
    if augmentation not in AUGMENTATIONS:
        raise ValueError(
            f"Unknown `augmentation` for one image; choose one of {AUGMENTATIONS} (a Keras "
            "pipeline is applied to whole batches by `make_py_dataset`). "
            f"Received: augmentation={augmentation!r}"
        )
    crop_hw = image_size_hw(image_size)
    image = ensure_rgb(image)
    if augmentation in ("none", "flip"):
        out = preprocess_for_eval(image, crop_hw, resize_size, dtype)
    elif augmentation in ("crop", "crop_flip"):
        image = resize_shorter_side(image, checked_resize_size(crop_hw, resize_size))
        out = random_crop(image, crop_hw, rng).astype(dtype)
    else:
        out = random_resized_crop(image, crop_hw, rng).astype(dtype)
    if augmentation.endswith("flip") and rng.random() < 0.5:
        out = out[:, ::-1]
    return np.ascontiguousarray(out)
