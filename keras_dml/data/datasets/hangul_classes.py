"""Which Hangul syllables are classes: the KS X 1001 pool, split into train / test / pretrain."""

from keras_dml.data.datasets.character_classes import benchmark_classes, pretrain_classes


def ks_x_1001_syllables():
    """The 2,350 precomposed Hangul syllables of KS X 1001, in code point order.

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
    """`benchmark_classes` of the `ks_x_1001_syllables`: training then test syllables.

    Examples:
    >>> hangul_classes(2, 1, render_seed=0)
    ['홉', '괏', '컹']
    """
    return benchmark_classes(
        ks_x_1001_syllables(), num_train_classes, num_test_classes, render_seed
    )


def hangul_pretrain_classes(num_train_classes, num_test_classes, render_seed=0):
    """`pretrain_classes` of the `ks_x_1001_syllables`: the syllables in neither set.

    Examples:
    >>> len(hangul_pretrain_classes(300, 1000))
    1050
    """
    return pretrain_classes(
        ks_x_1001_syllables(),
        num_train_classes,
        num_test_classes,
        render_seed,
        noun="Hangul syllable",
    )
