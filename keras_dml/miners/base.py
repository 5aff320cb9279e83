"""Base classes of the miners: objects that choose the triplets or pairs a loss sees."""

from keras_dml.pairs.distances import cosine_similarity_matrix, pairwise_distances, prepare_inputs
from keras_dml.pairs.selected_pairs import selected_pair_masks
from keras_dml.utils.argument_config import ArgumentConfig


class Miner(ArgumentConfig):
    """A serialisable `keras.ops` callable choosing, from a batch, what a metric loss uses.

    As pytorch-metric-learning's miners, a miner is separate from the loss: a loss takes it as
    `miner=` (an object, a registered name or a config dict, see `keras_dml.miners.get`).
    A loss calls `mine` on its own distance (or similarity) matrix, so mining and loss see the
    same numbers; `__call__` computes the matrix from embeddings for use on its own.

    Subclasses set `metric` (`"euclidean"` distances or `"cosine"` similarities, the matrix
    `__call__` computes) and implement `mine`. Their constructor arguments are their config.

    Call arguments:
        embeddings: float tensor `[B, D]`.
        labels: int tensor `[B]`.
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` to mine among.
        seed: int or `keras.random.SeedGenerator` for a random miner. Defaults to `None`.

    Returns:
        A `TripletSelection` (triplet miners) or a `PairSelection` (pair miners).
    """

    metric = "euclidean"

    def __call__(self, embeddings, labels, pair_mask=None, seed=None):
        labels, embeddings = prepare_inputs(labels, embeddings)
        positives, negatives = selected_pair_masks(labels, pair_mask)
        if self.metric == "cosine":
            matrix = cosine_similarity_matrix(embeddings)
        else:
            matrix = pairwise_distances(embeddings)
        return self.mine(
            matrix, positives, negatives, embedding_dim=embeddings.shape[-1], seed=seed
        )

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        """Chooses from a batch's `[B, B]` matrix and its positive and negative pair masks.

        Args:
            matrix: float tensor `[B, B]`: distances (`metric="euclidean"`) or similarities.
            positives: bool tensor `[B, B]`. The positive pairs allowed.
            negatives: bool tensor `[B, B]`. The negative pairs allowed.
            embedding_dim: int or `None`. Width of the embeddings (distance-weighted sampling).
            seed: int or `keras.random.SeedGenerator` for a random miner.

        Returns:
            A `TripletSelection` or a `PairSelection`.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement `mine`.")

    def __eq__(self, other):
        return type(other) is type(self) and other.get_config() == self.get_config()

    def __hash__(self):
        return hash((type(self).__name__, repr(sorted(self.get_config().items()))))

    def __repr__(self):
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.constructor_arguments.items())
        return f"{type(self).__name__}({arguments})"


class TripletMiner(Miner):
    """A miner that returns a `TripletSelection`: one negative per (anchor, positive) slot."""


class PairMiner(Miner):
    """A miner that returns a `PairSelection`: positive and negative pairs."""
