"""Which Hangul syllables are classes: the KS X 1001 pool, split into train / test / pretrain."""

from keras_dml.data.datasets.character_classes import benchmark_classes, pretrain_classes


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
    return benchmark_classes(
        ks_x_1001_syllables(), num_train_classes, num_test_classes, render_seed
    )


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
    return pretrain_classes(
        ks_x_1001_syllables(),
        num_train_classes,
        num_test_classes,
        render_seed,
        noun="Hangul syllable",
    )
