"""Which vectors D&C's k-means sees, and how new clusters are matched to the learners.

Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019:
Sec. 3.2 clusters "using the full embedding space ... composed by simply concatenating the
embeddings produced by the individual learners"; Appendix A keeps each learner on the new cluster
with the largest IoU with its previous cluster (Hungarian matching).
"""

import itertools

import keras
import numpy as np

from keras_dml.data.datasets.arrays import from_arrays
from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
from keras_dml.losses import ContrastiveLoss
from keras_dml.methods.divide_and_conquer import callback as callback_module
from keras_dml.methods.divide_and_conquer.chief_division import cluster_division
from keras_dml.methods.division.clustering import match_clusters
from keras_dml.models.divide_and_conquer import DivideAndConquer
from tests.support.backend_utils import to_numpy


def tiny_model(num_learners=2):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    model = DivideAndConquer(keras.Model(inputs, x), embedding_dim=8, num_learners=num_learners)
    model.compile(optimizer="adam", loss=ContrastiveLoss())
    return model


def divide_and_record(monkeypatch, cluster_on):
    """Runs one division of a tiny D&C model; returns (vectors k-means got, model, images)."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(6), 4)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    data = from_arrays(images, labels)
    model = tiny_model()
    sampler = ClusterMPerClassSampler(labels, np.zeros(labels.size, int), m=2, batch_size=4)
    callback = callback_module.DivideAndConquerCallback(
        data, labels, sampler, cluster_on=cluster_on, nredo=1, niter=5, batch_size=7
    )
    callback.set_model(model)
    seen = []

    def recording_division(vectors, *args, **kwargs):
        seen.append(np.array(vectors))
        return cluster_division(vectors, *args, **kwargs)

    monkeypatch.setattr(callback_module, "cluster_division", recording_division)
    callback.divide(epoch=0)
    assert len(seen) == 1
    return seen[0], model, images.astype("float32")


def test_kmeans_sees_the_full_embedding_of_the_training_images(monkeypatch):
    vectors, model, images = divide_and_record(monkeypatch, "embedding")
    full = to_numpy(model(images, training=False))
    assert vectors.shape == (images.shape[0], sum(model.learner_dims)) == full.shape
    # Row i is image i's concatenated (per-learner normalised) embedding, in index order.
    np.testing.assert_allclose(vectors, full, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.linalg.norm(vectors, axis=1), np.sqrt(model.num_learners), rtol=1e-5
    )


def test_cluster_on_features_uses_the_normalised_pooled_backbone_features(monkeypatch):
    vectors, model, images = divide_and_record(monkeypatch, "features")
    pooled = to_numpy(model.features(images, training=False))
    expected = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-5, atol=1e-6)


def blobs(per_cluster_classes=2, per_class=3):
    """Three well-separated blobs, each holding two classes of three samples."""
    rng = np.random.default_rng(1)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    blob = np.repeat(np.arange(3), per_cluster_classes * per_class)
    vectors = centres[blob] + rng.normal(scale=0.1, size=(blob.size, 2))
    labels = np.repeat(np.arange(3 * per_cluster_classes), per_class)
    return vectors.astype("float32"), labels, blob


def test_division_relabels_new_clusters_to_their_learners():
    vectors, labels, blob = blobs()
    for permutation in itertools.permutations(range(3)):
        # The previous division found the same three groups under other ids: after matching,
        # every sample keeps its previous id, whatever ids k-means hands out this time.
        previous = np.asarray(permutation)[blob]
        outcome = cluster_division(
            vectors, labels, 3, previous, epoch=2, count=1, kmeans_options={"nredo": 1}
        )
        np.testing.assert_array_equal(outcome["assignment"], previous, err_msg=f"{permutation}")


def best_permutation(previous, current, score):
    """`mapping[new] = old` maximising the summed `score(old members, new members)`."""
    best, best_total = None, -1.0
    for perm in itertools.permutations(range(3)):
        total = sum(score(previous == perm[new], current == new) for new in range(3))
        if total > best_total + 1e-12:
            best, best_total = np.asarray(perm), total
    return best


def test_iou_matching_differs_from_overlap_matching():
    previous = np.array([2, 0, 2, 2, 0, 1, 1, 0, 2, 2, 0, 0])
    current = np.array([0, 2, 0, 1, 2, 2, 0, 0, 1, 2, 1, 0])

    def iou(a, b):
        return np.sum(a & b) / np.sum(a | b)

    def overlap(a, b):
        return float(np.sum(a & b))

    by_iou = best_permutation(previous, current, iou)[current]
    by_overlap = best_permutation(previous, current, overlap)[current]
    assert not np.array_equal(by_iou, by_overlap)  # the example tells the two rules apart
    np.testing.assert_array_equal(match_clusters(previous, current, 3, "iou"), by_iou)
    np.testing.assert_array_equal(match_clusters(previous, current, 3, "overlap"), by_overlap)
