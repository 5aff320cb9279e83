"""Preconditions of `HierarchicalDivideAndConquerCallback`: valid arguments, model and data."""

import numpy as np

from keras_dml.methods.division.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    check_division_arguments,
)


def check_callback_arguments(division_every, cluster_on, split_attempts, sampler):
    """Validates the arguments of `HierarchicalDivideAndConquerCallback`.

    Args:
        division_every: int. E, epochs between divisions (positive).
        cluster_on: str. One of `CLUSTER_ON`.
        split_attempts: int. 2-means seeds tried per cluster (>= 1).
        sampler: object with a `set_clusters(assignment)` method.

    Raises:
        ValueError: for a malformed argument.
    """
    check_division_arguments("division_every", division_every, cluster_on, sampler)
    if int(split_attempts) < 1:
        raise ValueError(f"`split_attempts` must be >= 1. Received: {split_attempts}")


def check_training_setup(model, labels):
    """Checks, at train begin, that `model` and `labels` can be divided up to K_max clusters.

    Every cluster needs 2 classes with 2 or more samples (a positive pair and a negative), so
    K_max clusters need at least 2 * K_max such classes.

    Args:
        model: the model being trained; a `HierarchicalDivideAndConquer`.
        labels: 1-D int array of training labels.

    Raises:
        ValueError: when `model` is not a `HierarchicalDivideAndConquer`, the training set has
            fewer than 2 * K_max classes with 2 or more samples, or the model stores an
            assignment of another number of samples than `labels`.

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1 (one cluster per learner, up to K_max).
    """
    if not hasattr(model, "split_learners"):
        raise ValueError(
            "HierarchicalDivideAndConquerCallback needs a HierarchicalDivideAndConquer model. "
            f"Received {type(model).__name__}."
        )
    usable = int(np.sum(np.unique(labels, return_counts=True)[1] >= 2))
    if 2 * model.max_learners > usable:
        raise ValueError(
            f"Hierarchical D&C with max_learners={model.max_learners} needs at least "
            f"{2 * model.max_learners} classes with 2 or more training samples (every cluster "
            f"needs 2 such classes), but the training set has {usable}. Use a smaller "
            "max_learners."
        )
    if model.num_train_samples not in (None, labels.size):
        raise ValueError(
            f"The model stores an assignment of num_train_samples={model.num_train_samples} "
            f"samples but `labels` has {labels.size}."
        )
