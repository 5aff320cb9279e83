"""Every picture renders from a tiny trained model and shows what was computed independently."""

import json

import keras
import numpy as np
import pytest

from keras_dml.models import DCML, EmbeddingModel
from keras_dml.models.abe import ABE
from keras_dml.models.mheads import MHeads
from keras_dml.visualization import (
    compositor_weight_matrix,
    nearest_neighbors,
    plot_attention,
    plot_compositor_weights,
    plot_learner_diagnostics,
    plot_learner_retrieval_grids,
    plot_projection,
    plot_retrieval_grid,
    plot_training_curves,
    project_embeddings,
    save_figure,
    select_queries,
)
from keras_dml.visualization._common import HIT_COLOR, MISS_COLOR
from tests.support.vis_fixtures import brute_force_neighbors, convnet, digits_sample, trained

matplotlib = pytest.importorskip("matplotlib")
to_hex = matplotlib.colors.to_hex


@pytest.fixture(scope="module")
def sample():
    return digits_sample(count=60)


@pytest.fixture(scope="module")
def ensemble(sample):
    images, labels, _ = sample
    model = EmbeddingModel(convnet(), embedding_dim=16, num_learners=2)
    return trained(model, images, labels)


def embeddings_of(model, images):
    return keras.ops.convert_to_numpy(model(images, training=False))


def frame_colors(axis):
    return np.array([to_hex(p.get_edgecolor()) for p in axis.patches]).reshape(-1)


def test_nearest_neighbors_match_brute_force_and_keep_duplicates():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 5)).astype("float32")
    # A duplicate of query 3 at a lower index ties with it and comes first: it stays a
    # neighbour, and only index 3 itself is removed.
    x[1] = x[3]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    queries = np.array([3, 10, 29])
    indices, sims = nearest_neighbors(x[queries], x, 4, query_ids=queries)
    np.testing.assert_array_equal(indices, brute_force_neighbors(x, queries, 4))
    assert indices[0, 0] == 1 and 3 not in indices[0]
    np.testing.assert_allclose(sims, np.take_along_axis(x[queries] @ x.T, indices, 1), atol=1e-6)
    with pytest.raises(ValueError, match="k"):
        nearest_neighbors(x[:1], x, 30, query_ids=[0])
    with pytest.raises(ValueError, match="query_ids"):
        nearest_neighbors(x[:2], x, 2, query_ids=[0])


def test_select_queries_spreads_over_classes():
    labels = np.repeat(np.arange(4), 10)
    chosen = select_queries(labels, 6, seed=1)
    assert len(set(chosen.tolist())) == 6
    assert set(labels[chosen[:4]].tolist()) == {0, 1, 2, 3}
    # A class with one image cannot have a correct neighbour: it is not queried.
    assert 4 not in select_queries(np.array([0, 0, 1, 1, 2]), 3).tolist()


def test_retrieval_grid_frames_match_independent_neighbours(ensemble, sample):
    images, labels, names = sample
    k, queries = 4, np.array([0, 5, 11, 30, 42])
    figure = plot_retrieval_grid(ensemble, images, labels, queries=queries, k=k, class_names=names)
    (axis,) = figure.axes
    neighbors = brute_force_neighbors(embeddings_of(ensemble, images), queries, k)
    correct = labels[neighbors] == labels[queries][:, None]
    expected = np.where(correct, HIT_COLOR, MISS_COLOR).reshape(-1)
    assert correct.any() and not correct.all()  # both colours are exercised
    np.testing.assert_array_equal(frame_colors(axis), expected)
    hits = int(correct[:, 0].sum())
    assert f"first correct for {hits}/{len(queries)}" in axis.get_title()
    texts = [t.get_text() for t in axis.texts]
    assert texts[0] == names[labels[queries[0]]]  # the query's class under its image
    # The same picture from precomputed embeddings.
    again = plot_retrieval_grid(embeddings_of(ensemble, images), images, labels, queries, k)
    np.testing.assert_array_equal(frame_colors(again.axes[0]), expected)


def test_retrieval_grid_errors(sample):
    images, labels, _ = sample
    embeddings = np.random.default_rng(0).normal(size=(len(images), 8))
    with pytest.raises(ValueError, match="labels"):
        plot_retrieval_grid(embeddings, images, labels[:-1])
    with pytest.raises(ValueError, match="queries"):
        plot_retrieval_grid(embeddings, images, labels, queries=[len(images)])
    with pytest.raises(ValueError, match="embeddings"):
        plot_retrieval_grid(embeddings[:-1], images, labels)


def test_learner_grids_use_each_learners_slice(ensemble, sample):
    images, labels, _ = sample
    queries, k = np.array([1, 8, 20, 33]), 3
    figure = plot_learner_retrieval_grids(ensemble, images, labels, queries=queries, k=k)
    assert len(figure.axes) == len(ensemble.learner_dims) == 2
    embeddings = embeddings_of(ensemble, images)
    views = []
    for (start, stop), axis in zip(ensemble.learner_slices(), figure.axes):
        neighbors = brute_force_neighbors(embeddings[:, start:stop], queries, k)
        views.append(neighbors)
        correct = labels[neighbors] == labels[queries][:, None]
        expected = np.where(correct, HIT_COLOR, MISS_COLOR).reshape(-1)
        np.testing.assert_array_equal(frame_colors(axis), expected)
    assert not np.array_equal(views[0], views[1])  # the learners see different neighbours
    with pytest.raises(ValueError, match="learner_dims"):
        plot_learner_retrieval_grids(embeddings, images, labels)
    with pytest.raises(ValueError, match="sum to the embedding size"):
        plot_learner_retrieval_grids(embeddings, images, labels, learner_dims=[8, 4])


def test_projection_points_and_colours_per_class(ensemble, sample):
    images, labels, names = sample
    clusters = np.arange(len(labels)) % 3
    figure = plot_projection(ensemble, images, labels, clusters=clusters, class_names=names)
    by_class, by_cluster = figure.axes[:2]
    classes = np.unique(labels)
    assert len(by_class.collections) == len(classes)
    for collection, label in zip(by_class.collections, classes):
        assert len(collection.get_offsets()) == np.sum(labels == label)
        assert collection.get_label() == names[label]
    class_colors = {to_hex(c.get_facecolor()[0]) for c in by_class.collections}
    assert len(class_colors) == len(classes)
    counts = [len(c.get_offsets()) for c in by_cluster.collections]
    assert counts == np.bincount(clusters).tolist()
    # The drawn points are the PCA of the L2-normalised embeddings (checked against sklearn).
    from sklearn.decomposition import PCA

    x = embeddings_of(ensemble, images)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    reference = PCA(2).fit_transform(x)
    drawn = np.concatenate([c.get_offsets() for c in by_class.collections])
    order = np.concatenate([np.flatnonzero(labels == c) for c in classes])
    np.testing.assert_allclose(np.abs(drawn), np.abs(reference[order]), atol=1e-4)


def test_projection_tsne_sample_and_errors(sample):
    images, labels, _ = sample
    embeddings = np.random.default_rng(0).normal(size=(len(labels), 6))
    figure = plot_projection(embeddings, None, labels, method="tsne", max_points=40)
    assert sum(len(c.get_offsets()) for c in figure.axes[0].collections) == 40
    assert figure.axes[0].get_title().startswith("t-SNE")
    xy, used = project_embeddings(embeddings, "auto")
    assert xy.shape == (len(labels), 2) and used in ("tsne", "umap")
    with pytest.raises(ValueError, match="method"):
        plot_projection(embeddings, None, labels, method="mds")
    with pytest.raises(ValueError, match="clusters"):
        plot_projection(embeddings, None, labels, clusters=labels[:3])
    with pytest.raises(ValueError, match="2 panel"):
        figure = plot_projection(embeddings, None, labels)
        plot_projection(embeddings, None, labels, clusters=labels, ax=figure.axes[0])


def test_training_curves_from_a_run_folder(tmp_path):
    history = {
        "loss": [0.9, 0.7, 0.5, 0.4],
        "val_recall@1": [0.6, 0.8],
        "val_map@r": [0.3, 0.4],
        "dc_cluster_nmi": [0.5, 0.5],
    }
    (tmp_path / "history.json").write_text(json.dumps(history))
    figure = plot_training_curves(str(tmp_path), eval_every=2)
    losses, metrics = figure.axes[:2]
    assert [line.get_label() for line in losses.lines] == ["loss"]
    np.testing.assert_array_equal(losses.lines[0].get_xdata(), [1, 2, 3, 4])
    assert sorted(line.get_label() for line in metrics.lines) == ["val_map@r", "val_recall@1"]
    np.testing.assert_array_equal(metrics.lines[0].get_xdata(), [2, 4])
    np.testing.assert_array_equal(losses.get_xticks(), [1, 2, 3, 4])  # whole epochs only
    one_epoch = plot_training_curves({"loss": [0.5], "val_recall@1": [0.9]})
    np.testing.assert_array_equal(one_epoch.axes[0].get_xticks(), [1])
    with pytest.raises(ValueError, match="history.json"):
        plot_training_curves(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="no loss"):
        plot_training_curves({"lr": [0.1]})


@pytest.fixture(scope="module")
def abe(sample):
    images, labels, _ = sample
    return trained(ABE(convnet(), num_learners=3, embedding_dim=12), images, labels)


def test_attention_maps_share_one_colour_scale(abe, sample, tmp_path):
    images, labels, names = sample
    figure = plot_attention(abe, images[:3], labels[:3], class_names=names)
    panels = [a for a in figure.axes if a.images]
    assert len(panels) == 3 * (3 + 1)
    assert len(figure.axes) == len(panels) + 1  # plus one colourbar
    maps = abe.attention_maps(images[:3])
    overlays = [a.images[1] for a in panels if len(a.images) == 2]
    assert len(overlays) == 9
    for overlay in overlays:
        assert overlay.get_clim() == pytest.approx((maps.min(), maps.max()), abs=1e-6)
    rows = [a.get_ylabel() for a in panels if len(a.images) == 1]
    assert rows == [names[label] for label in labels[:3]]
    fixed = plot_attention(abe, images[:2], value_range=(0.0, 1.0))
    assert all(a.images[1].get_clim() == (0.0, 1.0) for a in fixed.axes if len(a.images) == 2)
    path = save_figure(figure, str(tmp_path / "sub" / "attention.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    plot_attention(abe, images[:2], reduce=4)


def test_attention_errors(sample):
    images, _, _ = sample
    model = MHeads(convnet(), num_learners=2, embedding_dim=8)
    maps = np.random.default_rng(0).random((2, 2, 32, 32))
    figure = plot_attention(model, images[:2], maps=maps)
    assert len([a for a in figure.axes if a.images]) == 6
    with pytest.raises(ValueError, match="attention masks"):
        plot_attention(model, images[:2])
    with pytest.raises(ValueError, match="maps"):
        plot_attention(model, images[:2], maps=maps[:, :, :16])
    with pytest.raises(ValueError, match="savefig"):
        plot_attention(model, images[:2], "attention.png", maps=maps)
    with pytest.raises(ValueError, match="value_range"):
        plot_attention(model, images[:2], maps=maps, value_range=(1.0, 1.0))


def test_compositor_weights_figure_and_matrix(sample):
    images, labels, _ = sample
    model = trained(
        DCML(convnet(), num_learners=2, learner_dim=8, num_compositors=3), images, labels
    )
    weights = compositor_weight_matrix(model, images[:16])
    np.testing.assert_allclose(weights, model.compositor_weights(images[:16]), atol=1e-6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    figure = plot_compositor_weights(model, images[:16])
    heatmap = figure.axes[0]
    np.testing.assert_allclose(heatmap.images[0].get_array(), weights, atol=1e-6)
    assert [t.get_text() for t in heatmap.texts] == [f"{v:.2f}" for v in weights.ravel()]
    assert len(figure.axes) == 2  # heatmap and colourbar
    with pytest.raises(ValueError, match="images"):
        compositor_weight_matrix(model)


@pytest.mark.parametrize("bad", [np.zeros((3,)), np.full((2, 2), np.nan), np.zeros((0, 2))])
def test_compositor_weights_reject_bad_arrays(bad):
    with pytest.raises(ValueError, match="num_compositors"):
        plot_compositor_weights(bad)


def test_learner_diagnostics_bars_and_correlation(ensemble, sample):
    images, labels, _ = sample
    figure = plot_learner_diagnostics(ensemble, images, labels)
    bars_axis, corr_axis = figure.axes[:2]
    embeddings = embeddings_of(ensemble, images)
    everyone = np.arange(len(labels))

    def recall_at_1(x):
        first = brute_force_neighbors(x, everyone, 1)[:, 0]
        return float(np.mean(labels[first] == labels))

    parts = [embeddings[:, a:b] for a, b in ensemble.learner_slices()]
    expected = [recall_at_1(p) for p in parts] + [recall_at_1(embeddings)]
    heights = [bar.get_height() for bar in bars_axis.patches]
    np.testing.assert_allclose(heights, expected, atol=1e-6)
    normed = [p / np.linalg.norm(p, axis=1, keepdims=True) for p in parts]
    i, j = np.triu_indices(len(labels), k=1)
    scores = [np.sum(p[i] * p[j], axis=1) for p in normed]
    reference = np.corrcoef(scores)
    np.testing.assert_allclose(corr_axis.images[0].get_array(), reference, atol=1e-5)
    assert corr_axis.images[0].get_clim() == (-1.0, 1.0)
