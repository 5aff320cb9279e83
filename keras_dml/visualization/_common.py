"""Shared pieces of the pictures: figures without pyplot, embeddings of a model, colours."""

import io
import os

import numpy as np

from keras_dml.serving.embed import embed
from keras_dml.utils import optional_import

HIT_COLOR = "#2ca02c"  # green frame: the neighbour has the query's label
MISS_COLOR = "#d62728"  # red frame: it does not


def new_figure(num_panels, ax=None, panel_size=(4.0, 4.0), feature="plotting", dpi=100):
    """Returns `(figure, axes)`: `num_panels` axes in one row (or a grid), or the caller's axes.

    Args:
        num_panels: int (axes in one row) or `(rows, columns)` (a grid, row-major).
        ax: a matplotlib `Axes` or a sequence of `num_panels` Axes of one figure, or `None` for a
            new figure. Defaults to `None`.
        panel_size: (width, height) in inches of one panel of a new figure.
        feature: str. Name of the picture, for the missing-dependency message.
        dpi: int. Resolution of a new figure. Defaults to `100`.

    Raises:
        ValueError: `ax` does not hold `num_panels` axes.
    """
    rows, columns = (1, num_panels) if np.ndim(num_panels) == 0 else num_panels
    num_panels = rows * columns
    if ax is not None:
        axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        axes = list(np.ravel(np.asarray(axes, dtype=object)))
        if len(axes) != num_panels:
            raise ValueError(
                f"This picture draws {num_panels} panel(s); pass that many axes in `ax` or "
                f"ax=None for a new figure. Received {len(axes)} axes."
            )
        return axes[0].figure, axes
    figure_module = optional_import("matplotlib.figure", feature=feature)
    agg = optional_import("matplotlib.backends.backend_agg", feature=feature)
    figure = figure_module.Figure(
        figsize=(panel_size[0] * columns, panel_size[1] * rows), dpi=dpi, layout="constrained"
    )
    agg.FigureCanvasAgg(figure)
    return figure, list(np.ravel(figure.subplots(rows, columns, squeeze=False)))


def save_figure(figure, path, dpi=None):
    """Writes `figure` as a PNG to `path` (parent folders are created) and returns the path."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    figure.savefig(path, format="png", dpi=dpi)
    return path


def figure_png(figure, dpi=None):
    """The PNG bytes of `figure`."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def is_model(model_or_embeddings):
    """Whether the first argument of a picture is a model (else an embedding array)."""
    return callable(model_or_embeddings) and not isinstance(model_or_embeddings, np.ndarray)


def embeddings_of(model_or_embeddings, images, batch_size=64):
    """Float32 embeddings `[N, D]`: the model's on `images` (raw pixels), or the array checked.

    Raises:
        ValueError: a model without images, or embeddings that are not finite `[N, D]` of the
            images' length.
    """
    if is_model(model_or_embeddings):
        if images is None:
            raise ValueError("Pass `images` to embed them with the model (or pass embeddings).")
        embeddings, _ = embed(model_or_embeddings, np.asarray(images), batch_size, verbose=False)
    else:
        embeddings = np.asarray(model_or_embeddings, dtype=np.float32)
    if embeddings.ndim != 2 or not np.all(np.isfinite(embeddings)):
        raise ValueError(
            f"Embeddings must be a finite 2-D array [N, D]. Received shape {embeddings.shape}."
        )
    if images is not None and len(images) != len(embeddings):
        raise ValueError(
            f"Got {len(embeddings)} embeddings for {len(images)} images; pass one image per "
            "embedding."
        )
    return embeddings


def learner_slices(model_or_embeddings, learner_dims=None):
    """`(start, stop)` column ranges of each learner: from `learner_dims`, else from the model.

    Raises:
        ValueError: embeddings without `learner_dims`, or non-positive sizes.
    """
    if learner_dims is None:
        if hasattr(model_or_embeddings, "learner_slices"):
            return [tuple(int(v) for v in s) for s in model_or_embeddings.learner_slices()]
        if not hasattr(model_or_embeddings, "learner_dims"):
            raise ValueError(
                "Per-learner pictures of an embedding array need its `learner_dims` "
                "(e.g. learner_dims=model.learner_dims)."
            )
        learner_dims = model_or_embeddings.learner_dims
    learner_dims = [int(d) for d in learner_dims]
    if not learner_dims or min(learner_dims) < 1:
        raise ValueError(
            f"`learner_dims` must be positive sizes. Received: learner_dims={learner_dims}"
        )
    stops = np.cumsum(learner_dims)
    return [(int(stop - dim), int(stop)) for dim, stop in zip(learner_dims, stops)]


def display_images(images):
    """Images as float RGB in [0, 1] for `imshow`: raw pixels in [0, 255], 1 or 3 channels."""
    images = np.asarray(images, dtype=np.float32)
    if images.ndim == 3:
        images = images[..., None]
    if images.ndim != 4 or images.shape[-1] not in (1, 3):
        raise ValueError(
            f"`images` must be [N, H, W, 1 or 3] raw pixels. Received shape {images.shape}."
        )
    shown = np.clip(images / 255.0, 0.0, 1.0)
    return np.repeat(shown, 3, axis=-1) if shown.shape[-1] == 1 else shown


def check_labels(labels, count, name="labels"):
    """1-D int labels of length `count`."""
    labels = np.asarray(labels).reshape(-1)
    if labels.shape[0] != count or (labels.size and not np.issubdtype(labels.dtype, np.integer)):
        raise ValueError(
            f"`{name}` must be {count} integer labels, one per image. "
            f"Received shape {labels.shape} of dtype {labels.dtype}."
        )
    return labels.astype(np.int64)


def label_name(label, class_names=None):
    """The display name of one integer label."""
    if class_names is not None and 0 <= int(label) < len(class_names):
        return str(class_names[int(label)])
    return str(int(label))


def category_colors(count, palette="tab10"):
    """`count` distinct RGBA colours: `palette` while it has enough, then tab20, then hsv."""
    colormaps = optional_import("matplotlib", feature="plotting").colormaps
    first = colormaps[palette]
    if count <= getattr(first, "N", 0) <= 20:
        return [first(i) for i in range(count)]
    if count <= 20:
        return [colormaps["tab20"](i) for i in range(count)]
    return [colormaps["hsv"](i / count) for i in range(count)]
