"""Preconditions of `DivideAndConquerCallback`: valid arguments, and enough classes to divide."""

import numpy as np

from keras_dml.methods.division.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    check_division_arguments,
)

CONQUER_SAMPLING = ("clusters", "all")


def check_callback_arguments(recluster_every, cluster_on, conquer_sampling, sampler):
    """Validates the arguments of `DivideAndConquerCallback`.

    Args:
        recluster_every: int. T, epochs between divisions (positive).
        cluster_on: str. One of `CLUSTER_ON`.
        conquer_sampling: str. One of `CONQUER_SAMPLING`.
        sampler: object with a `set_clusters(assignment)` method.

    Raises:
        ValueError: for a malformed argument.
    """
    check_division_arguments("recluster_every", recluster_every, cluster_on, sampler)
    if conquer_sampling not in CONQUER_SAMPLING:
        raise ValueError(
            f"`conquer_sampling` must be one of {CONQUER_SAMPLING}. "
            f"Received: conquer_sampling={conquer_sampling!r}"
        )


def check_enough_classes(labels, num_learners):
    """Checks the training set can be divided among `num_learners` learners.

    Every cluster needs 2 classes with 2 or more samples (a positive pair and a negative), so K
    learners need at least 2 * K such classes.

    Args:
        labels: 1-D int array of training labels.
        num_learners: int. K, the number of clusters.

    Raises:
        ValueError: when the training set has fewer than 2 * K classes with 2 or more samples.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 (one cluster per learner).
    """
    num = num_learners
    usable = int(np.sum(np.unique(labels, return_counts=True)[1] >= 2))
    if 2 * num > usable:
        raise ValueError(
            f"Divide & Conquer with K={num} learners needs at least 2 * K = {2 * num} classes "
            f"with 2 or more training samples (every cluster needs 2 such classes), but the "
            f"training set has {usable}. Use fewer learners (num_learners)."
        )
