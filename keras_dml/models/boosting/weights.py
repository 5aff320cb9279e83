"""The boosting weights of BIER (Opitz et al., TPAMI 2020) and the group sizes they imply."""

import math

# Table 14 of the paper (plus the 384-d split of Sec. 4.4): (embedding_dim, num_learners) -> sizes.
# Its 512 / 4 row sums to 510: 154 (alpha_3's share) replaces 152 (docs/methods/bier.md).
PAPER_GROUP_SIZES = {
    (384, 3): (64, 128, 192),
    (512, 2): (170, 342),
    (512, 3): (96, 160, 256),
    (512, 4): (52, 102, 154, 204),
    (512, 5): (34, 68, 102, 138, 170),
    (1024, 3): (170, 342, 512),
    (1024, 4): (102, 204, 308, 410),
    (1024, 5): (68, 136, 204, 274, 342),
    (1024, 6): (50, 96, 148, 196, 242, 292),
    (1024, 7): (36, 74, 110, 148, 182, 218, 256),
}


def _check_num_learners(num_learners):
    if isinstance(num_learners, bool) or int(num_learners) != num_learners or num_learners < 1:
        raise ValueError(f"`num_learners` must be an integer >= 1. Received: {num_learners!r}")
    return int(num_learners)


def shrinkage_rates(num_learners):
    """The step sizes `eta_m = 2 / (m + 1)` of online boosting, m = 1..M (Algorithm 1)."""
    num_learners = _check_num_learners(num_learners)
    return tuple(2.0 / (m + 1.0) for m in range(1, num_learners + 1))


def boosting_weights(num_learners):
    """Final weight `alpha_m = 2m / (M (M + 1))` of each learner in the ensemble score (Eq. 3)."""
    etas = shrinkage_rates(num_learners)
    return tuple(etas[m] * math.prod(1.0 - eta for eta in etas[m + 1 :]) for m in range(len(etas)))


def proportional_group_sizes(embedding_dim, num_learners, multiple=2):
    """Group sizes proportional to the boosting weights, in multiples of `multiple`."""
    num_learners = _check_num_learners(num_learners)
    if int(multiple) < 1 or int(embedding_dim) % int(multiple) != 0:
        raise ValueError(
            "`embedding_dim` must be a positive multiple of `multiple`. Received: "
            f"embedding_dim={embedding_dim}, multiple={multiple}"
        )
    units = int(embedding_dim) // int(multiple)
    if units < num_learners:
        raise ValueError(
            f"`embedding_dim={embedding_dim}` is too small for {num_learners} groups of at least "
            f"{multiple} units each."
        )
    quotas = [a * units for a in boosting_weights(num_learners)]
    sizes = [math.floor(q) for q in quotas]
    by_remainder = sorted(range(num_learners), key=lambda m: sizes[m] - quotas[m])
    for m in by_remainder[: units - sum(sizes)]:
        sizes[m] += 1
    # A tiny embedding can leave the first group empty: move units from the largest group.
    for m in range(num_learners):
        while sizes[m] == 0:
            sizes[m] += 1
            sizes[max(range(num_learners), key=lambda k: sizes[k])] -= 1
    return tuple(s * int(multiple) for s in sizes)


def boosting_group_sizes(embedding_dim=512, num_learners=3, use_paper_table=True):
    """Per-learner sizes proportional to the boosting weights, or the paper's where it lists them.

    Args:
        embedding_dim: int. Total embedding size. Defaults to `512`.
        num_learners: int. Number of learners. Defaults to `3`.
        use_paper_table: bool. Return the paper's sizes when it lists the configuration.
            Defaults to `True`.

    Returns:
        tuple of ints summing to `embedding_dim`, e.g. `(96, 160, 256)` for 512 over 3.

    References:
        Opitz et al., TPAMI 2020, Sec. 3.1, Sec. 4.3-4.4, Appendix C (Table 14).
    """
    num_learners = _check_num_learners(num_learners)
    key = (int(embedding_dim), num_learners)
    if use_paper_table and key in PAPER_GROUP_SIZES:
        return PAPER_GROUP_SIZES[key]
    multiple = 2 if int(embedding_dim) % 2 == 0 and embedding_dim >= 2 * num_learners else 1
    return proportional_group_sizes(embedding_dim, num_learners, multiple=multiple)
