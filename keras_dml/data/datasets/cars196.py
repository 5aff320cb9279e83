"""Stanford Cars (Cars196) in its official folder layout (`cars_annos.mat` + `car_ims/`)."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import find_root, make_split, select_classes

_HOW_TO_GET = (
    "Download car_ims.tgz and cars_annos.mat of the Stanford Cars dataset "
    "(https://ai.stanford.edu/~jkrause/cars/car_dataset.html) into one folder "
    "(or use `tfds:cars196`)."
)


def read_cars_annotations(path):
    """Reads `cars_annos.mat`: (relative image paths, 1-based class ids, {class id: name})."""
    from scipy.io import loadmat

    mat = loadmat(path, squeeze_me=True, struct_as_record=True)
    if "annotations" not in mat:
        raise ValueError(f"{path} has no `annotations` struct; is it the Cars196 cars_annos.mat?")
    annotations = np.atleast_1d(mat["annotations"])
    rel_paths = [str(p) for p in np.atleast_1d(annotations["relative_im_path"])]
    classes = np.atleast_1d(annotations["class"]).astype(np.int64)
    names = [str(n) for n in np.atleast_1d(mat.get("class_names", []))]
    return rel_paths, classes, dict(enumerate(names, start=1))


@register_dataset("cars196", "Stanford Cars; classes 1-98 train, 99-196 test")
def load_cars196(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    verify=True,
    resize_size=None,
):
    """Loads Cars196 (`cars_annos.mat`, `car_ims/`): classes 1-98 train, 99-196 test.

    Class names come from the annotation file, e.g. `"AM General Hummer SUV 2000"`.

    References:
        Krause et al., "3D Object Representations for Fine-Grained Categorization", 2013;
        split of Song et al., CVPR 2016.
    """
    root = find_root(
        data_dir, ("cars196", "stanford_cars"), "cars_annos.mat", "cars196", _HOW_TO_GET
    )
    rel_paths, raw, class_names = read_cars_annotations(os.path.join(root, "cars_annos.mat"))
    all_classes = np.arange(1, 197)
    classes = select_classes(
        split, all_classes[:98], all_classes[98:], val_fraction, seed, "cars196", present=raw
    )
    return make_split(
        "cars196",
        split,
        raw,
        classes,
        class_names=lambda c: class_names.get(int(c), str(c)),
        paths=[os.path.join(root, p) for p in rel_paths],
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
    )
