"""Algorithm 1 (pairs) and Algorithm 2 (triplets, Appendix B) of BIER in one forward pass."""

from keras import ops

from keras_dml.models.boosting.pair_losses import BinomialDeviance, dot_products
from keras_dml.models.boosting.weights import shrinkage_rates
from keras_dml.pairs import negative_mask, positive_mask

BOOSTING_VARIANTS = ("paper", "reference")


def boosted_learner_losses(
    learner_embeddings, labels, form, variant="paper", shrinkage=0.06, initial_score=0.5
):
    """Per-learner reweighted metric losses of online gradient boosting.

    Args:
        learner_embeddings: list of M float tensors `[N, d_m]`, rows L2-normalised.
        labels: int tensor `[N]`.
        form: a loss form of `get_loss_form`.
        variant: str. `"paper"` (Algorithm 1, or 2 for triplets) or `"reference"` (the authors'
            code, binomial deviance only). Defaults to `"paper"`.
        shrinkage: float. Step of the reference variant's running margin. Defaults to `0.06`.
        initial_score: float. Initial running margin of the reference variant. Defaults to `0.5`.

    Returns:
        `(losses, weights)`: M float32 scalars and the M weight tensors the learners were trained
        with (`[N, N]` for pairs, `[N, N, N]` for triplets).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 3.1, Algorithm 1,
        Appendix B (Algorithm 2); Beygelzimer et al., "Online Gradient Boosting", NIPS 2015.
    """
    if variant not in BOOSTING_VARIANTS:
        raise ValueError(f"`boosting` must be one of {BOOSTING_VARIANTS}. Received: {variant!r}")
    if variant == "reference" and not isinstance(form, BinomialDeviance):
        raise ValueError(
            "The reference-code boosting variant is defined for the binomial deviance loss only. "
            f"Received a {type(form).__name__} loss; use boosting='paper'."
        )
    pos_mask, neg_mask = positive_mask(labels), negative_mask(labels)
    positive = ops.cast(pos_mask, "float32")
    similarities = [dot_products(embedding) for embedding in learner_embeddings]

    num_learners = len(similarities)
    losses, all_weights = [], []
    weights = None  # uniform for the first learner
    if variant == "paper":
        running = None
        for eta, s in zip(shrinkage_rates(num_learners), similarities):
            values = form.values(s, pos_mask, neg_mask)
            if weights is None:
                weights = ops.ones_like(values)
            losses.append(form.reduce(values * weights, pos_mask, neg_mask))
            all_weights.append(weights)
            fixed = ops.stop_gradient(s)
            running = fixed if running is None else (1.0 - eta) * running + eta * fixed
            weights = ops.stop_gradient(form.weights(running, positive))
        return losses, all_weights

    margin = initial_score
    negative_factor = positive + 2.0 * (1.0 - positive)
    for s in similarities:
        values = form.values(s, pos_mask, neg_mask)
        if weights is None:
            weights = ops.ones_like(values)
        losses.append(form.reduce(values * weights, pos_mask, neg_mask) / float(num_learners))
        all_weights.append(weights)
        # form.margins = alpha (s - beta) m_y with m_y = 1 (positive) or -cost (negative).
        margin = margin + shrinkage * form.margins(ops.stop_gradient(s), positive)
        weights = ops.stop_gradient(ops.sigmoid(-margin) * negative_factor)
    return losses, all_weights
