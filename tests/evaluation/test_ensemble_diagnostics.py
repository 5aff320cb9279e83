import numpy as np
import pytest

from keras_dml.evaluation.ensemble_diagnostics import (
    classifier_correlation,
    ensemble_diagnostics,
    feature_correlation,
)


def test_feature_correlation_extremes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 6))
    assert feature_correlation(x) < 0.05
    duplicated = np.concatenate([x[:, :1]] * 4, axis=1) * np.array([1, -2, 3, 4])
    np.testing.assert_allclose(feature_correlation(duplicated, learner_dims=(4,)), 1.0, atol=1e-6)


def test_classifier_correlation_identical_and_independent_learners():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 5))
    same = classifier_correlation(np.concatenate([a, 2 * a], axis=1), (5, 5))
    np.testing.assert_allclose(same["mean"], 1.0, atol=1e-6)
    independent = classifier_correlation(np.concatenate([a, rng.normal(size=(200, 5))], 1), (5, 5))
    assert abs(independent["mean"]) < 0.1
    assert np.isnan(classifier_correlation(a, (5,))["mean"])
    sampled = classifier_correlation(np.concatenate([a, 2 * a], axis=1), (5, 5), max_pairs=500)
    np.testing.assert_allclose(sampled["mean"], 1.0, atol=1e-6)


def test_ensemble_diagnostics_per_learner_recall():
    labels = np.repeat(np.arange(4), 3)
    rng = np.random.default_rng(0)
    good = np.eye(4)[labels] + 0.01 * rng.normal(size=(12, 4))  # separates the classes
    bad = rng.normal(size=(12, 3))  # noise
    result = ensemble_diagnostics(np.concatenate([good, bad], 1), labels, (4, 3))
    assert result["learner_recall@1"][0] == 1.0
    assert result["learner_recall@1"][1] < 1.0
    assert 0.0 <= result["feature_correlation"] <= 1.0
    assert np.isfinite(result["classifier_correlation"])
    assert set(result) >= {"recall@1", "classifier_correlation_matrix"}
    with pytest.raises(ValueError, match="learner_dims"):
        ensemble_diagnostics(good, labels, (3, 3))
