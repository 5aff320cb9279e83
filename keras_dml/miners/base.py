"""Base classes of the miners: objects that choose the triplets or pairs a loss sees."""

from keras_dml.pairs.batch import pair_batch
from keras_dml.utils.argument_config import ArgumentConfig


class Miner(ArgumentConfig):
    """A serialisable `keras.ops` callable choosing, from a batch, what a metric loss uses.

    Called as `miner(embeddings, labels, pair_mask=None, seed=None)`, it returns a
    `TripletSelection` or a `PairSelection`; a subclass sets `metric` and implements `mine`.
    """

    metric = "euclidean"

    def __call__(self, embeddings, labels, pair_mask=None, seed=None):
        embeddings, matrix, positives, negatives = pair_batch(
            labels, embeddings, self.metric, pair_mask
        )
        return self.mine(
            matrix, positives, negatives, embedding_dim=embeddings.shape[-1], seed=seed
        )

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        """Chooses from a `[B, B]` matrix (distances or similarities, `metric`) and its pair masks.

        Args:
            matrix: float tensor `[B, B]`.
            positives, negatives: bool tensors `[B, B]`. The positive and negative pairs allowed.
            embedding_dim: int or `None`. Width of the embeddings.
            seed: int or `keras.random.SeedGenerator` for a random miner.
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

    # True for a miner that scores every (anchor, positive, negative): `[B, M, M]` tensors.
    scores_every_triplet = False


class PairMiner(Miner):
    """A miner that returns a `PairSelection`: positive and negative pairs."""
