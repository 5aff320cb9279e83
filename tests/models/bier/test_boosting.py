import math

import pytest

from keras_dml.models.boosting.weights import (
    PAPER_GROUP_SIZES,
    boosting_group_sizes,
    boosting_weights,
    proportional_group_sizes,
    shrinkage_rates,
)

# Table 14 as printed (the 512 / 4 row sums to 510 in the paper; see boosting.py).
TABLE_14 = {
    (512, 2): (170, 342),
    (512, 3): (96, 160, 256),
    (512, 4): (52, 102, 152, 204),
    (512, 5): (34, 68, 102, 138, 170),
    (1024, 3): (170, 342, 512),
    (1024, 4): (102, 204, 308, 410),
    (1024, 5): (68, 136, 204, 274, 342),
    (1024, 6): (50, 96, 148, 196, 242, 292),
    (1024, 7): (36, 74, 110, 148, 182, 218, 256),
}


@pytest.mark.parametrize("num_learners", [1, 2, 3, 5, 8])
def test_alphas_follow_the_recursion(num_learners):
    etas = shrinkage_rates(num_learners)
    assert etas[0] == 1.0
    alphas = boosting_weights(num_learners)
    assert math.isclose(sum(alphas), 1.0)
    for m, alpha in enumerate(alphas, start=1):
        assert math.isclose(alpha, 2 * m / (num_learners * (num_learners + 1)))
    # Simulate the running score with unit learner scores s^m = e_m: weights of Eq. 3.
    running = [0.0] * num_learners
    for m, eta in enumerate(etas):
        running = [(1 - eta) * r for r in running]
        running[m] += eta
    assert all(math.isclose(a, b) for a, b in zip(running, alphas))


@pytest.mark.parametrize("key", sorted(TABLE_14))
def test_paper_table(key):
    sizes = boosting_group_sizes(*key)
    assert sum(sizes) == key[0]
    if key == (512, 4):
        assert sizes == (52, 102, 154, 204)  # misprint corrected, sums to 512
    else:
        assert sizes == TABLE_14[key]
    assert boosting_group_sizes(384, 3) == (64, 128, 192)


@pytest.mark.parametrize("key", sorted(TABLE_14))
def test_proportional_rule_is_close_to_the_table(key):
    sizes = proportional_group_sizes(*key)
    assert sum(sizes) == key[0]
    assert all(s % 2 == 0 for s in sizes)
    if key != (512, 3):  # 96-160-256 is hand-chosen (proportional: 86-170-256)
        assert max(abs(a - b) for a, b in zip(sizes, TABLE_14[key])) <= 2


def test_unlisted_sizes_and_errors():
    assert boosting_group_sizes(64, 3) == (10, 22, 32)
    assert sum(boosting_group_sizes(101, 3)) == 101
    assert min(boosting_group_sizes(6, 3)) >= 1
    assert boosting_group_sizes(512, 3, use_paper_table=False) == (86, 170, 256)
    assert set(PAPER_GROUP_SIZES) >= set(TABLE_14)
    with pytest.raises(ValueError, match="num_learners"):
        boosting_weights(0)
    with pytest.raises(ValueError, match="too small"):
        proportional_group_sizes(4, 3)
