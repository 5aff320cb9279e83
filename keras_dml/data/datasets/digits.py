"""scikit-learn's 8x8 handwritten digits as a tiny, offline metric learning dataset."""

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import make_split, select_classes


def upscale_grey(images, size):
    """Resizes grey uint8 images `[N, h, w]` to RGB uint8 `[N, size, size, 3]` (bilinear, PIL)."""
    from PIL import Image

    resized = np.stack(
        [np.asarray(Image.fromarray(i).resize((size, size), Image.BILINEAR)) for i in images]
    )
    return np.repeat(resized[..., None], 3, axis=-1)


@register_dataset(
    "digits", "sklearn 8x8 digits (offline); digits 0-5 train (2 of them val), 6-9 test"
)
def load_digits(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.34,
    seed=0,
    resize_size=None,
):
    """Loads scikit-learn's 1,797 digits in memory: digits 0-5 train, 6-9 test.

    Args:
        split: str. `"train"`, `"val"`, `"trainval"` or `"test"`. Defaults to `"train"`.
        data_dir: ignored (the data ships with scikit-learn). Defaults to `None`.
        image_size: int. Stored image side and default crop. Defaults to `None` (32).
        val_fraction: float. Training classes held out as `"val"`. Defaults to `0.34`.
        seed: int. Seed of the held-out classes. Defaults to `0`.
        resize_size: int. Shorter side before cropping. Defaults to `None`.

    Examples:
    >>> test = load_digits("test")
    >>> test.class_names, test.images.shape[1:]
    (['6', '7', '8', '9'], (32, 32, 3))

    References:
        Alpaydin and Kaynak, "Optical Recognition of Handwritten Digits", UCI, 1998.
    """
    from sklearn.datasets import load_digits as sklearn_digits

    size = int(image_size or 32)
    data = sklearn_digits()
    raw = data.target.astype(np.int64)
    classes = select_classes(split, np.arange(6), np.arange(6, 10), val_fraction, seed, "digits")
    keep = np.isin(raw, classes)
    grey = np.round(data.images[keep] * (255.0 / 16.0)).astype(np.uint8)
    images = np.zeros((len(raw), size, size, 3), np.uint8)
    images[keep] = upscale_grey(grey, size)
    return make_split(
        "digits",
        split,
        raw,
        classes,
        images=images,
        image_size=size,
        resize_size=resize_size,
        verify=False,
    )
