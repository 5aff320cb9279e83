"""Fashion-MNIST from local IDX files (user folder, Keras cache or the Debian package)."""

import gzip
import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import make_split, select_classes

CLASS_NAMES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
DEBIAN_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """Reads an IDX file (optionally gzipped) into a uint8 array of its stored shape.

    Raises:
        ValueError: the header is not an unsigned-byte IDX header or the size mismatches.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        data = handle.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file (bad magic number).")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    offset = 4 + 4 * ndim
    if len(data) - offset != int(np.prod(shape)):
        raise ValueError(f"{path} holds {len(data) - offset} bytes, its header says {shape}.")
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(shape)


def search_dirs(data_dir=None):
    """Folders searched for the IDX files, in order: `data_dir`, the Keras cache, Debian."""
    keras_home = os.environ.get("KERAS_HOME", os.path.join("~", ".keras"))
    dirs = [] if data_dir is None else [os.path.expanduser(str(data_dir))]
    dirs.append(os.path.expanduser(os.path.join(keras_home, "datasets", "fashion-mnist")))
    dirs.append(DEBIAN_DIR)
    return dirs


def find_files(data_dir=None):
    """Returns `{key: path}` of the four IDX files from the first folder holding all of them."""
    for folder in search_dirs(data_dir):
        found = {}
        for key, stem in _FILES.items():
            for candidate in (stem, f"{stem}.gz"):
                if os.path.isfile(os.path.join(folder, candidate)):
                    found[key] = os.path.join(folder, candidate)
                    break
        if len(found) == len(_FILES):
            return found
    raise FileNotFoundError(
        f"Fashion-MNIST IDX files ({', '.join(_FILES.values())}, optionally .gz) not found in "
        f"{search_dirs(data_dir)}. Get them with `apt-get install dataset-fashion-mnist` "
        '(Debian/Ubuntu), or `python -c "import keras; keras.datasets.fashion_mnist.load_data()"` '
        "(downloads to ~/.keras/datasets/fashion-mnist), or point to a folder with them: "
        "`--data-dir DIR` on the command line, `data_dir=` in "
        'Python, `"data_dir"` in a run configuration.'
    )


@register_dataset("fashion_mnist", "Fashion-MNIST (local IDX files); classes 0-5 train, 6-9 test")
def load_fashion_mnist(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.34,
    seed=0,
    max_per_class=None,
    resize_size=None,
):
    """Loads Fashion-MNIST's 70,000 images pooled, then split by class: 0-5 train, 6-9 test.

    Args:
        max_per_class: int. Keep the first `max_per_class` images of each class. Defaults to
            `None` (all).

    References:
        Xiao et al., "Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine Learning
        Algorithms", arXiv:1708.07747, 2017.
    """
    if max_per_class is not None and int(max_per_class) < 1:
        raise ValueError(f"`max_per_class` must be >= 1. Received: max_per_class={max_per_class}")
    classes = select_classes(
        split, np.arange(6), np.arange(6, 10), val_fraction, seed, "fashion_mnist"
    )
    files = find_files(data_dir)
    images = np.concatenate([read_idx(files["train_images"]), read_idx(files["test_images"])])
    raw = np.concatenate([read_idx(files["train_labels"]), read_idx(files["test_labels"])])
    raw = raw.astype(np.int64)
    if len(images) != len(raw):
        raise ValueError(f"Fashion-MNIST files disagree: {len(images)} images, {len(raw)} labels.")
    if max_per_class is not None:
        keep = np.concatenate([np.flatnonzero(raw == c)[: int(max_per_class)] for c in classes])
        keep = np.sort(keep)
        images, raw = images[keep], raw[keep]
    return make_split(
        "fashion_mnist",
        split,
        raw,
        classes,
        class_names=CLASS_NAMES,
        images=images[..., None],
        image_size=image_size or 32,
        resize_size=resize_size,
        verify=False,
    )
