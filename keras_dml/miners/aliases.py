"""The losses' string options (`mining=`, `sampling=`, `epsilon=`) as the miners they build."""

from keras_dml.miners.all_triplets import AllTripletsMiner
from keras_dml.miners.base import PairMiner, TripletMiner
from keras_dml.miners.batch_hard import BatchHardMiner
from keras_dml.miners.closest import ClosestNegativeMiner
from keras_dml.miners.distance_weighted import DistanceWeightedMiner
from keras_dml.miners.multi_similarity import MultiSimilarityMiner
from keras_dml.miners.random_negative import RandomNegativeMiner
from keras_dml.miners.registry import get
from keras_dml.miners.semi_hard import SemiHardMiner

TRIPLET_MINING = {
    "random": RandomNegativeMiner,
    "semi-hard": SemiHardMiner,
    "batch-hard": BatchHardMiner,
    "all": AllTripletsMiner,
}
SAMPLINGS = ("distance_weighted", "closest")


def triplet_miner(mining=None, miner=None, loss="triplet"):
    """The `TripletMiner` of `mining=` (`"semi-hard"` when both are `None`) or of `miner=`."""
    if miner is None:
        mining = "semi-hard" if mining is None else mining
        if mining not in TRIPLET_MINING:
            raise ValueError(
                f"`mining` must be one of {tuple(TRIPLET_MINING)}. Received: mining={mining!r}"
            )
        return TRIPLET_MINING[mining]()
    _only_one(loss, "mining", mining)
    return _of_kind(get(miner), TripletMiner, loss)


def margin_miner(sampling=None, cutoff=None, nonzero_loss_cutoff=None, miner=None):
    """The margin loss's `TripletMiner` of `sampling=` and its cutoffs, or of `miner=`.

    Defaults: `"distance_weighted"`, `cutoff` `0.5`, `nonzero_loss_cutoff` `1.4`.
    """
    if miner is None:
        sampling = "distance_weighted" if sampling is None else sampling
        if sampling not in SAMPLINGS:
            raise ValueError(
                f"`sampling` must be one of {SAMPLINGS}. Received: sampling={sampling!r}"
            )
        cutoff = 0.5 if cutoff is None else cutoff
        if sampling == "closest":
            return ClosestNegativeMiner(cutoff)
        nonzero = 1.4 if nonzero_loss_cutoff is None else nonzero_loss_cutoff
        return DistanceWeightedMiner(cutoff, nonzero)
    for name, value in (("sampling", sampling), ("cutoff", cutoff)):
        _only_one("margin", name, value)
    _only_one("margin", "nonzero_loss_cutoff", nonzero_loss_cutoff)
    resolved = _of_kind(get(miner), TripletMiner, "margin")
    if isinstance(resolved, AllTripletsMiner):
        raise ValueError(
            "The margin loss pairs each positive with one negative; AllTripletsMiner gives "
            "every negative: use a contrastive loss for all pairs, or another triplet miner."
        )
    return resolved


def multi_similarity_miner(epsilon=None, miner=None):
    """The multi-similarity loss's `PairMiner` of `epsilon=` (`0.1` when `None`) or `miner=`."""
    if miner is None:
        return MultiSimilarityMiner(0.1 if epsilon is None else epsilon)
    _only_one("multi_similarity", "epsilon", epsilon)
    return _of_kind(get(miner), PairMiner, "multi_similarity")


def _only_one(loss, option, value):
    if value is not None:
        raise ValueError(
            f"The {loss} loss got both `miner` and `{option}`, an option that builds a miner: "
            f"pass one of them. Received: {option}={value!r}"
        )


def _of_kind(miner, kind, loss):
    if not isinstance(miner, kind):
        wanted, other = ("triplets", "pairs") if kind is TripletMiner else ("pairs", "triplets")
        raise ValueError(
            f"The {loss} loss takes a {kind.__name__} (it is computed on {wanted}); "
            f"{type(miner).__name__} selects {other}. Received: miner={miner!r}"
        )
    return miner
