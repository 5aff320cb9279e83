"""Preconditions of `HierarchicalDivideAndConquerCallback`: valid arguments, model and data."""

import numpy as np

from keras_dml.methods.division.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    check_division_arguments,
)


def check_callback_arguments(division_every, cluster_on, split_attempts, sampler):
    """Raises a `ValueError` for a malformed argument of `HierarchicalDivideAndConquerCallback`."""
    check_division_arguments("division_every", division_every, cluster_on, sampler)
    if int(split_attempts) < 1:
        raise ValueError(f"`split_attempts` must be >= 1. Received: {split_attempts}")


def check_training_setup(model, labels):
    """Checks at train begin that `labels` can fill K_max clusters of 2 classes with 2 samples.

    Raises:
        ValueError: for another model, too few classes, or a stored assignment of another size.
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
