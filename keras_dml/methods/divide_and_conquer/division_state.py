"""Persistence of the Divide & Conquer divisions: one assignment file per division.

`DivideAndConquerCallback` writes the assignment of division n to `state_dir/division_<n>.npz`
and, when a run resumes from a checkpoint, reloads the file matching the restored
`division_count` so training continues with the same clusters and learners.
"""

import logging
import os

import numpy as np

logger = logging.getLogger(__name__)


def division_path(state_dir, count):
    """Path of the assignment file of division `count`.

    Args:
        state_dir: str. Folder of the per-division assignments.
        count: int. Division number (1 for the first division).

    Returns:
        str, `state_dir/division_<count:04d>.npz`.
    """
    return os.path.join(state_dir, f"division_{count:04d}.npz")


def save_division(state_dir, count, assignment):
    """Writes the assignment of division `count` atomically (temporary file, then rename).

    Args:
        state_dir: str or `None`. Folder of the per-division assignments; `None` saves nothing.
        count: int. Division number.
        assignment: 1-D int array, the learner of every training sample.
    """
    if state_dir is None:
        return
    os.makedirs(state_dir, exist_ok=True)
    tmp = division_path(state_dir, count) + ".tmp.npz"
    np.savez(tmp, assignment=assignment, division=count)
    os.replace(tmp, division_path(state_dir, count))


def load_division(state_dir, count, expected_shape):
    """Reads the assignment of division `count`, if it was saved.

    Args:
        state_dir: str or `None`. Folder of the per-division assignments.
        count: int. Division number.
        expected_shape: tuple. Shape of the training labels the assignment must match.

    Returns:
        1-D int64 array, or `None` when `state_dir` is `None` or holds no file for `count`.

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
    """The saved assignment of division `count` for a resumed run, logging the outcome.

    Args:
        state_dir: str or `None`. Folder of the per-division assignments.
        count: int. Division count restored with the model weights (> 0).
        expected_shape: tuple. Shape of the training labels the assignment must match.

    Returns:
        1-D int64 array, or `None` (with a warning: the run re-divides at its first epoch) when
        no assignment was saved for `count`.

    Raises:
        ValueError: when the saved assignment does not match `expected_shape`.
    """
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
