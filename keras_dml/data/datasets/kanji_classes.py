"""Which kanji are classes: the JIS X 0208 level-1 pool, split into train / test / pretrain."""

from keras_dml.data.datasets.character_classes import benchmark_classes, pretrain_classes

# JIS X 0208 rows (ku) of the level-1 kanji; row 47 ends after cell 51 (2,965 in all).
LEVEL_1_ROWS = range(16, 48)


def jis_x_0208_level1_kanji():
    """The 2,965 level-1 kanji of JIS X 0208 (rows 16-47), in JIS (reading) order.

    Decoded from EUC-JP, where row r, cell c is the byte pair `(0xA0 + r, 0xA0 + c)`; the
    unassigned cells at the end of row 47 do not decode and are skipped.

    Returns:
        list of str (single characters).

    Examples:
    >>> kanji = jis_x_0208_level1_kanji()
    >>> len(kanji), kanji[0], kanji[-1]
    (2965, '亜', '腕')
    """
    kanji = []
    for row in LEVEL_1_ROWS:
        for cell in range(1, 95):
            try:
                kanji.append(bytes((0xA0 + row, 0xA0 + cell)).decode("euc_jp"))
            except UnicodeDecodeError:
                continue
    return kanji


def kanji_classes(num_train_classes, num_test_classes, render_seed=0):
    """Seeded choice of the training and the unseen test kanji (disjoint).

    Args:
        num_train_classes: int. Training kanji (train + val).
        num_test_classes: int. Test kanji.
        render_seed: int. Seed of the permutation. Defaults to `0`.

    Returns:
        list of str: the training kanji followed by the test kanji.

    Raises:
        ValueError: counts below 1 (train: 2) or above the 2,965 kanji together.
    """
    return benchmark_classes(
        jis_x_0208_level1_kanji(), num_train_classes, num_test_classes, render_seed
    )


def kanji_pretrain_classes(num_train_classes, num_test_classes, render_seed=0):
    """The kanji in neither the training nor the test set: a disjoint pretraining set.

    2,965 - 1,300 = 1,665 by default.

    Args:
        num_train_classes: int. Training kanji of the benchmark.
        num_test_classes: int. Test kanji of the benchmark.
        render_seed: int. Seed of the permutation. Defaults to `0`.

    Returns:
        list of str: the remaining kanji, in the seeded permutation's order.

    Raises:
        ValueError: for counts `kanji_classes` rejects, or when no kanji is left.
    """
    return pretrain_classes(
        jis_x_0208_level1_kanji(),
        num_train_classes,
        num_test_classes,
        render_seed,
        noun="kanji",
    )
