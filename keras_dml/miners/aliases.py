"""The string options of the losses (`mining=`, `sampling=`, `epsilon=`) as miners.

Each loss that mined with a string option before miners were objects keeps the option: it builds
the same miner, so `TripletLoss(mining="semi-hard")` and `TripletLoss(miner=SemiHardMiner())`
compute the same values. A loss gets either the option or `miner=`, never both.
"""

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
    """The triplet miner of `mining=` (`"semi-hard"` when both are `None`) or of `miner=`.

    Args:
        mining: `None` or one of `"random"`, `"semi-hard"`, `"batch-hard"`, `"all"`.
        miner: `None`, a triplet miner, a registered name or a config dict.
        loss: str. The loss's name, for the messages.

    Returns:
        A `TripletMiner`.

    Raises:
        ValueError: for both arguments, an unknown option or a pair miner.

    Examples:
    >>> triplet_miner("batch-hard")
    BatchHardMiner()
    """
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
    """The margin loss's negative miner of `sampling=` (and its cutoffs) or of `miner=`.

    Args:
        sampling: `None` (`"distance_weighted"`), `"distance_weighted"` or `"closest"`.
        cutoff: float or `None` (`0.5`). The samplers' lower distance cutoff.
        nonzero_loss_cutoff: float or `None` (`1.4`). Distance-weighted sampling's upper cutoff
            (the closest-negative selection has none).
        miner: `None`, a triplet miner with negative indices, a registered name or a dict.

    Returns:
        A `TripletMiner`.

    Raises:
        ValueError: for `miner` with a sampling option, an unknown sampling, a pair miner or
            the all-triplets miner.
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
    """The multi-similarity loss's pair miner of `epsilon=` (`0.1` when `None`) or `miner=`.

    Raises:
        ValueError: for both arguments or a triplet miner.
    """
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
