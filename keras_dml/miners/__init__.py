"""Miners: serialisable objects that choose the triplets or pairs a metric loss is computed on.

As pytorch-metric-learning's miners, they are separate from the losses: every pair loss takes
`miner=` (a `Miner`, a registered name or a `{"name": ...}` dict). Triplet miners
(`SemiHardMiner`, `BatchHardMiner`, `RandomNegativeMiner`, `DistanceWeightedMiner`,
`ClosestNegativeMiner`, `AllTripletsMiner`) return a `TripletSelection` that the triplet and
margin losses consume; pair miners (`MultiSimilarityMiner`, `AllPairsMiner`) return a
`PairSelection` that the multi-similarity loss consumes and that any loss taking a `pair_mask`
uses as its pairs. The losses' string options (`mining="semi-hard"`, `sampling="closest"`,
`epsilon=0.1`) build the same miners (`keras_dml.miners.aliases`).
"""

from keras_dml.miners.all_pairs import AllPairsMiner
from keras_dml.miners.all_triplets import AllTripletsMiner
from keras_dml.miners.base import Miner, PairMiner, TripletMiner
from keras_dml.miners.batch_hard import BatchHardMiner
from keras_dml.miners.closest import ClosestNegativeMiner, closest_negatives
from keras_dml.miners.distance_weighted import (
    DistanceWeightedMiner,
    distance_weighted_probabilities,
    sample_negatives,
)
from keras_dml.miners.multi_similarity import MultiSimilarityMiner
from keras_dml.miners.random_negative import RandomNegativeMiner
from keras_dml.miners.registry import MINERS, get, list_miners
from keras_dml.miners.semi_hard import SemiHardMiner
from keras_dml.pairs.selections import PairSelection, TripletSelection

__all__ = [
    "MINERS",
    "AllPairsMiner",
    "AllTripletsMiner",
    "BatchHardMiner",
    "ClosestNegativeMiner",
    "DistanceWeightedMiner",
    "Miner",
    "MultiSimilarityMiner",
    "PairMiner",
    "PairSelection",
    "RandomNegativeMiner",
    "SemiHardMiner",
    "TripletMiner",
    "TripletSelection",
    "closest_negatives",
    "distance_weighted_probabilities",
    "get",
    "list_miners",
    "sample_negatives",
]
