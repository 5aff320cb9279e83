"""`gradcam_maps`: Grad-CAM of one learner of an ensemble model, through tf-keras-vis."""

import numpy as np
from keras import ops

from keras_dml.utils import optional_import


def gradcam_maps(model, images, learner=0, layer="features", target=None, batch_size=16):
    """Grad-CAM heat maps of one learner's embedding, `[N, H, W]` in [0, 1].

    Args:
        model: a model with `learner_model(learner, target)`, e.g. `ABE` or `MHeads`.
        images: float array `[N, H, W, 3]`, raw pixels in [0, 255].
        learner: int. The learner whose embedding is explained. Defaults to `0`.
        layer: str. `"features"`, `"attended"` (ABE only) or `"spatial"`. Defaults to
            `"features"`.
        target: float array `[d]` or `[N, d]`. Reference embedding(s) of this learner; the score
            is the cosine to it, else the squared norm. Defaults to `None`.
        batch_size: int. Images per Grad-CAM pass. Defaults to `16`.

    Returns:
        float32 array `[N, H, W]`, each map min-max normalised.

    Raises:
        ValueError: a model without `learner_model` or a wrong `target` shape.
        MissingDependencyError: tf-keras-vis is not installed (`keras-dml[vis]`).

    References:
        Selvaraju et al., "Grad-CAM: Visual Explanations from Deep Networks via Gradient-based
        Localization", ICCV 2017.
    """
    gradcam_module = optional_import("tf_keras_vis.gradcam", feature="gradcam_maps")
    if not hasattr(model, "learner_model"):
        raise ValueError(
            f"{type(model).__name__} has no `learner_model(learner, target)`; Grad-CAM per "
            "learner is available for keras_dml.models.ABE and MHeads."
        )
    images = np.asarray(images, dtype="float32")
    view = model.learner_model(int(learner), target=layer)
    dim = int(view.outputs[0].shape[-1])
    if target is not None:
        target = np.asarray(target, dtype="float32")
        target = np.broadcast_to(target, (len(images), dim)) if target.ndim == 1 else target
        if target.shape != (len(images), dim):
            raise ValueError(
                f"`target` must be [{dim}] or [{len(images)}, {dim}]. "
                f"Received shape {target.shape}."
            )
        target = target / np.maximum(np.linalg.norm(target, axis=1, keepdims=True), 1e-12)
    gradcam = gradcam_module.Gradcam(view, clone=False)
    maps = []
    for start in range(0, len(images), batch_size):
        batch = images[start : start + batch_size]
        reference = None if target is None else target[start : start + batch_size]

        def score(output, reference=reference):
            output = ops.cast(output, "float32")
            if reference is None:
                return ops.sum(ops.square(output), axis=-1)
            norm = ops.sqrt(ops.maximum(ops.sum(ops.square(output), axis=-1), 1e-12))
            return ops.sum(output * reference, axis=-1) / norm

        cam = gradcam(
            score,
            batch,
            penultimate_layer="gradcam_target",
            seek_penultimate_conv_layer=False,
            normalize_cam=False,
        )
        maps.append(np.asarray(cam, dtype="float32").reshape(len(batch), *images.shape[1:3]))
    maps = np.concatenate(maps, axis=0)
    low = maps.min(axis=(1, 2), keepdims=True)
    span = maps.max(axis=(1, 2), keepdims=True) - low
    return np.where(span > 1e-12, (maps - low) / np.maximum(span, 1e-12), 0.0).astype("float32")
