"""What a miner returns: masks and indices over the batch's `[B, B]` pair grid."""

import collections

from keras import ops


class TripletSelection(collections.namedtuple("TripletSelection", ["valid", "negative_index"])):
    """Triplets `(a, p, n)`: `valid` (bool `[B, B]`, the chosen slots `(a, p)`) and `negative_index`
    (int32 `[B, B]`, the negative of each slot; `None`: every negative of `a`).
    """


class PairSelection(collections.namedtuple("PairSelection", ["positives", "negatives"])):
    """The chosen positive and negative pairs `(anchor, other)`, two bool tensors `[B, B]`."""

    def pair_mask(self):
        """bool `[B, B]`: every chosen pair, the `pair_mask` a pair loss takes."""
        return ops.logical_or(self.positives, self.negatives)
