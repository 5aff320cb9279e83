"""The model identity a store keeps: embedding size, learner slices, a fingerprint of the weights.

The fingerprint (the embedding of seeded probe images) is one for `.keras`, SavedModel and ONNX."""

import numpy as np

PROBE_SEED = 2024
PROBE_IMAGES = 2
PROJECTIONS = 8
# Exports match Keras to 1e-5 (keras_dml.export's parity check); other weights differ by far more.
FINGERPRINT_ATOL = 1e-3
PROBE_SIZE = (32, 32)  # for models that take any size


class ModelMismatchError(ValueError):
    """A store holds embeddings of another model than the one given."""


def probe_images(image_shape):
    """The seeded probe batch `[2, H, W, C]` (integer pixels, float32) for a model's input."""
    height, width, channels = image_shape
    if height is None or width is None:
        height, width = PROBE_SIZE
    shape = (PROBE_IMAGES, height, width, channels or 3)
    return np.random.default_rng(PROBE_SEED).integers(0, 256, shape).astype(np.float32)


def fingerprint(vectors):
    """The fingerprint of the probe images' embeddings `[2, D]`: 8 seeded projections each."""
    vectors = np.asarray(vectors, np.float64)
    dim = vectors.shape[1]
    projection = np.random.default_rng(PROBE_SEED + 1).normal(size=(dim, PROJECTIONS))
    return [round(float(value), 6) for value in (vectors @ projection / np.sqrt(dim)).reshape(-1)]


def model_identity(embedder, name=None):
    """`{"dim", "learner_slices", "fingerprint", "model"}` of an `Embedder` (`name`: its file)."""
    vectors = embedder(probe_images(embedder.image_shape))
    slices = embedder.learner_slices
    return {
        "dim": int(vectors.shape[1]),
        "learner_slices": None if slices is None else [list(map(int, s)) for s in slices],
        "fingerprint": fingerprint(vectors),
        "model": str(name or embedder.description),
    }


def check_identity(stored, current, where):
    """Refuses, in one line, a model (`current`) that is not the one a store was made with.

    Learner slices are compared when both sides know them.

    Raises:
        ModelMismatchError: another embedding size, other learner slices or another fingerprint.
    """
    fix = "search it with the model that made it, or embed into another collection"
    made = f"{where} was made with {stored['model']!r}"
    if int(stored["dim"]) != int(current["dim"]):
        raise ModelMismatchError(
            f"{made} ({stored['dim']}-d embeddings) and {current['model']!r} embeds to "
            f"{current['dim']} dimensions: {fix}."
        )
    slices = (stored.get("learner_slices"), current.get("learner_slices"))
    if None not in slices and slices[0] != slices[1]:
        raise ModelMismatchError(
            f"{made} (learner slices {slices[0]}) and {current['model']!r} has learner slices "
            f"{slices[1]}: {fix}."
        )
    difference = float(np.max(np.abs(np.subtract(stored["fingerprint"], current["fingerprint"]))))
    if difference > FINGERPRINT_ATOL:
        raise ModelMismatchError(
            f"{made} and {current['model']!r} has other weights (their fingerprints differ by "
            f"{difference:.3g}): {fix}."
        )
