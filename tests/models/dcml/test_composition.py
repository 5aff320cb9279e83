"""DCML's composites use the SIGNED compositor weights (Zheng et al., CVPR 2021, Eq. 4-6)."""

import numpy as np

from keras_dml.models.composition.objective import compose
from tests.support.backend_utils import to_numpy


def test_composites_match_eq_6_loop_with_signed_weights():
    rng = np.random.default_rng(0)
    sub = rng.normal(size=(3, 4, 5)).astype("float32")  # N = 3 samples, K = 4 learners, d = 5
    weights = rng.normal(size=(3, 2, 4)).astype("float32")  # M = 2 compositors
    assert (weights < 0).any() and (weights > 0).any()
    raw = to_numpy(compose(sub, weights, normalize=False))
    normalised = to_numpy(compose(sub, weights))
    for n in range(3):
        for m in range(2):
            z = sum(float(weights[n, m, k]) * sub[n, k].astype(np.float64) for k in range(4))
            np.testing.assert_allclose(raw[n, m], z, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(normalised[n, m], z / np.linalg.norm(z), rtol=1e-5)
