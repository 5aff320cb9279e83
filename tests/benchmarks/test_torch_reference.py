"""`benchmarks/accuracy/torch_reference.py`: the PML rows' losses are the definitions the docs say.

Needs torch and pytorch-metric-learning (the benchmark's own dependencies, not the tests'):
skipped without them. The loss definitions themselves are compared with PML's stored values in
`tests/losses/test_pml_*reference.py`, which always run.
"""

import numpy as np
import pytest

from tests.support.helpers import benchmark_script

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_metric_learning")


def batch(num_classes=4, per_class=3, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(num_classes), per_class)
    x = rng.normal(size=(len(labels), dim)).astype("float32")
    return labels, x / np.linalg.norm(x, axis=1, keepdims=True)


def pml_value(loss, labels, x):
    with torch.no_grad():
        return float(loss(torch.tensor(x), torch.tensor(labels)))


def test_cosface_recipe_is_keras_dml_default_cosface():
    from keras_dml.losses import cosface_loss

    labels, x = batch()
    weights = np.random.default_rng(1).normal(size=(4, 8)).astype("float32")
    loss = benchmark_script("accuracy.torch_reference").RECIPES["cosface"][0](4, 8)
    with torch.no_grad():
        loss.W.copy_(torch.tensor(weights.T))  # PML holds W as [dim, num_classes]
    expected = float(cosface_loss(labels, x, weights))
    assert pml_value(loss, labels, x) == pytest.approx(expected, rel=1e-5)


def test_abe_contrastive_recipe_is_eq_10_with_the_positive_and_negative_pairs_apart():
    from keras_dml.losses import contrastive_loss

    labels, x = batch()
    loss = benchmark_script("accuracy.torch_reference").RECIPES["abe_contrastive"][0](4, 8)
    kwargs = {"similarity": "squared_euclidean", "margin": 1.0}
    separate = float(contrastive_loss(labels, x, balance="separate", **kwargs))
    joint = float(contrastive_loss(labels, x, **kwargs))  # the baseline row's default
    assert pml_value(loss, labels, x) == pytest.approx(separate, rel=1e-5)
    # The reduction is the one difference the docs name, and it is not a rounding one.
    assert abs(separate - joint) > 0.5 * joint


def test_triplet_recipe_mines_pml_semi_hard_triplets_at_the_rows_margin():
    module = benchmark_script("accuracy.torch_reference")
    loss_factory, miner_factory, _ = module.RECIPES["triplet"]
    rows = benchmark_script("accuracy.rows")
    miner, loss = miner_factory(), loss_factory(4, 8)
    assert miner.type_of_triplets == "semihard"
    assert miner.margin == loss.margin == rows.LOSSES["triplet"]["margin"]
