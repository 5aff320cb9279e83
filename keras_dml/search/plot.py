"""`plot_neighbors`: a minimal row picture of a query and its nearest gallery images."""

import numpy as np

from keras_dml.utils import optional_import


def _thumbnail(item, size):
    from PIL import Image

    if isinstance(item, np.ndarray):
        image = Image.fromarray(np.clip(np.rint(item), 0, 255).astype(np.uint8).squeeze())
    else:
        with Image.open(item) as opened:
            image = opened.convert("RGB")
    return np.asarray(image.convert("RGB").resize((size, size)))


def plot_neighbors(query, neighbors, titles=None, correct=None, size=96):
    """One row: the query, then its neighbours, each titled; returns the matplotlib figure.

    Args:
        query: an image file path or an array `[H, W, C]` / `[H, W]` of raw pixels.
        neighbors: list of image paths or arrays, best first.
        titles: list of str, one per neighbour, or None. Defaults to `None`.
        correct: list of bool (green frame for True, red for False), or None. Defaults to `None`.
        size: int. Thumbnail side in pixels. Defaults to `96`.
    """
    optional_import("matplotlib", feature="plotting search results")
    from matplotlib.figure import Figure

    if not len(neighbors):
        raise ValueError("`neighbors` is empty; pass at least one neighbour image to plot.")
    count = len(neighbors) + 1
    figure = Figure(figsize=(1.6 * count, 2.0))
    axes = figure.subplots(1, count, squeeze=False)[0]
    images = [query, *neighbors]
    labels = ["query", *(titles or [""] * len(neighbors))]
    for i, (axis, item, title) in enumerate(zip(axes, images, labels)):
        axis.imshow(_thumbnail(item, size))
        axis.set_title(title, fontsize=8)
        axis.set_xticks([])
        axis.set_yticks([])
        if i and correct is not None:
            colour = "tab:green" if correct[i - 1] else "tab:red"
            for spine in axis.spines.values():
                spine.set_edgecolor(colour)
                spine.set_linewidth(3)
    figure.tight_layout()
    return figure
