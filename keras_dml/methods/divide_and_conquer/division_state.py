"""The Divide & Conquer divisions on disk: `state_dir/division_<n>.npz`, reloaded on resume."""

import logging
import os

import numpy as np

logger = logging.getLogger(__name__)


def division_path(state_dir, count):
    """`state_dir/division_<count:04d>.npz`, the assignment file of division `count` (from 1)."""
    return os.path.join(state_dir, f"division_{count:04d}.npz")


def save_division(state_dir, count, assignment):
    """Writes the assignment of division `count` atomically; nothing when `state_dir` is `None`."""
    if state_dir is None:
        return
    os.makedirs(state_dir, exist_ok=True)
    tmp = division_path(state_dir, count) + ".tmp.npz"
    np.savez(tmp, assignment=assignment, division=count)
    os.replace(tmp, division_path(state_dir, count))


def load_division(state_dir, count, expected_shape):
    """The saved assignment of division `count`, or `None` when there is none.

    Raises:
        ValueError: when the saved assignment does not match `expected_shape`.
    """
    if state_dir is None or not os.path.exists(division_path(state_dir, count)):
        return None
    path = division_path(state_dir, count)
    with np.load(path) as state:
        assignment = state["assignment"].astype(np.int64)
    if assignment.shape != tuple(expected_shape):
        raise ValueError(
            f"The saved assignment {path} has {assignment.size} "
            f"entries but the training set has {int(np.prod(expected_shape))} samples."
        )
    return assignment


def restore_division(state_dir, count, expected_shape):
    """`load_division` for a resumed run, logging a warning when nothing was saved."""
    assignment = load_division(state_dir, count, expected_shape)
    if assignment is not None:
        logger.info("D&C resumed division %d from %s", count, division_path(state_dir, count))
        return assignment
    logger.warning(
        "D&C: the model has %d divisions but no saved assignment (state_dir=%r); "
        "re-dividing at the first epoch.",
        count,
        state_dir,
    )
    return None
