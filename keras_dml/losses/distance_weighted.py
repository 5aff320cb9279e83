"""Moved: the negative selectors live in `keras_dml.miners` (re-exported here).

`distance_weighted_probabilities` and `sample_negatives` are in
`keras_dml.miners.distance_weighted`, `closest_negatives` in `keras_dml.miners.closest`.
"""

from keras_dml.miners.closest import closest_negatives
from keras_dml.miners.distance_weighted import distance_weighted_probabilities, sample_negatives

__all__ = ["closest_negatives", "distance_weighted_probabilities", "sample_negatives"]
