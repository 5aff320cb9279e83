"""`ImageDataset`: labelled images (files or an in-memory array) and their input pipelines."""

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np

from keras_dml.data.py_pipeline import make_py_dataset
from keras_dml.data.transform_options import check_augmentation

# Formats `tf.io.decode_image` decodes; anything else PIL opens would fail inside the pipeline.
TF_DECODABLE_FORMATS = ("JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP")


def _check_image_file(path):
    """Returns `None` if `path` is an image the pipeline can decode, else the reason."""
    if not os.path.isfile(path):
        return "missing file"
    from PIL import Image

    try:
        with Image.open(path) as image:
            if image.format not in TF_DECODABLE_FORMATS:
                return f"format {image.format} is not decodable by tf.io.decode_image"
            if image.format in ("JPEG", "MPO"):
                # DCT-domain downscaling: the whole stream is still parsed, 8x less work.
                image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
    except Exception as error:  # PIL raises many types for corrupt data.
        return f"{type(error).__name__}: {error}"
    return None


class ImageDataset:
    """Labelled images for metric learning, stored as file paths or an in-memory array.

    Labels are integers `0..num_classes-1` within the split (`class_names[label]` gives the
    dataset's own class name). The images are either files (decoded in the input pipeline) or a
    uint8 array `[N, H, W, C]` with `C` in {1, 3}.

    Args:
        labels: 1-D int array. Class index of every image, in `[0, len(class_names))`.
        paths: sequence of str. Image files, one per label. Defaults to `None`.
        images: uint8 array `[N, H, W]` or `[N, H, W, C]`. In-memory images. Exactly one of
            `paths` and `images` is given. Defaults to `None`.
        class_names: sequence of str. Names of the classes. Defaults to `None`
            (`"0", "1", ...`).
        name: str. Dataset name, for messages. Defaults to `"images"`.
        split: str. Split name, for messages. Defaults to `""`.
        image_size: int or (height, width). Default crop size of `as_dataset`.
            Defaults to `224`.
        resize_size: int. Default shorter-side size before cropping. Defaults to `None`
            (`image_size * 256 / 224`).
        verify: bool. Whether to check every file now with `verify()` so `labels` only holds
            images the pipeline can decode. Defaults to `False`.
        augmentation: str or callable. Default training augmentation of `as_dataset` (see
            `keras_dml.data.transform_options.AUGMENTATIONS`). Defaults to `None`: `"crop_flip"`
            (the papers' crop + flip) for image files, `"none"` for in-memory arrays (small
            images such as digits, Fashion-MNIST, rendered characters, where a crop cuts
            content and a flip changes the class of characters).

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

    def verify(self, num_workers=None):
        """Checks every image file and drops the ones the pipeline could not decode.

        Each file must exist, open with PIL in a format `tf.io.decode_image` reads, and decode
        completely (JPEG at 1/8 scale, which still parses the whole stream). Bad files are
        removed from `paths` and `labels` (so `labels` stays aligned with what the pipeline
        yields), listed in `skipped_files` and reported by one warning naming the count and
        the first paths. The class mapping is kept, so labels stay comparable across splits.
        Runs once; later calls return the cached result.

        Args:
            num_workers: int. Threads used (PIL releases the GIL while decoding).
                Defaults to `None` (`min(8, os.cpu_count())`).

        Returns:
            list of str: the skipped files (also in `skipped_files`).
        """
        if self._verified:
            return list(self.skipped_files)
        workers = num_workers or min(8, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            reasons = list(pool.map(_check_image_file, self.paths, chunksize=64))
        bad = np.array([r is not None for r in reasons], dtype=bool)
        if bad.any():
            skipped = [(p, r) for p, r in zip(self.paths, reasons) if r is not None]
            self.skipped_files = [p for p, _ in skipped]
            lost = sorted(set(self.labels[bad].tolist()) - set(self.labels[~bad].tolist()))
            first = "; ".join(f"{p} ({r})" for p, r in skipped[:5])
            empty = (
                f" Classes left without images: {[self.class_names[c] for c in lost]}."
                if lost
                else ""
            )
            warnings.warn(
                f"{self.name}/{self.split}: skipping {len(skipped)} of {len(self.paths)} image "
                f"files that are missing or cannot be decoded (listed in `skipped_files`). "
                f"First: {first}.{empty}",
                stacklevel=2,
            )
            self.paths = self.paths[~bad]
            self.labels = self.labels[~bad]
        self._verified = True
        return list(self.skipped_files)

    def subset(self, indices):
        """Returns a new `ImageDataset` with the images at `indices` and the same classes.

        Args:
            indices: 1-D int array. Positions to keep.

        Returns:
            `ImageDataset` sharing `class_names`, `name`, `split` and sizes.
        """
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
            **kwargs,
        )
        out._verified = self._verified
        return out

    def as_tf_dataset(
        self,
        training=False,
        batch_size=32,
        sampler=None,
        image_size=None,
        resize_size=None,
        shuffle=None,
        seed=None,
        num_parallel_calls=None,
        with_clusters=False,
        augmentation=None,
        drop_remainder=None,
    ):
        """Builds the `tf.data` input pipeline; see `keras_dml.data.pipeline.make_tf_dataset`.

        Args:
            training: bool. Augmentation (and by default shuffling and dropping the last
                partial batch) when `True`; when `False`, images at `image_size` pass
                unchanged and others are resized + center cropped. Defaults to `False`.
            batch_size: int. Batch size without a sampler. Defaults to `32`.
            sampler: object with `batch_size`, `num_batches` and `epoch_batches()` (see the
                pipeline module); batches then follow the sampler. Defaults to `None`.
            image_size: int or (height, width). Crop size. Defaults to `None`
                (the dataset's `image_size`).
            resize_size: int. Shorter side before cropping. Defaults to `None` (the
                dataset's `resize_size`, else `image_size * 256 / 224`).
            shuffle: bool. Defaults to `None` (`training`).
            seed: int. Seed of shuffling and augmentation. Defaults to `None`.
            num_parallel_calls: int. Parallel decode calls. Defaults to `None` (AUTOTUNE).
            with_clusters: bool. Yield `(images, {"labels", "clusters"})` from a sampler with
                `yields_clusters=True`. Defaults to `False`.
            augmentation: str or callable. Training augmentation: `"none"`, `"flip"`,
                `"crop"`, `"crop_flip"`, `"resized_crop"`, `"resized_crop_flip"` or a Keras
                preprocessing pipeline applied to each batch. Defaults to `None` (the
                dataset's `augmentation`).
            drop_remainder: bool. Defaults to `None` (`training`).

        Returns:
            `tf.data.Dataset` of `(images float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

        Examples:
        >>> ds = ImageDataset([0, 1], images=np.zeros((2, 40, 40, 3), np.uint8), image_size=32)
        >>> images, labels = next(iter(ds.as_tf_dataset(batch_size=2)))
        >>> tuple(images.shape)
        (2, 32, 32, 3)
        """
        from keras_dml.data.pipeline import make_tf_dataset  # optional dependency: tensorflow

        return make_tf_dataset(
            self,
            training=training,
            batch_size=batch_size,
            sampler=sampler,
            image_size=image_size,
            resize_size=resize_size,
            shuffle=shuffle,
            seed=seed,
            num_parallel_calls=num_parallel_calls,
            with_clusters=with_clusters,
            augmentation=augmentation,
            drop_remainder=drop_remainder,
        )

    def as_dataset(
        self,
        training=False,
        batch_size=32,
        sampler=None,
        image_size=None,
        resize_size=None,
        shuffle=None,
        seed=None,
        num_parallel_calls=None,
        with_clusters=False,
        augmentation=None,
        drop_remainder=None,
    ):
        """The input pipeline of the Keras backend: `tf.data` on TensorFlow, else a PyDataset.

        On the TensorFlow backend this is `as_tf_dataset(...)`; on JAX and PyTorch it is
        `keras_dml.data.py_pipeline.make_py_dataset(self, ...)`, which never imports
        TensorFlow. Both take the same arguments (see `as_tf_dataset`), draw the same sampler
        batches for the same `(seed, epoch, step)` and yield the same batch structure; their
        resize kernels differ by at most 1 grey level (`numpy_preprocessing.EVAL_TOLERANCE`; JPEG
        decoders by a few more). With the PyDataset, pass `shuffle=False` to `model.fit` to keep
        the sampler's batch order (Keras otherwise shuffles the order of a PyDataset's batches).

        Args:
            training: bool. Defaults to `False`.
            batch_size: int. Defaults to `32`.
            sampler: batch sampler. Defaults to `None`.
            image_size: int or (height, width). Defaults to `None`.
            resize_size: int. Defaults to `None`.
            shuffle: bool. Defaults to `None` (`training`).
            seed: int. Defaults to `None`.
            num_parallel_calls: int. Parallel decode calls (`tf.data`) or worker processes
                (PyDataset). Defaults to `None`.
            with_clusters: bool. Defaults to `False`.
            augmentation: str or callable. Defaults to `None`.
            drop_remainder: bool. Defaults to `None` (`training`).

        Returns:
            `tf.data.Dataset` (TensorFlow backend) or `keras.utils.PyDataset` of `(images
            float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

        Examples:
        >>> ds = ImageDataset([0, 1], images=np.zeros((2, 40, 40, 3), np.uint8), image_size=32)
        >>> images, labels = next(iter(ds.as_dataset(batch_size=2)))
        >>> tuple(images.shape)
        (2, 32, 32, 3)
        """
        arguments = dict(
            training=training,
            batch_size=batch_size,
            sampler=sampler,
            image_size=image_size,
            resize_size=resize_size,
            shuffle=shuffle,
            seed=seed,
            num_parallel_calls=num_parallel_calls,
            with_clusters=with_clusters,
            augmentation=augmentation,
            drop_remainder=drop_remainder,
        )
        if keras.backend.backend() == "tensorflow":
            return self.as_tf_dataset(**arguments)
        return make_py_dataset(self, **arguments)
