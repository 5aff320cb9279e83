"""Preconditions of `DivideAndConquerCallback`: valid arguments, and enough classes to divide."""

import numpy as np

from keras_dml.methods.division.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    check_division_arguments,
)

CONQUER_SAMPLING = ("clusters", "all")


def check_callback_arguments(recluster_every, cluster_on, conquer_sampling, sampler):
    """Raises a `ValueError` for a malformed argument of `DivideAndConquerCallback`."""
    check_division_arguments("recluster_every", recluster_every, cluster_on, sampler)
    if conquer_sampling not in CONQUER_SAMPLING:
        raise ValueError(
            f"`conquer_sampling` must be one of {CONQUER_SAMPLING}. "
            f"Received: conquer_sampling={conquer_sampling!r}"
        )


def check_enough_classes(labels, num_learners):
    """Raises unless `labels` has 2 * K classes with 2 samples (each cluster needs 2)."""
    num = num_learners
    usable = int(np.sum(np.unique(labels, return_counts=True)[1] >= 2))
    if 2 * num > usable:
        raise ValueError(
            f"Divide & Conquer with K={num} learners needs at least 2 * K = {2 * num} classes "
            f"with 2 or more training samples (every cluster needs 2 such classes), but the "
            f"training set has {usable}. Use fewer learners (num_learners)."
        )
