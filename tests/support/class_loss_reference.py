"""Naive per-sample / per-proxy loops of the class-based losses, in float64 Python, and batches.

The reference implementations follow the papers' equations term by term, without vectorisation,
masking tricks or stabilised log-sum-exp shortcuts beyond `math.log1p` and a max shift.
"""

import math

import numpy as np


def _unit(v):
    return np.asarray(v, "float64") / np.linalg.norm(v)


def _cos(x, w):
    return float(np.dot(_unit(x), _unit(w)))


def _log_sum_exp(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def cross_entropy(logits, target):
    """`-log softmax(logits)[target]` for a Python list of logits."""
    return _log_sum_exp(logits) - logits[target]


def naive_normalized_softmax(labels, embeddings, weights, temperature=0.05):
    total = 0.0
    for x, y in zip(embeddings, labels):
        logits = [_cos(x, w) / temperature for w in weights]
        total += cross_entropy(logits, y)
    return total / len(labels)


def naive_proxy_anchor(labels, embeddings, weights, alpha=32.0, delta=0.1):
    positive_sum, negative_sum = 0.0, 0.0
    present = sorted(set(int(y) for y in labels))
    for p, w in enumerate(weights):
        positives = [x for x, y in zip(embeddings, labels) if y == p]
        negatives = [x for x, y in zip(embeddings, labels) if y != p]
        if positives:
            positive_sum += math.log1p(
                sum(math.exp(-alpha * (_cos(x, w) - delta)) for x in positives)
            )
        negative_sum += math.log1p(sum(math.exp(alpha * (_cos(x, w) + delta)) for x in negatives))
    return positive_sum / len(present) + negative_sum / len(weights)


def arcface_target(cosine, margin, easy_margin=False):
    """`cos(theta + m)` from the angle, with the paper code's fallback / easy margin."""
    theta = math.acos(min(1.0, max(-1.0, cosine)))
    if easy_margin:
        return math.cos(theta + margin) if cosine > 0.0 else cosine
    if theta <= math.pi - margin:
        return math.cos(theta + margin)
    return cosine - margin * math.sin(margin)


def naive_margin_softmax(labels, embeddings, weights, scale, target_fn):
    total = 0.0
    for x, y in zip(embeddings, labels):
        cosines = [_cos(x, w) for w in weights]
        logits = [scale * c for c in cosines]
        logits[y] = scale * target_fn(cosines[y])
        total += cross_entropy(logits, y)
    return total / len(labels)


def naive_arcface(labels, embeddings, weights, scale=64.0, margin=0.5, easy_margin=False):
    return naive_margin_softmax(
        labels, embeddings, weights, scale, lambda c: arcface_target(c, margin, easy_margin)
    )


def naive_cosface(labels, embeddings, weights, scale=64.0, margin=0.35):
    return naive_margin_softmax(labels, embeddings, weights, scale, lambda c: c - margin)


def random_batch(seed, batch_size=10, num_classes=7, dim=6):
    """A batch over some of the classes: some absent, one class with a single sample.

    Returns:
        `(labels int32 [B], embeddings float32 [B, D], weights float32 [C, D])`.
    """
    rng = np.random.default_rng(seed)
    common = rng.choice(num_classes, size=max(2, num_classes // 2), replace=False)
    single = next(c for c in range(num_classes) if c not in common)
    labels = np.concatenate([rng.choice(common, size=batch_size - 1), [single]])
    labels = rng.permutation(labels).astype("int32")
    embeddings = rng.normal(size=(batch_size, dim)).astype("float32")
    weights = rng.normal(size=(num_classes, dim)).astype("float32")
    absent = set(range(num_classes)) - set(labels.tolist())
    assert absent and np.sum(labels == single) == 1
    return labels, embeddings, weights
