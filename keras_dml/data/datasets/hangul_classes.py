"""Which Hangul syllables are classes: the KS X 1001 pool, split into train / test / pretrain."""

import numpy as np


def ks_x_1001_syllables():
    """The 2,350 precomposed Hangul syllables of KS X 1001, in code point order.

    Returns:
        list of str (single characters).

    Examples:
    >>> syllables = ks_x_1001_syllables()
    >>> len(syllables), syllables[0]
    (2350, '가')
    """
    syllables = []
    for codepoint in range(0xAC00, 0xAC00 + 11172):
        try:
            if len(chr(codepoint).encode("euc_kr")) == 2:
                syllables.append(chr(codepoint))
        except UnicodeEncodeError:
            continue
    return syllables


def hangul_classes(num_train_classes, num_test_classes, render_seed=0):
    """Seeded choice of the training and the unseen test syllables (disjoint).

    Args:
        num_train_classes: int. Training syllables (train + val).
        num_test_classes: int. Test syllables.
        render_seed: int. Seed of the permutation. Defaults to `0`.

    Returns:
        list of str: the training syllables followed by the test syllables.

    Raises:
        ValueError: counts below 1 (train: 2) or above the 2,350 syllables together.
    """
    pool = ks_x_1001_syllables()
    total = int(num_train_classes) + int(num_test_classes)
    if int(num_train_classes) < 2 or int(num_test_classes) < 1 or total > len(pool):
        raise ValueError(
            f"Need num_train_classes >= 2, num_test_classes >= 1 and at most {len(pool)} "
            f"classes together. Received: num_train_classes={num_train_classes}, "
            f"num_test_classes={num_test_classes}"
        )
    order = np.random.default_rng(render_seed).permutation(len(pool))[:total]
    return [pool[i] for i in order]


def hangul_pretrain_classes(num_train_classes, num_test_classes, render_seed=0):
    """The syllables in neither the training nor the test set: a disjoint pretraining set.

    The papers fine-tune a backbone pretrained on other classes (ImageNet); on this benchmark
    the same regime pretrains on these syllables (2,350 - 1,300 = 1,050 by default).

    Args:
        num_train_classes: int. Training syllables of the benchmark.
        num_test_classes: int. Test syllables of the benchmark.
        render_seed: int. Seed of the permutation. Defaults to `0`.

    Returns:
        list of str: the remaining syllables, in the seeded permutation's order.

    Raises:
        ValueError: for counts `hangul_classes` rejects, or when no syllable is left.
    """
    chosen = set(hangul_classes(num_train_classes, num_test_classes, render_seed))
    pool = ks_x_1001_syllables()
    order = np.random.default_rng(render_seed).permutation(len(pool))
    remaining = [pool[i] for i in order if pool[i] not in chosen]
    if not remaining:
        raise ValueError(
            "No Hangul syllable is left for pretraining: the training and test classes use all "
            f"{len(pool)}. Use fewer num_train_classes or num_test_classes."
        )
    return remaining
