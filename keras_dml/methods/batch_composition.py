"""Class-balanced batches fitted to the training split: `batch_size` and `m_per_class`."""

import numpy as np

TARGET_BATCH = 64
MIN_M = 4


def usable_classes(labels):
    """Number of classes with at least two images (only those can form positive pairs)."""
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    return int(np.sum(counts >= 2))


def fit_batch_composition(batch_size, m_per_class, num_classes):
    """Chooses `(batch_size, m_per_class)` with `2 <= batch_size / m_per_class <= num_classes`.

    Args:
        batch_size: int or `None`. `None`: about `TARGET_BATCH`.
        m_per_class: int or `None`. `None`: at least `MIN_M`.
        num_classes: int. Classes with two or more images in the training split.

    Raises:
        ValueError: when the split or the user's settings cannot give such batches.

    Examples:
    >>> fit_batch_composition(None, None, 4)
    (64, 16)
    >>> fit_batch_composition(None, None, 100)
    (64, 4)
    >>> fit_batch_composition(None, 8, 4)
    (32, 8)
    """
    if num_classes < 2:
        raise ValueError(
            "Metric learning needs at least 2 training classes with 2 or more images each, but "
            f"the training split has {num_classes}. Use a dataset with more classes. "
            f"Received: num_classes={num_classes}"
        )
    if batch_size is None and m_per_class is None:
        classes = min(TARGET_BATCH // MIN_M, num_classes)
        m_per_class = TARGET_BATCH // classes
        return classes * m_per_class, m_per_class
    if batch_size is None:
        classes = max(2, min(TARGET_BATCH // m_per_class, num_classes))
        return classes * m_per_class, m_per_class
    if m_per_class is None:
        classes = min(max(2, batch_size // MIN_M), num_classes)
        while classes > 2 and batch_size % classes:
            classes -= 1
        if batch_size % classes or batch_size // classes < 1:
            raise ValueError(
                f"--batch-size {batch_size} cannot be split into 2 or more classes of equal "
                f"size. Use an even --batch-size or set --m-per-class. "
                f"Received: batch_size={batch_size}"
            )
        return batch_size, batch_size // classes
    classes = batch_size // m_per_class
    if classes < 2 or classes > num_classes:
        raise ValueError(
            f"Batches of {batch_size} images with {m_per_class} per class need {classes} classes, "
            f"but the training split has {num_classes} classes with 2 or more images (and a "
            "batch needs at least 2). Set --batch-size / --m-per-class (config keys `batch_size`, "
            f"`m_per_class`) so that 2 <= batch_size / m_per_class <= {num_classes}, e.g. "
            f"--batch-size {min(num_classes, 16) * m_per_class} --m-per-class {m_per_class}. "
            f"Received: batch_size={batch_size}, m_per_class={m_per_class}"
        )
    return batch_size, m_per_class
