"""SupCon (Khosla et al. 2020): a naive loop, the conventions of the pair losses."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks


def _naive(labels, x, temperature):
    """Eq. 2 per anchor: -1/|P(i)| sum_p log(e^{s_ip/t} / sum_{a != i} e^{s_ia/t}), averaged."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    s = x @ x.T / temperature
    n = len(labels)
    per_anchor, count = [], 0
    for i in range(n):
        positives = [p for p in range(n) if p != i and labels[p] == labels[i]]
        if not positives or all(labels[k] == labels[i] for k in range(n)):
            continue
        denominator = sum(np.exp(s[i, a]) for a in range(n) if a != i)
        per_anchor.append(-np.mean([np.log(np.exp(s[i, p]) / denominator) for p in positives]))
        count += n - 1
    return float(np.mean(per_anchor)), count


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("temperature", [0.1, 0.5])
def test_supcon_matches_naive_loop(seed, temperature):
    rng = np.random.default_rng(seed)
    labels = np.append(rng.integers(0, 3, size=8), 7)  # class 7: an anchor without positive
    x = rng.normal(size=(9, 5))
    loss, count = losses.supcon_loss(
        labels, x.astype("float32"), temperature=temperature, return_count=True
    )
    expected, expected_count = _naive(labels, x, temperature)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.SupConLoss(temperature=0.1))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.supcon_loss, temperature=0.1)


def test_bad_temperature_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"`temperature` must be > 0.*temperature=-1.0$"):
        losses.SupConLoss(temperature=-1)
