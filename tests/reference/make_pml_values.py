"""Writes `pml_loss_values.json`: pytorch-metric-learning's values of class-based and pair losses.

Run it (not collected by pytest; torch is not needed at test time) from a separate virtual
environment holding torch and pytorch-metric-learning, e.g.:

    python -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch pytorch-metric-learning numpy
    /tmp/torchenv/bin/python tests/reference/make_pml_values.py [--pair-cases-only]
    /tmp/torchenv/bin/python tests/reference/make_pml_values.py --new-cases-only
    /tmp/torchenv/bin/python tests/reference/make_pml_values.py --xbm-cases-only

`--pair-cases-only` recomputes the pair-loss cases and keeps the stored class-loss cases
byte-identical (a fresh run may differ from them in the last bit of a float64 value).
`--new-cases-only` keeps every stored entry byte-identical and (re)computes only the multi-center
class-loss cases (sub-center ArcFace, SoftTriple) and the FastAP cases.
`--pair-mask-cases-only` keeps every stored entry byte-identical and (re)computes only
`pair_mask_cases` (see the end of this docstring).
`--xbm-cases-only` keeps every stored entry byte-identical and (re)computes only the
cross-batch memory cases.

The file stores fixed batches (labels, embeddings and class weights in keras-dml's
`[num_classes, dim]` layout) and, per case, the batch name, keras-dml's loss arguments, the
pytorch-metric-learning (PML) arguments that give the same definition, and PML's loss, computed
in float64. `tests/losses/test_pml_reference.py` recomputes
keras-dml's float32 value on the same inputs and compares.

How PML's definitions differ from keras-dml's and how each case aligns them (so the comparison is
of the same quantity):
- Weight layout: PML's `NormalizedSoftmaxLoss`, `ArcFaceLoss` and `CosFaceLoss` hold `W` as
  `[dim, num_classes]`; the script assigns the transpose of the stored `[num_classes, dim]`
  matrix. `ProxyAnchorLoss.proxies` and `ProxyNCALoss.proxies` are `[num_classes, dim]` like
  keras-dml's.
- ArcFace margin: PML takes degrees (default 28.6, i.e. 0.49916 rad); keras-dml takes radians
  (default 0.5, the paper's). The script passes `np.degrees(margin)` to PML. Both use the same
  fallback `cos(theta) - m sin(m)` for `theta > pi - m` (PML compares angles, keras-dml the cosine
  with `cos(pi - m)`: the same set); `easy_margin=True` has no PML counterpart and is not compared.
- Proxy-NCA: keras-dml scales embeddings and proxies to norm `scale` (squared distances
  `scale**2` times those of unit vectors); PML normalises both and multiplies the negative
  squared distances by `softmax_scale`, so `softmax_scale = scale**2`. PML's softmax keeps the
  true class in the denominator: compared with keras-dml's `exclude_positive=False` (its default,
  the paper's NCA form, has no PML counterpart).
- ProxyAnchor: PML's `margin` is the paper's (and keras-dml's) `delta`; its `DivisorReducer`
  divides the positive sum by the number of proxies with positives and the negative sum by
  `num_classes`, which is Eq. 4 as keras-dml computes it.
- Reduction: PML's default `MeanReducer` averages the per-sample cross-entropies over the batch,
  as keras-dml does; no miner, no regulariser, default distances (cosine similarity with
  normalised embeddings; `NormalizedSoftmaxLoss` normalises the columns of `W`).
- Precision: PML runs in float64 here (it casts the weights to the embeddings' dtype); keras-dml
  computes in float32.

Pair losses (`pair_cases`, compared by `tests/losses/test_pml_pair_reference.py`) use the labels
and embeddings of the same batches plus the class-balanced `pair_batches`; no miner in PML and
`pair_mask=None` in keras-dml (all pairs). How their definitions are aligned:
- NT-Xent: both score each positive pair against the anchor's negatives only and average over
  ordered positive pairs (PML's `MeanReducer` on `pos_pair` losses); cosine similarity, same
  temperature.
- SupCon: PML's `AvgNonZeroReducer` averages the anchors with a non-zero loss; in these batches
  every anchor with a positive also has a negative, so that is keras-dml's mean over anchors with
  a positive and a negative.
- Circle: PML's `m` and `gamma` are keras-dml's `margin` and `gamma`; both average the anchors
  with a positive and a negative (softplus is never exactly 0).
- Lifted structure: PML's `LiftedStructureLoss` is Oh Song et al.'s Eq. 4 (per ordered positive
  pair `(i, j)`, the negatives of `i` and of `j`, `relu(.)^2 / 2`, averaged) with
  `neg_margin` = keras-dml's `margin` and `pos_margin=0`. PML's default `LpDistance` normalises
  the embeddings; the cases pass `LpDistance(normalize_embeddings=False)` against keras-dml's
  default and the default distance against `normalize_embeddings=True`.
  `GeneralizedLiftedStructureLoss` (Hermans et al.'s per-anchor form) is a different loss.
- N-pairs: PML takes the first positive pair (in row-major order) of each class, i.e. the first
  and second sample of the class, as keras-dml does; its default `DotProductSimilarity`
  normalises the embeddings, so the paper's raw inner products need
  `DotProductSimilarity(normalize_embeddings=False)` (keras-dml's default; the default PML
  distance against `normalize_embeddings=True`). Neither adds the paper's L2 penalty.
- Tuplet margin: PML takes the margin in degrees (default 5.73); keras-dml in radians, so the
  script passes `np.degrees(margin)`. PML's `acos` and keras-dml's `cos(a - b)` expansion agree.
- SNR contrastive: PML's `SignalToNoiseRatioContrastiveLoss` is its contrastive loss on
  `SNRDistance` (`var(x_j - x_i) / var(x_i)`; PML's unbiased variances cancel in the ratio) with
  `pos_margin=0`, `neg_margin` = keras-dml's `margin` and `AvgNonZeroReducer` (the positive and
  negative pairs with non-zero loss averaged separately, then added): keras-dml's
  `normalize_by="nonzero"`. `SNRDistance` normalises the embeddings by default, which the cases
  align as for lifted structure.

Multi-center class losses (`multi_center_batches`, `multi_center_cases`, compared by
`tests/losses/test_pml_multi_center_reference.py`): the batches store `[num_classes * K, dim]`
weights whose rows `c*K .. c*K + K - 1` are class `c`'s, which is PML's column order of `W`
(`view(-1, num_classes, K)`); the script assigns the transpose.
- Sub-center ArcFace: PML's `SubCenterArcFaceLoss(sub_centers=K)` is its ArcFace (same fallback,
  margin in degrees: `np.degrees(margin)`) on the largest cosine over each class's sub-centers.
- SoftTriple: PML's `gamma` argument is keras-dml's `gamma` (PML stores `1 / gamma` and
  multiplies by it); `la`, `margin`, `centers_per_class` are the same. The regulariser (Eq. 10)
  is PML's `SparseCentersRegularizer(num_classes, K)` as `weight_regularizer` with
  `weight_reg_weight` = keras-dml's `tau` (it divides the sum of `sqrt(2 - 2 cos)` over each
  class's center pairs `t < s` by `C K (K - 1)`, as the paper; its `sqrt` adds float64's
  smallest normal number, keras-dml's nothing). `tau=0` cases pass no regulariser.

FastAP (`fast_ap_cases`, same test file) on the labels and embeddings of `batches` and
`pair_batches`: PML's `FastAPLoss(num_bins)` with its default (and required)
`LpDistance(power=2)` on normalised embeddings, no miner; both average `1 - FastAP` over the
queries with a positive.

Pair masks of the older pair losses (`pair_mask_cases`, compared by
`tests/losses/test_pair_mask_older.py`): each case stores anchors and references (labels and
embeddings; some anchor classes have no reference). keras-dml runs on `[anchors; references]` with
a `pair_mask` keeping only the (anchor, reference) pairs; PML runs on the anchors with
`ref_emb`/`ref_labels`, which uses exactly those pairs.
- Multi-similarity: PML's `MultiSimilarityMiner(epsilon)` mines the pairs and
  `MultiSimilarityLoss(alpha, beta, base)` (default `MeanReducer` over the anchors) reduces them;
  keras-dml mines among the allowed pairs and divides by the anchors (rows with an allowed pair).
- Triplet, `mining="all"`: PML's `TripletMarginLoss` with its default all triplets, the
  `MeanReducer` (its default `AvgNonZeroReducer` would skip zero-loss triplets) and
  `LpDistance(normalize_embeddings=False)` (keras-dml uses the embeddings as given; `power=2`
  for `squared=True`). PML's `smooth_loss` is `softplus(d_ap - d_an + margin)`, keras-dml's
  `soft_margin` has no margin: compared with PML's `margin=0`.
- Triplet, `mining="batch-hard"`: PML's `BatchHardMiner` (same `LpDistance`) on `ref_emb` picks
  each anchor's farthest positive and closest negative reference; `TripletMarginLoss` with the
  `MeanReducer` averages over the anchors that have both, as keras-dml does.

Cross-batch memory (`xbm_batches`, `xbm_cases`, compared by
`tests/losses/test_cross_batch_memory.py`): one sequence of class-balanced batches
(4 classes x 2 samples) fed in order to a fresh PML `CrossBatchMemory(loss, embedding_size,
memory_size)` (no miner), whose value after each batch is stored; the memory (20 slots, batches
of 8) wraps around at the third batch. The wrapped losses are aligned as follows:
- Contrastive: PML's `ContrastiveLoss(pos_margin=0, neg_margin=m)` on
  `LpDistance(power=2, normalize_embeddings=False)` (squared distances) with `MeanReducer`
  (positive and negative pairs averaged separately, then added) is keras-dml's
  `contrastive_loss(similarity="squared_euclidean", balance="separate", margin=m)`.
- NT-Xent: as for `pair_cases`.
"""

import json
import os
import sys

import numpy as np
import pytorch_metric_learning
import torch
from pytorch_metric_learning import distances as pml_distances
from pytorch_metric_learning import losses as pml_losses
from pytorch_metric_learning import miners as pml_miners
from pytorch_metric_learning import reducers as pml_reducers
from pytorch_metric_learning import regularizers as pml_regularizers

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pml_loss_values.json")


def make_batch(seed, batch_size, num_classes, dim, present=None):
    """Labels over a subset of the classes (some absent, one with a single sample)."""
    rng = np.random.default_rng(seed)
    present = present or list(range(0, num_classes, 2)) + [1]
    labels = list(rng.choice(present[:-1], size=batch_size - 1)) + [present[-1]]
    labels = [int(y) for y in rng.permutation(labels)]
    embeddings = rng.normal(size=(batch_size, dim))
    weights = rng.normal(size=(num_classes, dim))
    return labels, embeddings, weights


def far_from_target(seed, batch_size, num_classes, dim):
    """A batch where half the samples point away from their class (angles near pi)."""
    labels, embeddings, weights = make_batch(seed, batch_size, num_classes, dim)
    rng = np.random.default_rng(seed + 100)
    for i in range(0, batch_size, 2):
        direction = weights[labels[i]] / np.linalg.norm(weights[labels[i]])
        embeddings[i] = -direction + 0.05 * rng.normal(size=dim)
    return labels, embeddings, weights


def near_target(seed, batch_size, num_classes, dim):
    """A batch where every sample lies close to its class weight (a well-trained state)."""
    labels, embeddings, weights = make_batch(seed, batch_size, num_classes, dim)
    rng = np.random.default_rng(seed + 200)
    for i in range(batch_size):
        direction = weights[labels[i]] / np.linalg.norm(weights[labels[i]])
        embeddings[i] = direction + 0.3 * rng.normal(size=dim)
    return labels, embeddings, weights


BATCHES = {
    "random_b12_c8_d16": lambda: make_batch(0, 12, 8, 16),
    "random_b9_c5_d4": lambda: make_batch(1, 9, 5, 4),
    "random_b16_c10_d32": lambda: make_batch(2, 16, 10, 32),
    "far_from_target_b10_c6_d8": lambda: far_from_target(3, 10, 6, 8),
    "near_target_b10_c6_d8": lambda: near_target(4, 10, 6, 8),
}

# (keras-dml name, keras-dml arguments, PML class, PML arguments giving the same definition)
LOSSES = [
    ("normalized_softmax", {"temperature": 0.05}, "NormalizedSoftmaxLoss", {"temperature": 0.05}),
    ("normalized_softmax", {"temperature": 0.2}, "NormalizedSoftmaxLoss", {"temperature": 0.2}),
    (
        "proxy_anchor",
        {"alpha": 32.0, "delta": 0.1},
        "ProxyAnchorLoss",
        {"alpha": 32, "margin": 0.1},
    ),
    (
        "proxy_anchor",
        {"alpha": 16.0, "delta": 0.2},
        "ProxyAnchorLoss",
        {"alpha": 16, "margin": 0.2},
    ),
    ("arcface", {"scale": 64.0, "margin": 0.5}, "ArcFaceLoss", {"scale": 64, "margin": 0.5}),
    ("arcface", {"scale": 30.0, "margin": 0.3}, "ArcFaceLoss", {"scale": 30, "margin": 0.3}),
    ("cosface", {"scale": 64.0, "margin": 0.35}, "CosFaceLoss", {"scale": 64, "margin": 0.35}),
    ("cosface", {"scale": 30.0, "margin": 0.2}, "CosFaceLoss", {"scale": 30, "margin": 0.2}),
    (
        "proxy_nca",
        {"scale": 3.0, "exclude_positive": False},
        "ProxyNCALoss",
        {"softmax_scale": 9},
    ),
    (
        "proxy_nca",
        {"scale": 1.0, "exclude_positive": False},
        "ProxyNCALoss",
        {"softmax_scale": 1},
    ),
]


def balanced_batch(seed, num_classes, per_class, dim):
    """An m-per-class batch (the library's sampler), shuffled; class weights are unused."""
    rng = np.random.default_rng(seed)
    labels = [int(y) for y in rng.permutation(np.repeat(np.arange(num_classes), per_class))]
    embeddings = rng.normal(size=(len(labels), dim))
    return labels, embeddings, rng.normal(size=(num_classes, dim))


PAIR_BATCHES = {
    "balanced_b12_c3_d8": lambda: balanced_batch(5, 3, 4, 8),
    "two_views_b8_c4_d6": lambda: balanced_batch(6, 4, 2, 6),
}

# A PML distance is named by a string in the JSON: the class, `:raw` for no normalisation.
PAIR_LOSSES = [
    ("ntxent", {"temperature": 0.07}, "NTXentLoss", {"temperature": 0.07}),
    ("ntxent", {"temperature": 0.5}, "NTXentLoss", {"temperature": 0.5}),
    ("supcon", {"temperature": 0.1}, "SupConLoss", {"temperature": 0.1}),
    ("supcon", {"temperature": 0.5}, "SupConLoss", {"temperature": 0.5}),
    ("circle", {"margin": 0.4, "gamma": 80.0}, "CircleLoss", {"m": 0.4, "gamma": 80}),
    ("circle", {"margin": 0.25, "gamma": 256.0}, "CircleLoss", {"m": 0.25, "gamma": 256}),
    (
        "lifted_structure",
        {"margin": 1.0},
        "LiftedStructureLoss",
        {"neg_margin": 1.0, "pos_margin": 0, "distance": "LpDistance:raw"},
    ),
    (
        "lifted_structure",
        {"margin": 0.5, "normalize_embeddings": True},
        "LiftedStructureLoss",
        {"neg_margin": 0.5, "pos_margin": 0},
    ),
    ("npairs", {}, "NPairsLoss", {"distance": "DotProductSimilarity:raw"}),
    ("npairs", {"normalize_embeddings": True}, "NPairsLoss", {}),
    (
        "tuplet_margin",
        {"margin": 0.1, "scale": 64.0},
        "TupletMarginLoss",
        {"margin": 0.1, "scale": 64},
    ),
    (
        "tuplet_margin",
        {"margin": 0.3, "scale": 16.0},
        "TupletMarginLoss",
        {"margin": 0.3, "scale": 16},
    ),
    (
        "snr_contrastive",
        {"margin": 1.0, "normalize_by": "nonzero", "normalize_embeddings": True},
        "SignalToNoiseRatioContrastiveLoss",
        {"pos_margin": 0, "neg_margin": 1.0},
    ),
    (
        "snr_contrastive",
        {"margin": 0.8, "normalize_by": "nonzero"},
        "SignalToNoiseRatioContrastiveLoss",
        {"pos_margin": 0, "neg_margin": 0.8, "distance": "SNRDistance:raw"},
    ),
]


def multi_center_batch(seed, batch_size, num_classes, centers_per_class, dim, near=False):
    """Labels over some classes and `[num_classes * K, dim]` weights; with `near`, every
    embedding lies close to one of its class's centers (a trained state)."""
    labels, embeddings, _ = make_batch(seed, batch_size, num_classes, dim)
    rng = np.random.default_rng(seed + 300)
    weights = rng.normal(size=(num_classes * centers_per_class, dim))
    if near:
        for i, label in enumerate(labels):
            center = weights[label * centers_per_class + rng.integers(centers_per_class)]
            embeddings[i] = center / np.linalg.norm(center) + 0.3 * rng.normal(size=dim)
    return labels, embeddings, weights


# (name, labels/embeddings/weights, K)
MULTI_CENTER_BATCHES = {
    "random_b12_c5_k3_d8": (lambda: multi_center_batch(7, 12, 5, 3, 8), 3),
    "near_center_b10_c4_k4_d6": (lambda: multi_center_batch(8, 10, 4, 4, 6, near=True), 4),
    "random_b9_c6_k2_d16": (lambda: multi_center_batch(9, 9, 6, 2, 16), 2),
}

# (keras-dml name, keras-dml arguments, PML class, PML arguments); K comes from the batch.
MULTI_CENTER_LOSSES = [
    (
        "subcenter_arcface",
        {"scale": 64.0, "margin": 0.5},
        "SubCenterArcFaceLoss",
        {"scale": 64, "margin": 0.5},
    ),
    (
        "subcenter_arcface",
        {"scale": 30.0, "margin": 0.3},
        "SubCenterArcFaceLoss",
        {"scale": 30, "margin": 0.3},
    ),
    (
        "soft_triple",
        {"la": 20.0, "gamma": 0.1, "margin": 0.01, "tau": 0.2},
        "SoftTripleLoss",
        {"la": 20, "gamma": 0.1, "margin": 0.01, "tau": 0.2},
    ),
    (
        "soft_triple",
        {"la": 8.0, "gamma": 0.5, "margin": 0.1, "tau": 0.0},
        "SoftTripleLoss",
        {"la": 8, "gamma": 0.5, "margin": 0.1, "tau": 0.0},
    ),
]

FAST_AP_BINS = (10, 4)


def pml_multi_center_value(pml_class, pml_arguments, labels, embeddings, weights, k):
    """PML's float64 value of a multi-center class loss with the stored weights assigned."""
    num_classes, dim = weights.shape[0] // k, weights.shape[1]
    arguments = dict(pml_arguments)
    if pml_class == "SubCenterArcFaceLoss":
        arguments["margin"] = float(np.degrees(arguments["margin"]))  # PML takes degrees
        arguments["sub_centers"] = k
    else:
        arguments["centers_per_class"] = k
        tau = arguments.pop("tau")
        if tau:
            arguments["weight_regularizer"] = pml_regularizers.SparseCentersRegularizer(
                num_classes, k
            )
            arguments["weight_reg_weight"] = tau
    loss_fn = getattr(pml_losses, pml_class)(
        num_classes=num_classes, embedding_size=dim, **arguments
    ).double()
    with torch.no_grad():
        matrix = loss_fn.W if pml_class == "SubCenterArcFaceLoss" else loss_fn.fc
        matrix.copy_(torch.tensor(weights.T, dtype=torch.float64))  # PML: [dim, classes * K]
    value = loss_fn(
        torch.tensor(embeddings, dtype=torch.float64), torch.tensor(labels, dtype=torch.long)
    )
    return float(value.item())


def new_cases(batches, pair_batches):
    """The multi-center batches and cases, and the FastAP cases on the stored batches."""
    center_batches, center_cases, fast_ap_cases = {}, [], []
    for batch_name, (make, k) in MULTI_CENTER_BATCHES.items():
        labels, embeddings, weights = make()
        center_batches[batch_name] = {
            "labels": labels,
            "embeddings": embeddings.tolist(),
            "class_weights": weights.tolist(),
            "centers_per_class": k,
        }
        for name, arguments, pml_class, pml_arguments in MULTI_CENTER_LOSSES:
            key = "num_sub_centers" if name == "subcenter_arcface" else "centers_per_class"
            value = pml_multi_center_value(pml_class, pml_arguments, labels, embeddings, weights, k)
            center_cases.append(
                {
                    "loss": name,
                    "batch": batch_name,
                    "arguments": {**arguments, key: k},
                    "pml_class": pml_class,
                    "pml_arguments": pml_arguments,
                    "pml_value": value,
                }
            )
    for batch_name, batch in {**batches, **pair_batches}.items():
        labels = torch.tensor(batch["labels"], dtype=torch.long)
        embeddings = torch.tensor(batch["embeddings"], dtype=torch.float64)
        for num_bins in FAST_AP_BINS:
            value = pml_losses.FastAPLoss(num_bins=num_bins)(embeddings, labels)
            fast_ap_cases.append(
                {
                    "loss": "fast_ap",
                    "batch": batch_name,
                    "arguments": {"num_bins": num_bins},
                    "pml_class": "FastAPLoss",
                    "pml_arguments": {"num_bins": num_bins},
                    "pml_value": float(value.item()),
                }
            )
    return center_batches, center_cases, fast_ap_cases


def pml_pair_loss(pml_class, pml_arguments):
    """PML's pair loss `pml_class` built from a case's stored `pml_arguments` (no miner)."""
    arguments = dict(pml_arguments)
    if "distance" in arguments:
        name, _, raw = arguments["distance"].partition(":")
        arguments["distance"] = getattr(pml_distances, name)(normalize_embeddings=raw != "raw")
    if pml_class == "TupletMarginLoss":
        arguments["margin"] = float(np.degrees(arguments["margin"]))  # PML takes degrees
    return getattr(pml_losses, pml_class)(**arguments)


def pml_pair_value(pml_class, pml_arguments, labels, embeddings):
    """PML's float64 value of a pair loss (no miner: every pair)."""
    loss_fn = pml_pair_loss(pml_class, pml_arguments)
    value = loss_fn(
        torch.tensor(embeddings, dtype=torch.float64), torch.tensor(labels, dtype=torch.long)
    )
    return float(value.item())


def pair_cases(batches):
    """The pair-loss cases on the class-loss batches and on `PAIR_BATCHES`."""
    pair_batches, cases = {}, []
    for batch_name, make in PAIR_BATCHES.items():
        labels, embeddings, _ = make()
        pair_batches[batch_name] = {"labels": labels, "embeddings": embeddings.tolist()}
    for batch_name, batch in {**batches, **pair_batches}.items():
        labels, embeddings = batch["labels"], np.asarray(batch["embeddings"])
        for name, arguments, pml_class, pml_arguments in PAIR_LOSSES:
            value = pml_pair_value(pml_class, pml_arguments, labels, embeddings)
            cases.append(
                {
                    "loss": name,
                    "batch": batch_name,
                    "arguments": arguments,
                    "pml_class": pml_class,
                    "pml_arguments": pml_arguments,
                    "pml_value": value,
                }
            )
    return pair_batches, cases


def pml_value(pml_class, pml_arguments, labels, embeddings, weights):
    """PML's float64 loss with the stored `[num_classes, dim]` weights assigned."""
    num_classes, dim = weights.shape
    arguments = dict(pml_arguments)
    if pml_class == "ArcFaceLoss":
        arguments["margin"] = float(np.degrees(arguments["margin"]))  # PML takes degrees
    loss_fn = getattr(pml_losses, pml_class)(
        num_classes=num_classes, embedding_size=dim, **arguments
    ).double()
    with torch.no_grad():
        if pml_class in ("ProxyAnchorLoss", "ProxyNCALoss"):  # proxies: [classes, dim]
            loss_fn.proxies.copy_(torch.tensor(weights, dtype=torch.float64))
        else:
            loss_fn.W.copy_(torch.tensor(weights.T, dtype=torch.float64))  # PML: [dim, classes]
    value = loss_fn(
        torch.tensor(embeddings, dtype=torch.float64), torch.tensor(labels, dtype=torch.long)
    )
    return float(value.item())


def pair_mask_batch(seed, num_anchors, num_references, dim):
    """Anchors over classes 0..3 plus a class (9) no reference has; references over 0..5."""
    rng = np.random.default_rng(seed)
    labels = [int(y) for y in rng.integers(0, 4, size=num_anchors - 1)] + [9]
    ref_labels = [int(y) for y in rng.integers(0, 6, size=num_references)]
    return {
        "labels": labels,
        "embeddings": rng.normal(size=(num_anchors, dim)).tolist(),
        "ref_labels": ref_labels,
        "ref_embeddings": rng.normal(size=(num_references, dim)).tolist(),
    }


# (keras-dml name, keras-dml arguments, PML class, PML arguments); `epsilon` goes to the miner.
PAIR_MASK_LOSSES = [
    (
        "multi_similarity",
        {},
        "MultiSimilarityLoss",
        {"alpha": 2, "beta": 50, "base": 1, "epsilon": 0.1},
    ),
    (
        "multi_similarity",
        {"alpha": 1.0, "beta": 10.0, "base": 0.5, "epsilon": 0.3},
        "MultiSimilarityLoss",
        {"alpha": 1, "beta": 10, "base": 0.5, "epsilon": 0.3},
    ),
    ("triplet", {"mining": "all", "margin": 0.2}, "TripletMarginLoss", {"margin": 0.2}),
    (
        "triplet",
        {"mining": "all", "margin": 0.5, "squared": True},
        "TripletMarginLoss",
        {"margin": 0.5, "power": 2},
    ),
    (
        "triplet",
        {"mining": "all", "soft_margin": True},
        "TripletMarginLoss",
        {"margin": 0, "smooth_loss": True},
    ),
    (
        "triplet",
        {"mining": "batch-hard", "margin": 0.2},
        "TripletMarginLoss",
        {"margin": 0.2, "miner": "BatchHardMiner"},
    ),
]


def pml_reference_value(pml_class, pml_arguments, batch):
    """PML's float64 value of a loss of the anchors against the references (`ref_emb`)."""
    arguments = dict(pml_arguments)
    embeddings = torch.tensor(batch["embeddings"], dtype=torch.float64)
    labels = torch.tensor(batch["labels"], dtype=torch.long)
    ref_emb = torch.tensor(batch["ref_embeddings"], dtype=torch.float64)
    ref_labels = torch.tensor(batch["ref_labels"], dtype=torch.long)
    indices_tuple = None
    if pml_class == "MultiSimilarityLoss":
        miner = pml_miners.MultiSimilarityMiner(epsilon=arguments.pop("epsilon"))
        indices_tuple = miner(embeddings, labels, ref_emb, ref_labels)
    else:
        power = arguments.pop("power", 1)
        arguments["distance"] = pml_distances.LpDistance(normalize_embeddings=False, power=power)
        arguments["reducer"] = pml_reducers.MeanReducer()
        if "miner" in arguments:
            miner = getattr(pml_miners, arguments.pop("miner"))(distance=arguments["distance"])
            indices_tuple = miner(embeddings, labels, ref_emb, ref_labels)
    loss_fn = getattr(pml_losses, pml_class)(**arguments)
    value = loss_fn(embeddings, labels, indices_tuple, ref_emb=ref_emb, ref_labels=ref_labels)
    return float(value.item())


def pair_mask_cases():
    """`{"batches": ..., "cases": [...]}`: anchors-against-references cases of the losses that
    gained `pair_mask`."""
    batches = {
        "anchors8_refs12_d6": pair_mask_batch(10, 8, 12, 6),
        "anchors10_refs16_d16": pair_mask_batch(11, 10, 16, 16),
    }
    cases = []
    for batch_name, batch in batches.items():
        for name, arguments, pml_class, pml_arguments in PAIR_MASK_LOSSES:
            cases.append(
                {
                    "loss": name,
                    "batch": batch_name,
                    "arguments": arguments,
                    "pml_class": pml_class,
                    "pml_arguments": pml_arguments,
                    "pml_value": pml_reference_value(pml_class, pml_arguments, batch),
                }
            )
    return {"batches": batches, "cases": cases}


def main_pair_mask_cases_only():
    """Adds (or recomputes) `pair_mask_cases`; every other key is written back unchanged."""
    with open(OUTPUT) as f:
        stored = json.load(f)
    stored["pair_mask_cases"] = pair_mask_cases()
    with open(OUTPUT, "w") as f:
        json.dump(stored, f)
        f.write("\n")
    print(f"wrote {len(stored['pair_mask_cases']['cases'])} pair-mask cases to {OUTPUT}")


XBM_MEMORY_SIZE = 20
XBM_LOSSES = [
    (
        "contrastive",
        {"similarity": "squared_euclidean", "balance": "separate", "margin": 0.8},
        "ContrastiveLoss",
        {"pos_margin": 0, "neg_margin": 0.8},
    ),
    ("ntxent", {"temperature": 0.1}, "NTXentLoss", {"temperature": 0.1}),
]


def xbm_batches(num_batches=5, num_classes=6, per_class=2, classes_per_batch=4, dim=6, seed=31):
    """A sequence of class-balanced batches of unit-norm embeddings (labels from 6 classes)."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(num_batches):
        classes = rng.choice(num_classes, size=classes_per_batch, replace=False)
        labels = [int(c) for c in rng.permutation(np.repeat(classes, per_class))]
        embeddings = rng.normal(size=(len(labels), dim))
        embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
        batches.append({"labels": labels, "embeddings": embeddings.tolist()})
    return batches


def xbm_cases(batches):
    """PML's `CrossBatchMemory` value after each batch of the sequence, per wrapped loss."""
    dim = len(batches[0]["embeddings"][0])
    cases = []
    for name, arguments, pml_class, pml_arguments in XBM_LOSSES:
        pml_arguments = dict(pml_arguments)
        if pml_class == "ContrastiveLoss":
            pml_arguments["distance"] = pml_distances.LpDistance(
                power=2, normalize_embeddings=False
            )
            pml_arguments["reducer"] = pml_reducers.MeanReducer()
        memory = pml_losses.CrossBatchMemory(
            getattr(pml_losses, pml_class)(**pml_arguments),
            embedding_size=dim,
            memory_size=XBM_MEMORY_SIZE,
        )
        values = []
        for batch in batches:
            embeddings = torch.tensor(batch["embeddings"], dtype=torch.float64)
            value = memory(embeddings, torch.tensor(batch["labels"], dtype=torch.long))
            values.append(float(value.item()))
        cases.append(
            {
                "loss": name,
                "arguments": arguments,
                "pml_class": pml_class,
                "memory_size": XBM_MEMORY_SIZE,
                "pml_values": values,
            }
        )
    return cases


def main_xbm_cases_only():
    """Adds (or recomputes) the cross-batch memory entries; every other key is kept as stored."""
    with open(OUTPUT) as f:
        stored = json.load(f)
    batches = xbm_batches()
    stored.update(xbm_batches=batches, xbm_cases=xbm_cases(batches))
    with open(OUTPUT, "w") as f:
        json.dump(stored, f)
        f.write("\n")
    print(f"wrote {len(stored['xbm_cases'])} cross-batch memory cases to {OUTPUT}")


def main_new_cases_only():
    """Adds (or recomputes) the multi-center and FastAP entries; every other key of the stored
    file is written back unchanged (the same float64 values, so the same bytes)."""
    with open(OUTPUT) as f:
        stored = json.load(f)
    center_batches, center_cases, fast_ap_cases = new_cases(
        stored["batches"], stored["pair_batches"]
    )
    stored.update(
        multi_center_batches=center_batches,
        multi_center_cases=center_cases,
        fast_ap_cases=fast_ap_cases,
    )
    with open(OUTPUT, "w") as f:
        json.dump(stored, f)
        f.write("\n")
    print(
        f"wrote {len(center_cases)} multi-center and {len(fast_ap_cases)} FastAP cases to {OUTPUT}"
    )


def main(pair_cases_only=False):
    """Writes the file; `pair_cases_only` keeps its stored class-loss batches and cases as they
    are (recomputing them may change the last bit of a float64 value, with torch's threads)."""
    batches, cases = {}, []
    if pair_cases_only:
        with open(OUTPUT) as f:
            stored = json.load(f)
        batches, cases = stored["batches"], stored["cases"]
    for batch_name, make in ({} if pair_cases_only else BATCHES).items():
        labels, embeddings, weights = make()
        batches[batch_name] = {
            "labels": labels,
            "embeddings": embeddings.tolist(),
            "class_weights": weights.tolist(),
        }
        for name, arguments, pml_class, pml_arguments in LOSSES:
            cases.append(
                {
                    "loss": name,
                    "batch": batch_name,
                    "arguments": arguments,
                    "pml_class": pml_class,
                    "pml_arguments": pml_arguments,
                    "pml_value": pml_value(pml_class, pml_arguments, labels, embeddings, weights),
                }
            )
    pair_batches, pair_case_list = pair_cases(batches)
    center_batches, center_cases, fast_ap_cases = new_cases(batches, pair_batches)
    with open(OUTPUT, "w") as f:
        json.dump(
            {
                "generator": "tests/reference/make_pml_values.py",
                "pytorch_metric_learning": pytorch_metric_learning.__version__,
                "torch": torch.__version__,
                "note": "ArcFace margins are in radians here; PML was given np.degrees(margin).",
                "batches": batches,
                "cases": cases,
                "pair_batches": pair_batches,
                "pair_cases": pair_case_list,
                "multi_center_batches": center_batches,
                "multi_center_cases": center_cases,
                "fast_ap_cases": fast_ap_cases,
            },
            f,
        )
        f.write("\n")
    print(
        f"wrote {len(cases)} class-loss cases on {len(batches)} batches and "
        f"{len(pair_case_list)} pair-loss cases to {OUTPUT}"
    )


if __name__ == "__main__":
    if "--xbm-cases-only" in sys.argv[1:]:
        main_xbm_cases_only()
    elif "--new-cases-only" in sys.argv[1:]:
        main_new_cases_only()
    elif "--pair-mask-cases-only" in sys.argv[1:]:
        main_pair_mask_cases_only()
    else:
        main(pair_cases_only="--pair-cases-only" in sys.argv[1:])
