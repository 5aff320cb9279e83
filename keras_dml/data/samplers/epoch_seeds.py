"""Randomness of an epoch as a pure function of `(seed, epoch[, step])`, so a resume replays it."""

import numpy as np

# `np.random.SeedSequence` takes non-negative integers; any int seed is folded into 64 bits.
_SEED_BITS = (1 << 64) - 1


def check_seed(seed):
    """Returns `seed` as an int in `[0, 2**64)`, or a fresh random one for `None`.

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
    """The NumPy generator of one epoch: the same `(seed, epoch)` gives the same draws."""
    return np.random.default_rng(np.random.SeedSequence([seed, int(epoch)]))


def batch_seed(seed, epoch, step):
    """The int64 stateless seed `[2]` of the augmentation of batch `step` of `epoch`.

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
