"""Miners: serialisable objects that choose the triplets or pairs a metric loss is computed on."""

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
