"""Class-balanced batch drawing shared by the samplers: shuffled cycles of classes and images."""

import numpy as np


def validate_labels(labels, name="labels"):
    """Returns `labels` as a 1-D int64 array or raises a `ValueError` naming the problem."""
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValueError(
            f"`{name}` must be a 1-D array of integer ids. Received shape {array.shape}."
        )
    if array.size == 0:
        raise ValueError(f"`{name}` is empty: a sampler needs at least one batch worth of samples.")
    if not np.issubdtype(array.dtype, np.integer):
        rounded = np.asarray(array, dtype=np.float64)
        if not np.all(np.isfinite(rounded)) or not np.all(rounded == np.round(rounded)):
            raise ValueError(
                f"`{name}` must hold integer ids. Received dtype {array.dtype} "
                "with non-integer values."
            )
    return array.astype(np.int64)


def validate_batch_shape(m, batch_size):
    """Checks `m` and `batch_size` and returns the number of classes per batch."""
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise ValueError(f"`m` (images per class) must be a positive integer. Received: m={m!r}")
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool):
        raise ValueError(
            f"`batch_size` must be a positive integer. Received: batch_size={batch_size!r}"
        )
    if batch_size < 1 or batch_size % m != 0:
        raise ValueError(
            "`batch_size` must be a positive multiple of `m` (each batch holds batch_size / m "
            f"classes x m images). Received: batch_size={batch_size}, m={m}. "
            f"Try batch_size={max(1, batch_size // m) * m} or {(batch_size // m + 1) * m}."
        )
    return int(batch_size // m)


def group_by_class(indices, labels):
    """Groups `indices` by `labels[indices]`; returns (class ids, list of int64 index arrays)."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.size == 0:
        return np.zeros((0,), np.int64), []
    sub_labels = labels[indices]
    order = np.argsort(sub_labels, kind="stable")
    sorted_labels = sub_labels[order]
    classes, starts = np.unique(sorted_labels, return_index=True)
    groups = np.split(indices[order], starts[1:])
    return classes, groups


class ClassPool:
    """Draws class-balanced batches from a fixed set of classes.

    Args:
        groups: list of non-empty 1-D int64 arrays. The sample indices of each class.
        m: int. Images per class in a batch.

    Examples:
    >>> rng = np.random.default_rng(0)
    >>> pool = ClassPool([np.array([0, 1]), np.array([2, 3])], m=2)
    >>> sorted(pool.draw(rng, classes_per_batch=2).tolist())
    [0, 1, 2, 3]
    """

    def __init__(self, groups, m):
        self.groups = [np.asarray(group, dtype=np.int64) for group in groups]
        self.m = int(m)
        self.num_classes = len(self.groups)
        self.num_samples = int(sum(group.size for group in self.groups))
        self.reset()

    def reset(self):
        """Empties both cursors: the next draw starts fresh cycles of classes and images."""
        self._image_queues = [np.zeros((0,), np.int64) for _ in self.groups]
        self._class_queue = np.zeros((0,), np.int64)

    def _next_classes(self, rng, count):
        """Takes `count` distinct classes from the shuffled class queue, refilling it as needed."""
        taken = self._class_queue[:count]
        self._class_queue = self._class_queue[count:]
        if taken.size < count:
            # Refill; keep the classes already taken for this batch out of its head so the batch
            # holds distinct classes, and put them back at the tail of the new queue.
            fresh = rng.permutation(self.num_classes)
            fresh = np.concatenate([fresh[~np.isin(fresh, taken)], taken])
            need = count - taken.size
            taken = np.concatenate([taken, fresh[:need]])
            self._class_queue = fresh[need:]
        return taken

    def _next_images(self, rng, class_index):
        """Takes `m` images of one class: distinct if the class has at least `m` images."""
        group = self.groups[class_index]
        if group.size < self.m:
            extra = rng.choice(group, size=self.m - group.size, replace=True)
            return np.concatenate([rng.permutation(group), extra])
        queue = self._image_queues[class_index]
        taken = queue[: self.m]
        queue = queue[self.m :]
        if taken.size < self.m:
            fresh = rng.permutation(group)
            fresh = np.concatenate([fresh[~np.isin(fresh, taken)], fresh[np.isin(fresh, taken)]])
            need = self.m - taken.size
            taken = np.concatenate([taken, fresh[:need]])
            queue = fresh[need:]
        self._image_queues[class_index] = queue
        return taken

    def draw(self, rng, classes_per_batch):
        """Returns one batch: `min(classes_per_batch, num_classes)` classes x `m` int64 indices."""
        count = min(int(classes_per_batch), self.num_classes)
        classes = self._next_classes(rng, count)
        return np.concatenate([self._next_images(rng, c) for c in classes]).astype(np.int64)
