"""Match-threshold calibration: the lowest similarity threshold reaching a target precision."""

import numpy as np


def select_threshold(scores, same, target_precision):
    """The lowest similarity threshold (match iff score >= t) reaching `target_precision`.

    Args:
        scores: float array [P]. Similarity of each labelled pair.
        same: bool array [P]. Whether the pair is a true match (same class).
        target_precision: float in (0, 1].

    Returns:
        dict with `threshold`, its `precision` and `recall`, `target_precision`, `num_pairs`
        and `num_positive`.

    Raises:
        ValueError: no threshold reaches the target (the message gives the best precision).

    Examples:
    >>> chosen = select_threshold(np.array([0.9, 0.8, 0.7, 0.2]), np.array([1, 1, 0, 1], bool), 1.0)
    >>> chosen["threshold"], chosen["precision"], round(chosen["recall"], 3)
    (0.8, 1.0, 0.667)

    References:
        The precision-targeted calibration of TensorFlow Similarity's `calibrate` (Mayer et al.,
        2021).
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    same = np.asarray(same, dtype=bool).reshape(-1)
    if scores.shape != same.shape or scores.size == 0:
        raise ValueError(
            "Calibration needs one same/different flag per score and at least one pair. "
            f"Received: {scores.size} scores and {same.size} flags."
        )
    if not 0 < float(target_precision) <= 1:
        raise ValueError(
            f"`target_precision` must be in (0, 1]. Received: target_precision={target_precision}"
        )
    if not same.any():
        raise ValueError("Calibration needs at least one matching pair (same label); found none.")
    order = np.argsort(-scores, kind="stable")
    scores, same = scores[order], same[order]
    true_positives = np.cumsum(same)
    predicted = np.arange(1, scores.size + 1)
    ends = np.flatnonzero(np.append(scores[1:] != scores[:-1], True))  # last of each score value
    precision = true_positives[ends] / predicted[ends]
    eligible = np.flatnonzero(precision >= target_precision)
    if eligible.size == 0:
        raise ValueError(
            f"No threshold reaches precision {target_precision}: the best is "
            f"{precision.max():.4f}. Lower `target_precision` or calibrate on a better model. "
            f"Received: target_precision={target_precision}"
        )
    best = ends[eligible[-1]]
    return {
        "threshold": float(scores[best]),
        "precision": float(true_positives[best] / predicted[best]),
        "recall": float(true_positives[best] / same.sum()),
        "target_precision": float(target_precision),
        "num_pairs": int(scores.size),
        "num_positive": int(same.sum()),
    }
