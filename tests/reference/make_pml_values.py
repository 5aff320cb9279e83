"""Writes `pml_loss_values.json`: pytorch-metric-learning's values of the class-based losses.

Run it (not collected by pytest; torch is not needed at test time) from a separate virtual
environment holding torch and pytorch-metric-learning, e.g.:

    python -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch pytorch-metric-learning numpy
    /tmp/torchenv/bin/python tests/reference/make_pml_values.py

The file stores fixed batches (labels, embeddings and class weights in keras-dml's
`[num_classes, dim]` layout) and, per case, the batch name, keras-dml's loss arguments, the
pytorch-metric-learning (PML) arguments that give the same definition, and PML's loss, computed
in float64. `tests/test_losses_pml_reference.py` recomputes
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
"""

import json
import os

import numpy as np
import pytorch_metric_learning
import torch
from pytorch_metric_learning import losses as pml_losses

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


def main():
    batches, cases = {}, []
    for batch_name, make in BATCHES.items():
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
    with open(OUTPUT, "w") as f:
        json.dump(
            {
                "generator": "tests/reference/make_pml_values.py",
                "pytorch_metric_learning": pytorch_metric_learning.__version__,
                "torch": torch.__version__,
                "note": "ArcFace margins are in radians here; PML was given np.degrees(margin).",
                "batches": batches,
                "cases": cases,
            },
            f,
        )
        f.write("\n")
    print(f"wrote {len(cases)} cases on {len(batches)} batches to {OUTPUT}")


if __name__ == "__main__":
    main()
