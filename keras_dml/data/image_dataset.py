"""`ImageDataset`: labelled images (files or an in-memory array) and their input pipelines."""

import numpy as np

from keras_dml.data.dataset_pipelines import InputPipelines
from keras_dml.data.file_verification import FileVerification
from keras_dml.data.transform_options import check_augmentation


class ImageDataset(FileVerification, InputPipelines):
    """Labelled images for metric learning, stored as file paths or an in-memory array.

    Args:
        labels: 1-D int array. Class index of every image, in `[0, len(class_names))`.
        paths: sequence of str. Image files, one per label. Defaults to `None`.
        images: uint8 array `[N, H, W]` or `[N, H, W, C]`, C in {1, 3}. In-memory images; exactly
            one of `paths` and `images` is given. Defaults to `None`.
        class_names: sequence of str. Defaults to `None` (`"0", "1", ...`).
        name: str. Dataset name, for messages. Defaults to `"images"`.
        split: str. Split name, for messages. Defaults to `""`.
        image_size: int or (height, width). Default crop size of the pipelines. Defaults to `224`.
        resize_size: int. Default shorter side before cropping. Defaults to `None`
            (`image_size * 256 / 224`).
        verify: bool. Check every file now with `verify()`. Defaults to `False`.
        augmentation: str or callable. Default training augmentation. Defaults to `None`
            (`"crop_flip"` for files, `"none"` in memory).
        strict_files: bool. `verify()` raises on an unreadable file instead of skipping it.
            Defaults to `False`.

    Examples:
    >>> ds = ImageDataset(labels=[0, 1], images=np.zeros((2, 8, 8, 3), np.uint8), image_size=8)
    >>> len(ds), ds.num_classes
    (2, 2)
    """

    def __init__(
        self,
        labels,
        paths=None,
        images=None,
        class_names=None,
        name="images",
        split="",
        image_size=224,
        resize_size=None,
        verify=False,
        augmentation=None,
        strict_files=False,
    ):
        if (paths is None) == (images is None):
            raise ValueError(
                "ImageDataset needs exactly one of `paths` (image files) or `images` "
                f"(uint8 array). Received: paths is None={paths is None}, "
                f"images is None={images is None}"
            )
        labels = np.asarray(labels)
        if labels.ndim != 1 or (labels.size and not np.issubdtype(labels.dtype, np.integer)):
            raise ValueError(
                "`labels` must be a 1-D integer array. "
                f"Received: labels with shape {labels.shape} and dtype {labels.dtype}"
            )
        self.labels = labels.astype(np.int64)
        if paths is not None:
            self.paths = np.asarray([str(p) for p in paths], dtype=object)
            self.images = None
            count = len(self.paths)
        else:
            images = np.asarray(images)
            if images.ndim == 3:
                images = images[..., None]
            if images.ndim != 4 or images.shape[-1] not in (1, 3) or images.dtype != np.uint8:
                raise ValueError(
                    "`images` must be a uint8 array [N, H, W] or [N, H, W, C] with C in {1, 3}. "
                    f"Received: shape {images.shape}, dtype {images.dtype}"
                )
            self.images = images
            self.paths = None
            count = len(images)
        if count != len(self.labels):
            raise ValueError(
                f"Got {count} images but {len(self.labels)} labels; they must match one to one."
            )
        if class_names is None:
            num = int(self.labels.max()) + 1 if self.labels.size else 0
            class_names = [str(i) for i in range(num)]
        self.class_names = [str(c) for c in class_names]
        if self.labels.size and (self.labels.min() < 0 or self.labels.max() >= self.num_classes):
            raise ValueError(
                f"Labels must lie in [0, {self.num_classes}) (one per class name). "
                f"Received: labels in [{self.labels.min()}, {self.labels.max()}]"
            )
        self.name = str(name)
        self.split = str(split)
        self.image_size = image_size
        self.resize_size = resize_size
        if augmentation is None:
            augmentation = "none" if self.in_memory else "crop_flip"
        self.augmentation = check_augmentation(augmentation)
        self.skipped_files = []
        self.strict_files = bool(strict_files)
        self._verified = paths is None
        if verify:
            self.verify()

    @property
    def num_classes(self):
        """int. Number of classes of the split (length of `class_names`)."""
        return len(self.class_names)

    @property
    def in_memory(self):
        """bool. Whether the images are held in memory rather than read from files."""
        return self.images is not None

    def __len__(self):
        return len(self.labels)

    def __repr__(self):
        where = "in memory" if self.in_memory else "files"
        return (
            f"ImageDataset(name={self.name!r}, split={self.split!r}, images={len(self)}, "
            f"classes={self.num_classes}, {where})"
        )

    def subset(self, indices):
        """A new `ImageDataset` with the images at `indices` and the same classes and sizes."""
        indices = np.asarray(indices, dtype=np.int64)
        kwargs = {"paths": self.paths[indices]} if self.paths is not None else {}
        if self.images is not None:
            kwargs["images"] = self.images[indices]
        out = ImageDataset(
            self.labels[indices],
            class_names=self.class_names,
            name=self.name,
            split=self.split,
            image_size=self.image_size,
            resize_size=self.resize_size,
            augmentation=self.augmentation,
            strict_files=self.strict_files,
            **kwargs,
        )
        out._verified = self._verified
        return out
