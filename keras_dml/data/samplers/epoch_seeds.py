"""Randomness of a training epoch as a pure function of `(seed, epoch[, step])`.

Why not one generator that advances through the run: its state lives in the process, so a run
killed and resumed at epoch e (`keras.callbacks.BackupAndRestore`) would start it over and draw
epoch 0's batches and crops again, ending elsewhere than the uninterrupted run. Deriving each
epoch's sampler generator, and each batch's augmentation seed, from the run's seed and the epoch
(and step) index makes the resumed epoch draw exactly what the uninterrupted one drew, with no
extra state in the checkpoint. `SamplerEpochCallback` (`epoch_callback`) tells the sampler
which epoch Keras runs.
"""

import numpy as np

# `np.random.SeedSequence` takes non-negative integers; any int seed is folded into 64 bits.
_SEED_BITS = (1 << 64) - 1


def check_seed(seed):
    """Returns `seed` as a non-negative int, or a fresh random one for `None` (unseeded).

    Args:
        seed: int or `None`.

    Returns:
        int in `[0, 2**64)`.

    Raises:
        ValueError: if `seed` is not an int or `None`.

    Examples:
    >>> check_seed(-1) == 2**64 - 1
    True
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy) & _SEED_BITS
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"`seed` must be an int or None. Received: seed={seed!r}")
    return int(seed) & _SEED_BITS


def epoch_generator(seed, epoch):
    """The NumPy generator of one epoch: the same `(seed, epoch)` gives the same draws.

    Args:
        seed: int (from `check_seed`).
        epoch: int >= 0.

    Returns:
        `np.random.Generator`.

    Examples:
    >>> a, b = epoch_generator(0, 3), epoch_generator(0, 3)
    >>> int(a.integers(1000)) == int(b.integers(1000))
    True
    """
    return np.random.default_rng(np.random.SeedSequence([seed, int(epoch)]))


def batch_seed(seed, epoch, step):
    """The stateless seed `[2]` (int64) of the augmentation of batch `step` of `epoch`.

    Args:
        seed: int (from `check_seed`).
        epoch: int >= 0.
        step: int >= 0. The batch's position in its epoch.

    Returns:
        int64 array of shape `[2]`, for TensorFlow's `stateless_*` random ops.

    Examples:
    >>> batch_seed(0, 1, 2).tolist() == batch_seed(0, 1, 2).tolist() != batch_seed(0, 1, 3).tolist()
    True
    """
    words = np.random.SeedSequence([seed, int(epoch), int(step)]).generate_state(2)
    return words.astype(np.int64)


def check_epoch(epoch):
    """Returns `epoch` as an int or raises a one-line `ValueError` (a negative or non-int)."""
    if not isinstance(epoch, (int, np.integer)) or isinstance(epoch, bool) or epoch < 0:
        raise ValueError(f"`epoch` must be an int >= 0. Received: epoch={epoch!r}")
    return int(epoch)
