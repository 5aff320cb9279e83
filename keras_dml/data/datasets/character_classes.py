"""Which characters of a pool are classes: seeded train / test classes, and the pretrain rest."""

import numpy as np


def benchmark_classes(pool, num_train_classes, num_test_classes, render_seed=0):
    """Seeded, disjoint choice of the training then the test characters of `pool`.

    Raises:
        ValueError: counts below 1 (train: 2) or above the pool's size together.

    Examples:
    >>> benchmark_classes("abcdef", 2, 1, render_seed=0)
    ['d', 'c', 'f']
    """
    total = int(num_train_classes) + int(num_test_classes)
    if int(num_train_classes) < 2 or int(num_test_classes) < 1 or total > len(pool):
        raise ValueError(
            f"Need num_train_classes >= 2, num_test_classes >= 1 and at most {len(pool)} "
            f"classes together. Received: num_train_classes={num_train_classes}, "
            f"num_test_classes={num_test_classes}"
        )
    order = np.random.default_rng(render_seed).permutation(len(pool))[:total]
    return [pool[i] for i in order]


def pretrain_classes(pool, num_train_classes, num_test_classes, render_seed=0, noun="character"):
    """The characters of `pool` in neither the training nor the test set, for pretraining.

    Raises:
        ValueError: counts `benchmark_classes` rejects, or no character is left.

    Examples:
    >>> pretrain_classes("abcdef", 2, 1, render_seed=0)
    ['e', 'a', 'b']
    """
    chosen = set(benchmark_classes(pool, num_train_classes, num_test_classes, render_seed))
    order = np.random.default_rng(render_seed).permutation(len(pool))
    remaining = [pool[i] for i in order if pool[i] not in chosen]
    if not remaining:
        raise ValueError(
            f"No {noun} is left for pretraining: the training and test classes use all "
            f"{len(pool)}. Use fewer num_train_classes or num_test_classes."
        )
    return remaining
