"""Argument checks of `BIER`: group sizes, diversity, boosting variant, output weighting."""

from keras_dml.models.boosting.boosted_loss import BOOSTING_VARIANTS
from keras_dml.models.boosting.pair_losses import get_loss_form
from keras_dml.models.boosting.weights import boosting_group_sizes

DIVERSITIES = (None, "activation", "adversarial")
OUTPUT_WEIGHTINGS = ("sqrt_alpha", "alpha")
# lambda_div where Fig. 7 of the paper peaks.
DEFAULT_LAMBDA_DIV = {"activation": 1e-2, "adversarial": 1e-3}


def check_bier_arguments(
    group_sizes,
    embedding_dim,
    num_learners,
    loss,
    loss_options,
    diversity,
    lambda_div,
    boosting,
    output_weighting,
):
    """Validates `BIER`'s arguments of the same names: `(group_sizes, loss_form, lambda_div)`."""
    if group_sizes is None:
        group_sizes = boosting_group_sizes(embedding_dim, num_learners)
    group_sizes = tuple(int(d) for d in group_sizes)
    if not group_sizes or min(group_sizes) < 1:
        raise ValueError(f"`group_sizes` must be positive. Received: group_sizes={group_sizes}")
    if diversity not in DIVERSITIES:
        raise ValueError(f"`diversity` must be one of {DIVERSITIES}. Received: {diversity!r}")
    if diversity is not None and len(group_sizes) < 2:
        raise ValueError(
            f"A diversity loss needs at least two learners. Received: group_sizes={group_sizes}"
        )
    if boosting not in BOOSTING_VARIANTS:
        raise ValueError(f"`boosting` must be one of {BOOSTING_VARIANTS}. Received: {boosting!r}")
    if output_weighting not in OUTPUT_WEIGHTINGS:
        raise ValueError(
            f"`output_weighting` must be one of {OUTPUT_WEIGHTINGS}. "
            f"Received: output_weighting={output_weighting!r}"
        )
    loss_form = get_loss_form(loss, **dict(loss_options or {}))
    if boosting == "reference" and loss != "binomial_deviance":
        raise ValueError(
            "boosting='reference' reproduces the authors' code, which boosts the binomial "
            f"deviance only. Received: loss={loss!r}"
        )
    if lambda_div is None:
        lambda_div = DEFAULT_LAMBDA_DIV.get(diversity, 0.0)
    if float(lambda_div) < 0:
        raise ValueError(f"`lambda_div` must be >= 0. Received: lambda_div={lambda_div}")
    return group_sizes, loss_form, lambda_div
