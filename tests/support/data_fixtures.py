"""Writes tiny dataset trees in each official layout for the data tests.

Every tree has a few 40x30 images per class whose pixel colour encodes the class, plus (when
`broken=True`) one corrupt file and one listed-but-missing file in the first training class.
"""

import gzip
import os

import numpy as np
from PIL import Image

IMAGE_HW = (30, 40)  # height, width


def class_colour(class_id):
    """A distinct RGB colour per class id, so a decoded pixel identifies its class."""
    rng = np.random.default_rng(int(class_id))
    return tuple(int(v) for v in rng.integers(0, 256, size=3))


def write_image(path, class_id, fmt=None):
    """Writes a 40x30 image filled with the class colour (JPEG or PNG by extension)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    array = np.zeros((*IMAGE_HW, 3), np.uint8) + np.array(class_colour(class_id), np.uint8)
    Image.fromarray(array).save(path, format=fmt)


def write_corrupt(path):
    """Writes bytes that are no image at all under an image file name."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b"\xff\xd8\xff\xe0 this is not a JPEG stream")


def _files_for(classes, per_class, broken, make_name):
    """Yields (class, relative path, kind) with kind in {"ok", "corrupt", "missing"}."""
    for position, class_id in enumerate(classes):
        for i in range(per_class):
            yield class_id, make_name(class_id, i), "ok"
        if broken and position == 0:
            yield class_id, make_name(class_id, per_class), "corrupt"
            yield class_id, make_name(class_id, per_class + 1), "missing"


def _materialise(root, entries):
    for class_id, relative, kind in entries:
        path = os.path.join(root, relative)
        if kind == "ok":
            write_image(path, class_id, fmt="PNG" if relative.endswith(".png") else "JPEG")
        elif kind == "corrupt":
            write_corrupt(path)


def make_cub(root, classes=(1, 2, 3, 101, 102, 103), per_class=2, broken=True):
    """CUB_200_2011 layout: images.txt, image_class_labels.txt, classes.txt, images/."""
    root = os.path.join(root, "CUB_200_2011")
    entries = list(
        _files_for(classes, per_class, broken, lambda c, i: f"{c:03d}.Bird_{c}/Bird_{c}_{i}.jpg")
    )
    _materialise(os.path.join(root, "images"), entries)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "classes.txt"), "w") as handle:
        handle.writelines(f"{c} {c:03d}.Bird_{c}\n" for c in range(1, 201))
    with (
        open(os.path.join(root, "images.txt"), "w") as images,
        open(os.path.join(root, "image_class_labels.txt"), "w") as labels,
    ):
        for image_id, (class_id, relative, _) in enumerate(entries, start=1):
            images.write(f"{image_id} {relative}\n")
            labels.write(f"{image_id} {class_id}\n")
    return entries


def make_cars(root, classes=(1, 2, 3, 99, 100, 101), per_class=2, broken=True):
    """Cars196 layout: cars_annos.mat (relative_im_path, class, test) + car_ims/."""
    from scipy.io import savemat

    counter = iter(range(1, 10_000))
    entries = list(
        _files_for(classes, per_class, broken, lambda c, i: f"car_ims/{next(counter):06d}.jpg")
    )
    _materialise(root, entries)
    dtype = [("relative_im_path", "O"), ("class", "O"), ("test", "O")]
    annotations = np.array(
        [(rel, np.uint8(c), np.uint8(i % 2)) for i, (c, rel, _) in enumerate(entries)], dtype=dtype
    )
    names = np.array([f"Car model {c}" for c in range(1, 197)], dtype=object)
    savemat(
        os.path.join(root, "cars_annos.mat"), {"annotations": annotations, "class_names": names}
    )
    return entries


def make_sop(root, train=(1, 2, 3, 4), test=(11319, 11320, 11321), per_class=2, broken=True):
    """Stanford_Online_Products layout: Ebay_train.txt / Ebay_test.txt + <super>_final/."""
    root = os.path.join(root, "Stanford_Online_Products")
    os.makedirs(root, exist_ok=True)
    for filename, classes, flawed in (
        ("Ebay_train.txt", train, broken),
        ("Ebay_test.txt", test, False),
    ):
        entries = list(
            _files_for(classes, per_class, flawed, lambda c, i: f"chair_final/{c}_{i}.JPG")
        )
        _materialise(root, entries)
        with open(os.path.join(root, filename), "w") as handle:
            handle.write("image_id class_id super_class_id path\n")
            for image_id, (class_id, relative, _) in enumerate(entries, start=1):
                handle.write(f"{image_id} {class_id} {1 + class_id % 2} {relative}\n")
    return root


def make_inshop(root, train=(1, 2, 3, 4), test=(7, 8, 9), per_class=3, broken=True):
    """In-shop layout: list_eval_partition.txt (count, header, rows) + img/."""
    rows = []
    for class_id, relative, kind in _files_for(
        train, per_class, broken, lambda c, i: f"img/WOMEN/Dresses/id_{c:08d}/{i:02d}_front.jpg"
    ):
        rows.append((class_id, relative, kind, "train"))
    for class_id in test:
        for i in range(per_class):
            status = "query" if i == 0 else "gallery"
            rows.append(
                (class_id, f"img/MEN/Tees/id_{class_id:08d}/{i:02d}_front.jpg", "ok", status)
            )
    _materialise(root, [(c, rel, kind) for c, rel, kind, _ in rows])
    with open(os.path.join(root, "list_eval_partition.txt"), "w") as handle:
        handle.write(f"{len(rows)}\nimage_name item_id evaluation_status\n")
        for class_id, relative, _, status in rows:
            handle.write(f"{relative}  id_{class_id:08d}  {status}\n")
    return rows


def make_vehicleid(root, train=(10, 11, 12), per_class=3, broken=True):
    """VehicleID layout: train_test_split/{train_list,test_list_800,...}.txt + image/."""
    split_dir = os.path.join(root, "train_test_split")
    os.makedirs(split_dir, exist_ok=True)
    lists = {
        "train_list.txt": (train, broken),
        "test_list_800.txt": ((100, 101), False),
        "test_list_1600.txt": ((100, 101, 102, 103), False),
        "test_list_2400.txt": ((100, 101, 102, 103, 104, 105), False),
    }
    for filename, (classes, flawed) in lists.items():
        entries = list(_files_for(classes, per_class, flawed, lambda c, i: f"{c:04d}{i:03d}"))
        _materialise(root, [(c, f"image/{n}.jpg", kind) for c, n, kind in entries])
        with open(os.path.join(split_dir, filename), "w") as handle:
            handle.writelines(f"{name} {class_id}\n" for class_id, name, _ in entries)
    return root


def make_image_folder(root, num_classes=6, per_class=2, broken=False):
    """root/<class>/<image> with PNG and JPEG files."""
    names = [f"class_{c:02d}" for c in range(num_classes)]
    for c, name in enumerate(names):
        for i in range(per_class):
            write_image(os.path.join(root, name, f"{i}.{'png' if i % 2 else 'jpg'}"), c)
    if broken:
        write_corrupt(os.path.join(root, names[0], "broken.jpg"))
    return names


def write_idx(path, array):
    """Writes a uint8 array as a gzipped IDX file."""
    array = np.asarray(array, np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape
    )
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wb") as handle:
        handle.write(header + array.tobytes())


def make_fashion_idx(folder, per_class=3):
    """Four Fashion-MNIST IDX files with `per_class` images of every class in each file."""
    labels = np.repeat(np.arange(10), per_class).astype(np.uint8)
    images = (labels[:, None, None] * 20 + np.zeros((1, 28, 28))).astype(np.uint8)
    for prefix in ("train", "t10k"):
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), images)
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), labels)
    return folder
