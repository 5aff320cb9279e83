"""`plot_projection`: a 2-D map of embeddings (PCA, t-SNE or UMAP) coloured by class / cluster."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.utils import is_available, optional_import
from keras_dml.visualization._common import (
    category_colors,
    check_labels,
    embeddings_of,
    is_model,
    label_name,
    new_figure,
)
from keras_dml.visualization.fonts import use_fallback_fonts

PROJECTIONS = ("auto", "pca", "tsne", "umap")
_NAMES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}


def resolve_projection(method):
    """`"pca"`, `"tsne"` or `"umap"` for a method name; `"auto"`: UMAP if installed, else t-SNE."""
    if method not in PROJECTIONS:
        raise ValueError(f"`method` must be one of {PROJECTIONS}. Received: method={method!r}")
    if method == "auto":
        return "umap" if is_available("umap") else "tsne"
    if method == "umap":
        optional_import("umap", feature="UMAP projections")
    return method


def project_embeddings(embeddings, method="pca", seed=0):
    """Projects L2-normalised embeddings `[N, D]` (N >= 3) to 2-D.

    Args:
        embeddings: float array `[N, D]`.
        method: str. `"pca"`, `"tsne"`, `"umap"` or `"auto"`. Defaults to `"pca"`.
        seed: int. Seed of t-SNE / UMAP. Defaults to `0`.

    Returns:
        `(coordinates, method)`: float32 `[N, 2]` and the method used.

    References:
        van der Maaten and Hinton, "Visualizing Data using t-SNE", JMLR 2008; McInnes et al.,
        "UMAP: Uniform Manifold Approximation and Projection", 2018.
    """
    method = resolve_projection(method)
    points = l2_normalize(np.asarray(embeddings, np.float32))
    if points.ndim != 2 or points.shape[0] < 3:
        raise ValueError(f"A projection needs at least 3 points. Received shape {points.shape}.")
    if points.shape[1] < 2:
        points = np.concatenate([points, np.zeros_like(points)], axis=1)
    if method == "pca":
        centered = points - points.mean(axis=0, keepdims=True)
        _, _, components = np.linalg.svd(centered.astype(np.float64), full_matrices=False)
        components = components[:2]
        signs = np.sign(components[np.arange(2), np.abs(components).argmax(axis=1)])
        coordinates = centered @ (components * signs[:, None]).T
    elif method == "tsne":
        manifold = optional_import("sklearn.manifold", feature="t-SNE projections")
        threadpoolctl = optional_import("threadpoolctl", feature="t-SNE projections")
        perplexity = float(min(30.0, max(1.0, (points.shape[0] - 1) / 3.0)))
        tsne = manifold.TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed)
        # One OpenMP thread: Barnes-Hut on a few hundred points measured 11x faster than with
        # every core on a loaded 2-core machine (5.4 s vs 57.6 s for 500 points).
        with threadpoolctl.threadpool_limits(1):
            coordinates = tsne.fit_transform(points)
    else:
        umap = optional_import("umap", feature="UMAP projections")
        coordinates = umap.UMAP(n_components=2, random_state=seed).fit_transform(points)
    return np.asarray(coordinates, dtype=np.float32), method


def _scatter(axis, coordinates, groups, names, title, point_size, palette="tab10"):
    values = np.unique(groups)
    colors = category_colors(len(values), palette)
    for color, value in zip(colors, values):
        chosen = groups == value
        axis.scatter(
            coordinates[chosen, 0],
            coordinates[chosen, 1],
            s=point_size,
            color=color,
            label=names(value),
            linewidths=0,
        )
    if len(values) <= 20:
        axis.legend(fontsize=7, markerscale=1.5, loc="best", frameon=True)
    axis.set_title(title)
    axis.set_xticks([])
    axis.set_yticks([])


def plot_projection(
    model_or_embeddings,
    images,
    labels,
    method="pca",
    clusters=None,
    class_names=None,
    max_points=None,
    seed=0,
    batch_size=64,
    point_size=12.0,
    ax=None,
):
    """A 2-D projection of embeddings, one colour per class (and a panel per training cluster).

    Args:
        model_or_embeddings: a keras_dml model (embeds `images`) or an array `[N, D]`.
        images: float array `[N, H, W, C]` of raw pixels, or `None` with embeddings.
        labels: int array `[N]`.
        method: str. `"pca"`, `"tsne"`, `"umap"` or `"auto"`. Defaults to `"pca"`.
        clusters: int array `[N]` or `None`. Training cluster of every point, for a second
            panel. Defaults to `None`.
        class_names: sequence of str. Names of the labels. Defaults to `None`.
        max_points: int or `None`. Draw a seeded sample of at most this many. Defaults to `None`.
        seed: int. Seed of the sample and of t-SNE / UMAP. Defaults to `0`.
        batch_size: int. Images per forward pass of a model. Defaults to `64`.
        point_size: float. Marker area in points^2. Defaults to `12.0`.
        ax: a matplotlib Axes, or a sequence of two with `clusters`. Defaults to `None`.

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: mismatched inputs, fewer than 3 points or an unknown method.
        MissingDependencyError: matplotlib (or umap-learn for `"umap"`) is missing.

    References:
        van der Maaten and Hinton, "Visualizing Data using t-SNE", JMLR 2008; Sanakoyeu et al.,
        "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019, Fig. 1.
    """
    if is_model(model_or_embeddings):
        if images is None:
            raise ValueError("Pass `images` to embed them with the model (or pass embeddings).")
        count = len(images)
    else:
        count = len(np.asarray(model_or_embeddings))
    labels = check_labels(labels, count)
    if clusters is not None:
        clusters = check_labels(clusters, count, name="clusters")
    keep = np.arange(count)
    if max_points is not None and count > int(max_points):
        keep = np.sort(np.random.default_rng(seed).choice(count, int(max_points), replace=False))
    if is_model(model_or_embeddings):
        embeddings = embeddings_of(model_or_embeddings, np.asarray(images)[keep], batch_size)
    else:
        subset_images = None if images is None else np.asarray(images)[keep]
        embeddings = embeddings_of(np.asarray(model_or_embeddings)[keep], subset_images)
    labels = labels[keep]
    coordinates, used = project_embeddings(embeddings, method, seed)
    num_panels = 1 if clusters is None else 2
    figure, axes = new_figure(num_panels, ax, (5.0, 4.5), "plot_projection")
    name = _NAMES[used]
    _scatter(
        axes[0],
        coordinates,
        labels,
        lambda value: label_name(value, class_names),
        f"{name} of {len(labels)} embeddings, by class",
        point_size,
    )
    if clusters is not None:
        _scatter(
            axes[1],
            coordinates,
            clusters[keep],
            lambda value: f"cluster {int(value) + 1}",
            f"{name}, by training cluster (learner)",
            point_size,
            palette="Dark2",  # other colours than the classes'
        )
    return use_fallback_fonts(figure)
