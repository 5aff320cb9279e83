"""Optimizer policies of the methods: per-variable learning-rate multipliers on any backend."""

from keras_dml.optimizers.learning_rate_multipliers import (
    LearningRateMultipliers,
    find_multipliers,
    with_multipliers,
)

__all__ = ["LearningRateMultipliers", "find_multipliers", "with_multipliers"]
