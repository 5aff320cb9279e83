"""Loading one batch of images in NumPy (read, decode, transform), in this or a worker process."""

import numpy as np

from keras_dml.data import numpy_preprocessing

_WORKER_LOADER = None  # the BatchLoader of a worker process, set by `start_worker`


class BatchLoader:
    """Loads the images at given indices, transformed, as a uint8 batch (picklable for workers).

    `images` (in memory) or `paths` hold the images; `augmentation` is a name of `AUGMENTATIONS`,
    or `None` for the evaluation transform.

    Examples:
    >>> loader = BatchLoader(np.zeros((3, 8, 8, 1), np.uint8), None, (8, 8), None, None)
    >>> images, kept, failures = loader.load(np.array([2, 0]), np.array([0, 1]))
    >>> images.shape, kept.tolist(), failures
    ((2, 8, 8, 3), [True, True], [])
    """

    def __init__(self, images, paths, crop_hw, resize_size, augmentation):
        self.images = images
        self.paths = paths
        self.crop_hw = tuple(crop_hw)
        self.resize_size = resize_size
        self.augmentation = augmentation

    def transform(self, image, seed_words, position):
        """The evaluation or training transform of one image (uint8 `[h, w, 3]`)."""
        if self.augmentation is None:
            return numpy_preprocessing.preprocess_for_eval(
                image, self.crop_hw, self.resize_size, "uint8"
            )
        rng = numpy_preprocessing.image_generator(seed_words, position)
        return numpy_preprocessing.preprocess_for_train(
            image, self.crop_hw, rng, self.resize_size, self.augmentation, "uint8"
        )

    def load(self, indices, seed_words):
        """Loads the images at `indices` with the batch's seed words; unreadable files are left out.

        Returns:
            `(images uint8 [K, h, w, 3], kept bool [B], failures)`: `"path (error)"` for each of the
            B - K files that did not load.
        """
        images, kept, failures = [], np.ones(len(indices), bool), []
        for position, index in enumerate(indices):
            if self.images is not None:
                image = self.images[index]
            else:
                try:
                    image = numpy_preprocessing.decode_image_file(self.paths[index])
                except Exception as error:  # PIL raises many types for corrupt data.
                    kept[position] = False
                    failures.append(f"{self.paths[index]} ({type(error).__name__}: {error})")
                    continue
            images.append(self.transform(image, seed_words, position))
        shape = (0, *self.crop_hw, 3)
        batch = np.stack(images) if images else np.zeros(shape, np.uint8)
        return batch, kept, failures


def start_worker(loader):
    """Worker-process initializer: keeps `loader` for the batches this worker loads."""
    global _WORKER_LOADER
    _WORKER_LOADER = loader


def load_in_worker(indices, seed_words):
    """`BatchLoader.load` with the loader given to `start_worker` (run in a worker process)."""
    return _WORKER_LOADER.load(indices, seed_words)
