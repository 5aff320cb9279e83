"""Augmentation names, crop and resize sizes: the transform choices both pipelines check."""

AUGMENTATIONS = ("none", "flip", "crop", "crop_flip", "resized_crop", "resized_crop_flip")


def check_augmentation(augmentation):
    """Returns `augmentation` if it is a name of `AUGMENTATIONS` or a callable, else raises.

    Raises:
        ValueError: an unknown name or another type.

    Examples:
    >>> check_augmentation("flip")
    'flip'
    """
    if callable(augmentation) or augmentation in AUGMENTATIONS:
        return augmentation
    raise ValueError(
        f"Unknown `augmentation`; choose one of {AUGMENTATIONS} or pass a Keras preprocessing "
        f"pipeline (e.g. keras.Sequential([keras.layers.RandomRotation(0.05)])). "
        f"Received: augmentation={augmentation!r}"
    )


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
    """Shorter side before cropping: `round(max(height, width) * 256 / 224)`.

    Examples:
    >>> default_resize_size(224), default_resize_size(32)
    (256, 37)
    """
    return int(round(max(image_size_hw(image_size)) * 256 / 224))


def checked_resize_size(crop_hw, resize_size):
    """Returns the shorter-side size: `resize_size`, or the default for `crop_hw` when `None`."""
    if resize_size is None:
        return default_resize_size(crop_hw)
    if int(resize_size) < max(crop_hw):
        raise ValueError(
            "`resize_size` (shorter side before cropping) must be at least the crop size "
            f"{max(crop_hw)}. Received: resize_size={resize_size}"
        )
    return int(resize_size)
