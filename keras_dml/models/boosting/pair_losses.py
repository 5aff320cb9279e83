"""Table 1 of BIER: cosine-similarity losses with per-pair (per-triplet) boosting weights.

A form gives `values` (per-pair losses), `weights` (in [0, 1], for the next learner) and
`reduce` (positive and negative pairs averaged separately), in float32.
"""

from keras import ops

from keras_dml.losses import binomial_deviance_pairs, cosine_contrastive_pairs
from keras_dml.pairs import masked_mean, negative_mask, positive_mask

LOSSES = ("binomial_deviance", "contrastive", "triplet")
DEFAULT_OPTIONS = {
    "binomial_deviance": {"alpha": 2.0, "beta": 0.5, "cost": 25.0},
    "contrastive": {"margin": 0.5},
    "triplet": {"margin": 0.01},
}


def dot_products(embeddings):
    """`[N, N]` float32 dot products of rows that are already L2-normalised (cosines)."""
    embeddings = ops.cast(embeddings, "float32")
    return ops.matmul(embeddings, ops.transpose(embeddings))


def _balanced_mean(values, pos_mask, neg_mask):
    """Mean over positive pairs plus mean over negative pairs (0 for an empty set)."""
    return masked_mean(values, pos_mask)[0] + masked_mean(values, neg_mask)[0]


class BinomialDeviance:
    """`log(1 + exp(-(2y - 1) * alpha * (s - beta) * C_y))`, `C_1 = 1`, `C_0 = cost` (Eq. 2)."""

    def __init__(self, alpha=2.0, beta=0.5, cost=25.0):
        if alpha <= 0 or cost <= 0:
            raise ValueError(
                f"`alpha` and `cost` must be > 0. Received: alpha={alpha}, cost={cost}"
            )
        self.alpha, self.beta, self.cost = float(alpha), float(beta), float(cost)

    def margins(self, s, positive):
        """The signed argument `z = (2y - 1) alpha (s - beta) C_y`; the loss is softplus(-z)."""
        scale = positive * self.alpha - (1.0 - positive) * self.alpha * self.cost
        return scale * (s - self.beta)

    def values(self, s, pos_mask, neg_mask):
        return binomial_deviance_pairs(s, pos_mask, neg_mask, self.alpha, self.beta, self.cost)

    def weights(self, s_hat, positive):
        return ops.sigmoid(-self.margins(s_hat, positive))

    reduce = staticmethod(_balanced_mean)


class Contrastive:
    """`(1 - y) max(0, s - margin) + y (s - 1)^2` on cosine similarities (Table 1)."""

    def __init__(self, margin=0.5):
        self.margin = float(margin)

    def values(self, s, pos_mask, neg_mask):
        return cosine_contrastive_pairs(s, pos_mask, neg_mask, self.margin)

    def weights(self, s_hat, positive):
        # |d/ds (s - 1)^2| = 2 (1 - s) <= 4 on [-1, 1]; the hinge has slope 0 or 1.
        pos = ops.clip((1.0 - s_hat) / 2.0, 0.0, 1.0)
        neg = ops.cast(ops.greater(s_hat, self.margin), "float32")
        return positive * pos + (1.0 - positive) * neg

    reduce = staticmethod(_balanced_mean)


class Triplet:
    """`max(0, s^- - s^+ + margin)` over every in-batch triplet, indexed `[a, p, n]` (Table 1)."""

    def __init__(self, margin=0.01):
        self.margin = float(margin)

    def _violation(self, s):
        return s[:, None, :] - s[:, :, None] + self.margin

    def values(self, s, pos_mask, neg_mask):
        del pos_mask, neg_mask  # every triplet; `reduce` keeps the valid ones
        return ops.relu(self._violation(s))

    def weights(self, s_hat, positive):
        return ops.cast(ops.greater(self._violation(s_hat), 0.0), "float32")

    def reduce(self, values, pos_mask, neg_mask):
        valid = ops.logical_and(pos_mask[:, :, None], neg_mask[:, None, :])
        return masked_mean(values, valid)[0]


_FORMS = {"binomial_deviance": BinomialDeviance, "contrastive": Contrastive, "triplet": Triplet}


def get_loss_form(name, **options):
    """The loss form called `name`, with `options` over the paper's defaults (`DEFAULT_OPTIONS`).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Table 1 and Eq. 2.
    """
    if name not in _FORMS:
        raise ValueError(f"`loss` must be one of {LOSSES}. Received: loss={name!r}")
    known = DEFAULT_OPTIONS[name]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"Unknown options {unknown} for loss {name!r}; it takes {sorted(known)}. "
            f"Received: loss_options={options}"
        )
    return _FORMS[name](**{**known, **options})


def cosine_pair_loss(labels, embeddings, loss="binomial_deviance", **options):
    """Plain (unboosted) Table 1 loss `loss` of one batch of L2-normalised `embeddings`."""
    form = get_loss_form(loss, **options)
    s = dot_products(embeddings)
    pos_mask, neg_mask = positive_mask(labels), negative_mask(labels)
    return form.reduce(form.values(s, pos_mask, neg_mask), pos_mask, neg_mask)
