"""BIER's diversity losses against naive loops of their equations (TPAMI 2020, Eq. 4-9)."""

import numpy as np

from keras_dml.layers.diversity import ActivationDiversity, AdversarialDiversity
from tests.support.backend_utils import to_numpy

SIZES = (2, 3, 4)


def features(seed=0, n=5):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)).astype("float32") for d in SIZES]


def test_activation_loss_matches_eq_4_to_6_loop():
    f = features()
    rng = np.random.default_rng(1)
    # Non-square kernels [h, d_m] whose columns (output units) have different norms.
    kernels = [rng.normal(size=(7, d)).astype("float32") * 0.5 for d in SIZES]
    lambda_weight = 3.0
    loss = float(to_numpy(ActivationDiversity(SIZES, lambda_weight=lambda_weight)(f, kernels)))
    n = f[0].shape[0]
    suppression = 0.0
    for x in range(n):
        for i in range(len(SIZES)):
            for j in range(i + 1, len(SIZES)):
                for k in range(SIZES[i]):
                    for m in range(SIZES[j]):
                        suppression += (float(f[i][x, k]) * float(f[j][x, m])) ** 2  # Eq. 4
    weight = sum(
        (float(np.dot(w[:, unit], w[:, unit])) - 1.0) ** 2  # Eq. 5: one vector per output unit
        for w in kernels
        for unit in range(w.shape[1])
    )
    np.testing.assert_allclose(loss, suppression / n + lambda_weight * weight, rtol=1e-5)  # Eq. 6


def test_adversarial_similarity_matches_eq_7_loop():
    f = features(seed=2)
    layer = AdversarialDiversity(SIZES, hidden_units=6, lambda_weight=0.0)
    losses = [float(to_numpy(value)) for value in layer.similarity_losses(f)]
    assert len(losses) == 3
    for (i, j), (hidden, output), value in zip(layer.pairs, layer.regressors, losses):
        w1, b1 = to_numpy(hidden.kernel), to_numpy(hidden.bias)
        w2, b2 = to_numpy(output.kernel), to_numpy(output.bias)
        total = 0.0
        for x in range(f[0].shape[0]):
            g = np.maximum(f[j][x] @ w1 + b1, 0.0) @ w2 + b2  # g_(j,i): learner j -> learner i
            total += sum((float(f[i][x, k]) * float(g[k])) ** 2 for k in range(SIZES[i]))
        expected = total / f[0].shape[0] / SIZES[j]  # Eq. 7: 1/d_j, then the batch mean
        np.testing.assert_allclose(value, expected, rtol=1e-5, err_msg=f"pair ({i}, {j})")
