"""`pair_mask` in the older pair losses: triplet, margin, multi-similarity, binomial deviance.

`pair_mask[i, j]` True lets the loss use the pair (anchor `i`, reference `j`); mining and sampling
run among the allowed pairs only, anchors without an allowed positive or negative contribute
nothing, and every mean counts only what is kept. The values are checked against float64 loops
written from the definitions, against pytorch-metric-learning (`pair_mask_cases` of
`tests/reference/pml_loss_values.json`: anchors against references, PML's `ref_emb`), and
`pair_mask=None` against values the losses gave before they took a mask.
"""

import inspect
import json
import os

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks
from tests.support.backend_utils import BACKEND, traced
from tests.support.paths import REFERENCE_DIR

REFERENCE = os.path.join(REFERENCE_DIR, "pml_loss_values.json")
with open(REFERENCE) as f:
    PML = json.load(f)["pair_mask_cases"]

FUNCTIONS = {
    "triplet": losses.triplet_loss,
    "margin": losses.margin_loss,
    "multi_similarity": losses.multi_similarity_loss,
    "binomial_deviance": losses.binomial_deviance_loss,
}
CLASSES = {
    "triplet": losses.TripletLoss,
    "margin": losses.MarginLoss,
    "multi_similarity": losses.MultiSimilarityLoss,
    "binomial_deviance": losses.BinomialDevianceLoss,
}


def masked_batch(seed=0, n=12, num_classes=3, dim=6, keep=0.6):
    """Labels, float32 embeddings and a random `[n, n]` mask keeping about `keep` of the pairs."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) % num_classes).astype("int32")
    embeddings = rng.normal(size=(n, dim)).astype("float32")
    return labels, embeddings, rng.random((n, n)) < keep


def allowed(labels, pair_mask, i):
    """The allowed positives and negatives of anchor `i`."""
    others = [j for j in range(len(labels)) if j != i and pair_mask[i, j]]
    return (
        [j for j in others if labels[j] == labels[i]],
        [k for k in others if labels[k] != labels[i]],
    )


def euclidean(embeddings, squared=False):
    x = embeddings.astype("float64")
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return d2 if squared else np.sqrt(d2)


def cosine(embeddings):
    x = embeddings.astype("float64")
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    return x @ x.T


def hinge(d_ap, d_an, margin, soft_margin):
    return np.log1p(np.exp(d_ap - d_an)) if soft_margin else max(d_ap - d_an + margin, 0.0)


def naive_triplet(labels, embeddings, pair_mask, mining, margin=0.2, soft=False, squared=False):
    d = euclidean(embeddings, squared)
    values = []
    for a in range(len(labels)):
        positives, negatives = allowed(labels, pair_mask, a)
        if not positives or not negatives:
            continue
        if mining == "batch-hard":
            hardest_p = max(d[a, p] for p in positives)
            hardest_n = min(d[a, k] for k in negatives)
            values.append(hinge(hardest_p, hardest_n, margin, soft))
            continue
        for p in positives:
            if mining == "all":
                values += [hinge(d[a, p], d[a, k], margin, soft) for k in negatives]
                continue
            farther = [d[a, k] for k in negatives if d[a, k] > d[a, p]]
            d_an = min(farther) if farther else max(d[a, k] for k in negatives)
            values.append(hinge(d[a, p], d_an, margin, soft))
    return float(np.mean(values)) if values else 0.0


def naive_margin(labels, embeddings, pair_mask, beta=1.2, margin=0.2, cutoff=0.5, nu=0.0):
    """Margin loss, `"closest"` negatives, `normalize_by="pairs"`: the r-th allowed positive of
    an anchor with its r-th closest allowed negative at distance >= cutoff."""
    x = embeddings / np.linalg.norm(embeddings.astype("float64"), axis=1, keepdims=True)
    d = euclidean(x)
    terms, num_pos, num_neg = [], 0, 0
    for i in range(len(labels)):
        positives, negatives = allowed(labels, pair_mask, i)
        eligible = sorted((k for k in negatives if d[i, k] >= cutoff), key=lambda k: d[i, k])
        for rank, j in enumerate(positives):
            terms.append(max(margin + d[i, j] - beta, 0.0) + nu * beta)
            num_pos += 1
            if rank < len(eligible):
                terms.append(max(margin + beta - d[i, eligible[rank]], 0.0) + nu * beta)
                num_neg += 1
    return sum(terms) / len(terms) if num_pos and num_neg else 0.0


def naive_multi_similarity(labels, embeddings, pair_mask, alpha=2.0, beta=50.0, base=1.0, eps=0.1):
    s = cosine(embeddings)
    total, anchors = 0.0, 0
    for i in range(len(labels)):
        positives, negatives = allowed(labels, pair_mask, i)
        anchors += bool(positives or negatives)
        if not positives or not negatives:
            continue
        mined_p = [j for j in positives if s[i, j] - eps < max(s[i, k] for k in negatives)]
        mined_n = [k for k in negatives if s[i, k] + eps > min(s[i, j] for j in positives)]
        if mined_p and mined_n:
            total += np.log1p(sum(np.exp(-alpha * (s[i, j] - base)) for j in mined_p)) / alpha
            total += np.log1p(sum(np.exp(beta * (s[i, k] - base)) for k in mined_n)) / beta
    return total / max(anchors, 1)


def naive_binomial_deviance(labels, embeddings, pair_mask, balance, a=2.0, b=0.5, cost=25.0):
    s = cosine(embeddings)
    pos, neg = [], []
    for i in range(len(labels)):
        positives, negatives = allowed(labels, pair_mask, i)
        pos += [np.log1p(np.exp(-a * (s[i, j] - b))) for j in positives]
        neg += [np.log1p(np.exp(cost * a * (s[i, k] - b))) for k in negatives]
    if not pos or not neg:
        return 0.0
    if balance == "joint":
        return (sum(pos) + sum(neg)) / (len(pos) + len(neg))
    return np.mean(pos) + np.mean(neg)


# case: (loss name, keras-dml arguments, float64 loop of the same definition)
NAIVE_CASES = {
    "triplet_semi_hard": (
        "triplet",
        {"mining": "semi-hard"},
        lambda y, x, m: naive_triplet(y, x, m, "semi-hard"),
    ),
    "triplet_batch_hard": (
        "triplet",
        {"mining": "batch-hard", "margin": 0.5},
        lambda y, x, m: naive_triplet(y, x, m, "batch-hard", margin=0.5),
    ),
    "triplet_all_squared": (
        "triplet",
        {"mining": "all", "squared": True},
        lambda y, x, m: naive_triplet(y, x, m, "all", squared=True),
    ),
    "triplet_semi_hard_soft": (
        "triplet",
        {"mining": "semi-hard", "soft_margin": True},
        lambda y, x, m: naive_triplet(y, x, m, "semi-hard", soft=True),
    ),
    "margin_closest": (
        "margin",
        {"sampling": "closest", "normalize_by": "pairs", "nu": 0.1},
        lambda y, x, m: naive_margin(y, x, m, nu=0.1),
    ),
    "multi_similarity": ("multi_similarity", {}, naive_multi_similarity),
    "multi_similarity_wide_epsilon": (
        "multi_similarity",
        {"alpha": 1.0, "beta": 10.0, "base": 0.5, "epsilon": 0.3},
        lambda y, x, m: naive_multi_similarity(y, x, m, 1.0, 10.0, 0.5, 0.3),
    ),
    "binomial_deviance": (
        "binomial_deviance",
        {},
        lambda y, x, m: naive_binomial_deviance(y, x, m, "separate"),
    ),
    "binomial_deviance_joint": (
        "binomial_deviance",
        {"balance": "joint"},
        lambda y, x, m: naive_binomial_deviance(y, x, m, "joint"),
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        "triplet_semi_hard",
        "triplet_batch_hard",
        "triplet_all_squared",
        "triplet_semi_hard_soft",
        "margin_closest",
        "multi_similarity",
        "multi_similarity_wide_epsilon",
        "binomial_deviance",
        "binomial_deviance_joint",
    ],
)
def test_random_mask_equals_naive_loop(case):
    name, arguments, naive = NAIVE_CASES[case]
    labels, embeddings, pair_mask = masked_batch()
    masked = float(FUNCTIONS[name](labels, embeddings, pair_mask=pair_mask, **arguments))
    expected = naive(labels, embeddings, pair_mask)
    np.testing.assert_allclose(masked, expected, rtol=1e-5, atol=1e-6)
    # The mask matters: the loss over every pair is a different number.
    full = float(FUNCTIONS[name](labels, embeddings, **arguments))
    assert abs(full - expected) > 1e-3


@pytest.mark.parametrize(
    "case", ["triplet_semi_hard", "margin_closest", "multi_similarity", "binomial_deviance"]
)
def test_mask_keeping_a_subset_equals_the_loss_of_the_subset(case):
    name, arguments, _ = NAIVE_CASES[case]
    checks.pair_mask_selects_pairs(FUNCTIONS[name], **arguments)


def one_negative_per_anchor(labels, seed=0):
    """A mask allowing every positive pair and exactly one (random) negative per anchor."""
    rng = np.random.default_rng(seed)
    pair_mask = labels[:, None] == labels[None, :]
    for i in range(len(labels)):
        pair_mask[i, rng.choice(np.flatnonzero(labels != labels[i]))] = True
    return pair_mask


def test_random_negatives_are_drawn_among_the_allowed_ones():
    """With one allowed negative per anchor, random mining and distance-weighted sampling have a
    single choice, so the (stochastic) losses equal the loops of that choice."""
    labels, embeddings, _ = masked_batch(2)
    pair_mask = one_negative_per_anchor(labels)
    triplet = losses.triplet_loss(labels, embeddings, mining="random", seed=3, pair_mask=pair_mask)
    # semi-hard with a single candidate negative picks it too
    expected = naive_triplet(labels, embeddings, pair_mask, "semi-hard")
    np.testing.assert_allclose(float(triplet), expected, rtol=1e-5)
    margin = losses.margin_loss(
        labels, embeddings, normalize_by="pairs", seed=3, pair_mask=pair_mask
    )
    # every positive pair of an anchor is matched with the anchor's one negative
    x = embeddings / np.linalg.norm(embeddings.astype("float64"), axis=1, keepdims=True)
    d, terms = euclidean(x), []
    for i in range(len(labels)):
        positives, (negative,) = allowed(labels, pair_mask, i)
        for j in positives:
            terms += [max(0.2 + d[i, j] - 1.2, 0.0), max(0.2 + 1.2 - d[i, negative], 0.0)]
    np.testing.assert_allclose(float(margin), np.mean(terms), rtol=1e-5)
    full = losses.margin_loss(labels, embeddings, normalize_by="pairs", seed=3)
    assert abs(float(margin) - float(full)) > 1e-3


def test_anchor_without_allowed_pairs_contributes_nothing_and_is_not_counted():
    labels, embeddings, _ = masked_batch(3)
    pair_mask = np.ones((12, 12), bool)
    pair_mask[0, :] = False  # anchor 0 uses no pair; others still use pairs with 0 as reference
    for name, function in FUNCTIONS.items():
        arguments = {"sampling": "closest"} if name == "margin" else {}
        masked, count = function(
            labels, embeddings, pair_mask=pair_mask, return_count=True, **arguments
        )
        full, full_count = function(labels, embeddings, return_count=True, **arguments)
        assert 0 < int(count) < int(full_count), name
    # multi-similarity: the mean runs over the 11 anchors that use a pair
    value = losses.multi_similarity_loss(labels, embeddings, pair_mask=pair_mask)
    np.testing.assert_allclose(
        float(value), naive_multi_similarity(labels, embeddings, pair_mask), rtol=1e-5
    )


@pytest.mark.parametrize("loss", ["multi_similarity", "triplet"])
def test_anchors_against_references_equal_pytorch_metric_learning(loss):
    cases = [case for case in PML["cases"] if case["loss"] == loss]
    assert len(cases) >= 4
    for case in cases:
        batch = PML["batches"][case["batch"]]
        labels = np.asarray(batch["labels"] + batch["ref_labels"], "int32")
        embeddings = np.asarray(batch["embeddings"] + batch["ref_embeddings"], "float32")
        num_anchors = len(batch["labels"])
        pair_mask = np.zeros((len(labels), len(labels)), bool)
        pair_mask[:num_anchors, num_anchors:] = True
        ours = FUNCTIONS[loss](labels, embeddings, pair_mask=pair_mask, **case["arguments"])
        # float32 here, float64 in PML. Measured: relative differences up to 1.4e-7.
        np.testing.assert_allclose(float(ours), case["pml_value"], rtol=1e-5, err_msg=str(case))


# `(loss, count)` of the losses on `unmasked_batch()` before they took `pair_mask` (commit
# 577870b): `pair_mask=None` must give them still.
UNMASKED_BATCH_LABELS = [0, 1, 2, 0, 1, 2, 0, 1, 3, 2]
STORED = [
    ("triplet", {"mining": "semi-hard"}, 0.1906154751777649, 18),
    ("triplet", {"mining": "batch-hard", "margin": 0.5}, 2.3998146057128906, 9),
    ("triplet", {"mining": "all", "squared": True}, 3.196561813354492, 126),
    ("triplet", {"mining": "all", "soft_margin": True}, 0.9566385746002197, 126),
    (
        "margin",
        {"sampling": "closest", "nu": 0.1, "normalize_by": "pairs"},
        0.5539019703865051,
        36,
    ),
    ("margin", {"sampling": "closest"}, 0.43390199542045593, 36),
    ("multi_similarity", {}, 1.2889331579208374, 64),
    (
        "multi_similarity",
        {"epsilon": 0.3, "alpha": 1.0, "beta": 10.0, "base": 0.5},
        1.6214416027069092,
        72,
    ),
    ("binomial_deviance", {}, 3.383847236633301, 90),
    ("binomial_deviance", {"balance": "joint"}, 1.879446029663086, 90),
]
# Seeded stochastic mining: the draws differ between backends, so the values are per backend.
STORED_SEEDED = {
    "triplet": (
        {"mining": "random"},
        {"tensorflow": 0.7482437491416931, "jax": 0.6241025924682617, "torch": 0.5854360461235046},
        18,
    ),
    "margin": (
        {},
        {"tensorflow": 0.5349642634391785, "jax": 0.5597812533378601, "torch": 0.524619996547699},
        36,
    ),
}


def unmasked_batch():
    rng = np.random.default_rng(31)
    labels = np.asarray(UNMASKED_BATCH_LABELS, "int32")
    return labels, rng.normal(size=(10, 6)).astype("float32")


@pytest.mark.parametrize(
    "name,arguments,value,count", STORED, ids=[f"{s[0]}-{i}" for i, s in enumerate(STORED)]
)
def test_no_mask_gives_the_values_from_before_pair_mask(name, arguments, value, count):
    labels, embeddings = unmasked_batch()
    loss, num = FUNCTIONS[name](labels, embeddings, return_count=True, **arguments)
    # Stored from TensorFlow; the code path is unchanged (bit-identical on each backend when
    # measured), JAX's and PyTorch's kernels round differently by up to 3e-7.
    np.testing.assert_allclose(float(loss), value, rtol=1e-6)
    assert int(num) == count


@pytest.mark.parametrize("name", sorted(STORED_SEEDED))
def test_no_mask_gives_the_seeded_values_from_before_pair_mask(name):
    arguments, values, count = STORED_SEEDED[name]
    labels, embeddings = unmasked_batch()
    seed = keras.random.SeedGenerator(7)
    loss, num = FUNCTIONS[name](labels, embeddings, seed=seed, return_count=True, **arguments)
    np.testing.assert_allclose(float(loss), values[BACKEND], rtol=1e-6)
    assert int(num) == count


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_mask_of_the_wrong_shape_is_a_one_line_error(name):
    labels, embeddings, _ = masked_batch()
    with pytest.raises(ValueError, match=r"`pair_mask` must be a \[batch_size, batch_size\]") as e:
        FUNCTIONS[name](labels, embeddings, pair_mask=np.ones((12, 11), bool))
    assert "\n" not in str(e.value) and "12 labels" in str(e.value)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_loss_classes_forward_pair_mask_to_their_function(name):
    """What a wrapper such as cross-batch memory calls: the class's function with its keyword
    arguments and a `pair_mask`."""
    loss_obj = CLASSES[name](seed=0) if name in ("triplet", "margin") else CLASSES[name]()
    assert "pair_mask" in inspect.signature(loss_obj.fn).parameters
    labels, embeddings, pair_mask = masked_batch(4)
    kwargs = dict(loss_obj._fn_kwargs)
    if name in ("triplet", "margin"):
        kwargs["seed"] = 5  # a fixed int seed: the same draws in both calls
    masked = loss_obj.fn(labels, embeddings, pair_mask=pair_mask, **kwargs)
    direct = FUNCTIONS[name](labels, embeddings, pair_mask=pair_mask, **kwargs)
    assert float(masked) == float(direct)
    assert float(masked) != float(loss_obj.fn(labels, embeddings, **kwargs))


@pytest.mark.parametrize("case", sorted(NAIVE_CASES))
def test_graph_mode_with_unknown_batch_size_matches_eager(case):
    name, arguments, _ = NAIVE_CASES[case]
    labels, embeddings, pair_mask = masked_batch(5)
    function = FUNCTIONS[name]
    graph = traced(
        lambda y, x, m: function(y, x, pair_mask=m, return_count=True, **arguments),
        [((None,), "int32"), ((None, 6), "float32"), ((None, None), "bool")],
    )
    loss, count = graph(labels, embeddings, pair_mask)
    eager, eager_count = function(
        labels, embeddings, pair_mask=pair_mask, return_count=True, **arguments
    )
    np.testing.assert_allclose(float(loss), float(eager), rtol=1e-5)
    assert int(count) == int(eager_count) > 0


def test_graph_mode_samples_among_the_allowed_negatives():
    """Random mining and distance-weighted sampling traced with a `SeedGenerator` (as in `fit`):
    with one allowed negative per anchor the draw has one outcome, the eager value."""
    labels, embeddings, _ = masked_batch(2)
    pair_mask = one_negative_per_anchor(labels)
    signature = [((None,), "int32"), ((None, 6), "float32"), ((None, None), "bool")]
    for function, arguments in (
        (losses.triplet_loss, {"mining": "random"}),
        (losses.margin_loss, {"normalize_by": "pairs"}),
    ):
        seed = keras.random.SeedGenerator(3)
        graph = traced(
            lambda y, x, m, f=function, a=arguments, s=seed: f(y, x, pair_mask=m, seed=s, **a),
            signature,
            state=[seed.state],
        )
        eager = function(labels, embeddings, pair_mask=pair_mask, seed=4, **arguments)
        np.testing.assert_allclose(
            float(graph(labels, embeddings, pair_mask)), float(eager), rtol=1e-5
        )
