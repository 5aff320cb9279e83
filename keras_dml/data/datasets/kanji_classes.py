"""Which kanji can be classes: the 2,965 level-1 kanji of JIS X 0208, computed from the codec."""

# JIS X 0208 rows (ku) of the level-1 kanji; row 47 ends after cell 51 (2,965 in all).
LEVEL_1_ROWS = range(16, 48)


def jis_x_0208_level1_kanji():
    """The 2,965 level-1 kanji of JIS X 0208 (rows 16-47, decoded from EUC-JP), in JIS order.

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
