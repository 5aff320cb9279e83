"""What a miner returns: the triplets or the pairs a loss is computed on.

Both forms are masks and indices over the `[B, B]` pair grid of the batch, so their shapes are
static and every backend traces them: a miner never gathers a variable number of tuples.
"""

import collections

from keras import ops


class TripletSelection(collections.namedtuple("TripletSelection", ["valid", "negative_index"])):
    """Triplets `(a, p, n)` chosen per (anchor, positive) slot of the pair grid.

    Fields:
        valid: bool tensor `[B, B]`. The slots `(a, p)` that form a triplet (a subset of the
            positive pairs).
        negative_index: int32 tensor `[B, B]`, the negative `n` of slot `(a, p)`; or `None`:
            every negative of `a` (all triplets).
    """


class PairSelection(collections.namedtuple("PairSelection", ["positives", "negatives"])):
    """The positive and the negative pairs `(anchor, other)` chosen from the batch.

    Fields:
        positives: bool tensor `[B, B]`. Chosen positive pairs.
        negatives: bool tensor `[B, B]`. Chosen negative pairs.
    """

    def pair_mask(self):
        """bool `[B, B]`: every chosen pair, the `pair_mask` a pair loss takes."""
        return ops.logical_or(self.positives, self.negatives)
