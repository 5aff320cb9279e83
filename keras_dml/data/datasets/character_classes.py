"""Which characters of a fixed pool are classes: seeded train / test classes and the pretrain rest.

Shared by the rendered-character datasets (`hangul`, `kanji`): one seeded permutation of the pool
gives the training classes, then the unseen test classes; the characters in neither form the
`pretrain` class set.
"""

import numpy as np


def benchmark_classes(pool, num_train_classes, num_test_classes, render_seed=0):
    """Seeded choice of the training and the unseen test characters of `pool` (disjoint).

    Args:
        pool: sequence of str. Every character that can be a class, in a fixed order.
        num_train_classes: int. Training characters (train + val).
        num_test_classes: int. Test characters.
        render_seed: int. Seed of the permutation. Defaults to `0`.

    Returns:
        list of str: the training characters followed by the test characters.

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

    The papers fine-tune a backbone pretrained on other classes (ImageNet); on a rendered
    benchmark the same regime pretrains on these characters.

    Args:
        pool: sequence of str. Every character that can be a class, in a fixed order.
        num_train_classes: int. Training characters of the benchmark.
        num_test_classes: int. Test characters of the benchmark.
        render_seed: int. Seed of the permutation. Defaults to `0`.
        noun: str. What a character is called in the error (`"Hangul syllable"`).
            Defaults to `"character"`.

    Returns:
        list of str: the remaining characters, in the seeded permutation's order.

    Raises:
        ValueError: for counts `benchmark_classes` rejects, or when no character is left.

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
