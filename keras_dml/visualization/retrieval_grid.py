"""`plot_retrieval_grid`: queries and their top-k neighbours, correct ones framed green."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.utils import optional_import
from keras_dml.visualization._common import (
    HIT_COLOR,
    MISS_COLOR,
    check_labels,
    display_images,
    embeddings_of,
    label_name,
    new_figure,
)
from keras_dml.visualization.fonts import use_fallback_fonts
from keras_dml.visualization.neighbors import nearest_neighbors


def select_queries(labels, count, seed=0):
    """Positions of at most `count` queries spread over the classes (one per class in turn).

    Examples:
    >>> select_queries(np.array([0, 0, 1, 1, 2]), 2).size
    2
    """
    labels = np.asarray(labels).reshape(-1)
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(labels, return_counts=True)
    if np.any(counts >= 2):
        classes = classes[counts >= 2]
    pools = [rng.permutation(np.flatnonzero(labels == c)) for c in rng.permutation(classes)]
    chosen, depth = [], 0
    while len(chosen) < count and any(depth < len(pool) for pool in pools):
        chosen.extend(int(pool[depth]) for pool in pools if depth < len(pool))
        depth += 1
    return np.asarray(chosen[:count], dtype=np.int64)


def resolve_queries(labels, queries, seed=0):
    """Query positions from a count (`select_queries`) or given positions, checked."""
    if np.ndim(queries) == 0:
        if int(queries) < 1:
            raise ValueError(f"`queries` must be a positive count. Received: queries={queries}")
        return select_queries(labels, int(queries), seed)
    positions = np.asarray(queries, dtype=np.int64).reshape(-1)
    if positions.size == 0 or positions.min() < 0 or positions.max() >= len(labels):
        raise ValueError(
            f"`queries` must be positions in [0, {len(labels)}). Received: {positions.tolist()}"
        )
    return positions


def draw_grid(axis, shown, labels, query_ids, neighbor_ids, class_names=None, title=None):
    """Draws one grid on `axis`: query column, a gap, then the neighbours, framed by correctness.

    Returns:
        bool array `[Q, k]`: whether each neighbour has its query's label.
    """
    patches = optional_import("matplotlib.patches", feature="retrieval grids")
    num_queries, k = neighbor_ids.shape
    height, width = shown.shape[1:3]
    pad = max(2, round(0.1 * max(height, width)))
    strip = max(6, round(0.3 * height))
    cell_w, cell_h = width + 2 * pad, height + 2 * pad + strip
    gap = max(4, width // 3)
    mosaic = np.ones((num_queries * cell_h, (k + 1) * cell_w + gap, 3), dtype=np.float32)
    correct = labels[neighbor_ids] == labels[query_ids][:, None]

    def origin(row, column):
        return column * cell_w + pad + (gap if column > 0 else 0), row * cell_h + pad

    for row, query in enumerate(query_ids):
        cells = [query, *neighbor_ids[row]]
        for column, index in enumerate(cells):
            x, y = origin(row, column)
            mosaic[y : y + height, x : x + width] = shown[index]
    axis.imshow(mosaic, interpolation="nearest")
    # Frame thickness: most of the padding, converted from image pixels to points.
    extent = axis.get_window_extent().transformed(axis.figure.dpi_scale_trans.inverted())
    points_per_pixel = 72.0 * extent.width / mosaic.shape[1]
    line_width = max(1.0, 0.7 * pad * points_per_pixel)
    fontsize = float(np.clip(0.55 * strip * points_per_pixel, 5.0, 10.0))
    for row, query in enumerate(query_ids):
        x, y = origin(row, 0)
        axis.text(
            x + width / 2,
            y + height + pad,
            label_name(labels[query], class_names),
            ha="center",
            va="top",
            fontsize=fontsize,
            fontweight="bold",
        )
        for j, index in enumerate(neighbor_ids[row]):
            x, y = origin(row, j + 1)
            color = HIT_COLOR if correct[row, j] else MISS_COLOR
            axis.add_patch(
                patches.Rectangle(
                    (x - pad / 2 - 0.5, y - pad / 2 - 0.5),
                    width + pad,
                    height + pad,
                    fill=False,
                    edgecolor=color,
                    linewidth=line_width,
                )
            )
            axis.text(
                x + width / 2,
                y + height + pad,
                label_name(labels[index], class_names),
                ha="center",
                va="top",
                fontsize=fontsize,
                color=color,
            )
    centers = [origin(0, c)[0] + width / 2 for c in range(k + 1)]
    axis.set_xticks(centers, ["query", *[str(j + 1) for j in range(k)]])
    axis.xaxis.tick_top()
    axis.tick_params(length=0)
    axis.set_yticks([])
    for spine in axis.spines.values():
        spine.set_visible(False)
    if title:
        axis.set_title(title)
    return correct


def plot_retrieval_grid(
    model_or_embeddings,
    images,
    labels,
    queries=8,
    k=5,
    class_names=None,
    seed=0,
    batch_size=64,
    cell_size=1.0,
    ax=None,
):
    """Queries (first column) and their k nearest neighbours among the other images.

    Args:
        model_or_embeddings: a keras_dml model (embeds `images`) or an array `[N, D]`.
        images: float array `[N, H, W, C]`, raw pixels in [0, 255] (C = 1 or 3).
        labels: int array `[N]`.
        queries: int (a count spread over classes) or an int array of positions. Defaults to `8`.
        k: int. Neighbours per query. Defaults to `5`.
        class_names: sequence of str. Names of the labels. Defaults to `None` (the numbers).
        seed: int. Query selection seed. Defaults to `0`.
        batch_size: int. Images per forward pass of a model. Defaults to `64`.
        cell_size: float. Inches per image in a new figure. Defaults to `1.0`.
        ax: a matplotlib Axes to draw on. Defaults to `None` (a new figure).

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: mismatched images, labels or embeddings, or `k` of at least N.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).

    References:
        Oh Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding",
        CVPR 2016 (Sec. 5, Fig. 6-8).
    """
    shown = display_images(images)
    labels = check_labels(labels, len(shown))
    embeddings = l2_normalize(embeddings_of(model_or_embeddings, images, batch_size))
    query_ids = resolve_queries(labels, queries, seed)
    neighbor_ids, _ = nearest_neighbors(embeddings[query_ids], embeddings, k, query_ids)
    figure, (axis,) = new_figure(
        1, ax, (cell_size * (k + 1.4), cell_size * 1.3 * len(query_ids)), "plot_retrieval_grid"
    )
    hits = int(np.sum(labels[neighbor_ids[:, 0]] == labels[query_ids]))
    draw_grid(
        axis,
        shown,
        labels,
        query_ids,
        neighbor_ids,
        class_names,
        f"top-{k} neighbours: first correct for {hits}/{len(query_ids)} queries",
    )
    return use_fallback_fonts(figure)
