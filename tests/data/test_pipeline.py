"""Input pipeline: decoding, augmentation, broken files, sampler protocol, cluster batches."""

import os
import warnings

import numpy as np
import pytest
import tensorflow as tf

from keras_dml.data.datasets import from_arrays, load_dataset
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.preprocessing import (
    default_resize_size,
    preprocess_for_eval,
    preprocess_for_train,
)
from tests.support.data_fixtures import class_colour, make_image_folder, write_corrupt


class ListSampler:
    """Test double of the sampler protocol: serves a fresh list of batches every epoch."""

    def __init__(self, epochs, batch_size, yields_clusters=False):
        self.epochs = list(epochs)
        self.batch_size = batch_size
        self.num_batches = len(self.epochs[0])
        self.yields_clusters = yields_clusters
        self.calls = 0

    def epoch_batches(self):
        batches = self.epochs[min(self.calls, len(self.epochs) - 1)]
        self.calls += 1
        return batches


def _gradient_images(count, height=30, width=40):
    """uint8 images whose pixel value encodes the image index (constant per image)."""
    return np.broadcast_to(
        (np.arange(count, dtype=np.uint8) * 10)[:, None, None, None], (count, height, width, 3)
    ).copy()


def test_default_resize_size_scales_from_224():
    assert default_resize_size(224) == 256
    assert default_resize_size(32) == 37
    assert default_resize_size((64, 48)) == 73


def test_eval_transform_resizes_shorter_side_and_center_crops():
    image = np.zeros((30, 60, 3), np.uint8)
    image[:, 27:33] = 255  # a bright vertical band in the middle of the wide image
    out = preprocess_for_eval(tf.constant(image), 32).numpy()
    assert out.shape == (32, 32, 3) and out.dtype == np.float32
    assert out.min() >= 0.0 and out.max() <= 255.0
    columns = out[:, :, 0].mean(axis=0)
    assert columns[16] > 200 and columns[0] < 5 and columns[-1] < 5  # band stays centred
    grey = preprocess_for_eval(tf.zeros([30, 40, 1], tf.uint8), (24, 16))
    assert tuple(grey.shape) == (24, 16, 3)
    with pytest.raises(ValueError, match="resize_size"):
        preprocess_for_eval(tf.constant(image), 32, resize_size=20)


@pytest.mark.parametrize("augmentation", ["crop_flip", "resized_crop_flip"])
def test_train_transform_is_seeded_random_crop_and_flip(augmentation):
    image = tf.constant(np.random.default_rng(0).integers(0, 256, (30, 40, 3)), tf.uint8)
    outs = [
        preprocess_for_train(image, 32, tf.constant([s, 7]), augmentation=augmentation).numpy()
        for s in (1, 1, 2, 3, 4)
    ]
    assert all(o.shape == (32, 32, 3) and o.min() >= 0 and o.max() <= 255 for o in outs)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert any(not np.allclose(outs[0], o) for o in outs[2:])
    with pytest.raises(ValueError, match="augmentation"):
        preprocess_for_train(image, 32, tf.constant([1, 2]), augmentation="mixup")


def test_flip_happens_for_some_seeds():
    image = np.zeros((32, 32, 3), np.uint8)
    image[:, :4] = 255  # bright left edge
    lefts = {
        bool(
            preprocess_for_train(tf.constant(image), 32, tf.constant([s, 0]), resize_size=32)
            .numpy()[:, 0, 0]
            .mean()
            > 100
        )
        for s in range(12)
    }
    assert lefts == {True, False}


def test_eval_pipeline_from_files_keeps_order_and_labels(tmp_path):
    make_image_folder(str(tmp_path), num_classes=4, per_class=3)
    data = load_dataset("image_folder", "test", data_dir=str(tmp_path), image_size=32)
    batches = list(data.as_tf_dataset(batch_size=4))
    images = np.concatenate([b[0].numpy() for b in batches])
    labels = np.concatenate([b[1].numpy() for b in batches])
    assert batches[0][1].dtype == tf.int32 and images.dtype == np.float32
    assert images.shape == (len(data), 32, 32, 3)
    np.testing.assert_array_equal(labels, data.labels)
    for image, label in zip(images, labels):
        class_index = int(data.class_names[label].split("_")[1])
        # JPEG / PNG of a flat colour: the decoded pixel identifies the class.
        assert np.abs(image[16, 16] - np.array(class_colour(class_index))).max() <= 4


def test_training_pipeline_shuffles_drops_remainder_and_is_seeded():
    data = from_arrays(_gradient_images(10), np.arange(10) % 5, image_size=32)
    first = [b[1].numpy().tolist() for b in data.as_tf_dataset(True, batch_size=4, seed=3)]
    again = [b[1].numpy().tolist() for b in data.as_tf_dataset(True, batch_size=4, seed=3)]
    assert first == again and [len(b) for b in first] == [4, 4]
    ds = data.as_tf_dataset(True, batch_size=4, seed=3)
    epochs = [[tuple(b[0].numpy()[:, 0, 0, 0]) for b in ds] for _ in range(2)]
    assert epochs[0] != epochs[1]  # reshuffled (and re-augmented) every epoch
    assert [len(b[1]) for b in data.as_tf_dataset(batch_size=4)] == [4, 4, 2]


def test_corrupt_and_missing_files_are_skipped_and_reported(tmp_path):
    make_image_folder(str(tmp_path), num_classes=2, per_class=3)
    paths = sorted(str(p) for p in tmp_path.rglob("*.*"))
    write_corrupt(str(tmp_path / "bad.jpg"))
    data = ImageDataset(
        labels=[0, 0, 0, 1, 1, 1, 1, 0],
        paths=[*paths, str(tmp_path / "bad.jpg"), str(tmp_path / "gone.png")],
        image_size=32,
    )
    with pytest.warns(UserWarning, match=r"skipping 2 of 8 .*bad.jpg.*gone.png"):
        ds = data.as_tf_dataset(batch_size=3)
    labels = np.concatenate([b[1].numpy() for b in ds])
    assert data.skipped_files == [str(tmp_path / "bad.jpg"), str(tmp_path / "gone.png")]
    assert len(data) == 6 and labels.tolist() == data.labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_unverified_broken_file_does_not_end_the_epoch(tmp_path):
    make_image_folder(str(tmp_path), num_classes=2, per_class=2)
    paths = sorted(str(p) for p in tmp_path.rglob("*.*"))
    write_corrupt(str(tmp_path / "bad.jpg"))
    data = ImageDataset([0, 0, 1, 1, 1], paths=[*paths, str(tmp_path / "bad.jpg")], image_size=32)
    data._verified = True  # as if verification had been skipped: the pipeline must cope
    labels = np.concatenate([b[1].numpy() for b in data.as_tf_dataset(batch_size=2)])
    assert labels.tolist() == [0, 0, 1, 1]


def test_sampler_batches_are_requested_anew_each_epoch():
    data = from_arrays(_gradient_images(8), np.arange(8) // 2, image_size=32)
    sampler = ListSampler(
        [
            [np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7])],
            [np.array([6, 7, 0, 1]), np.array([2, 3, 4, 5])],
        ],
        batch_size=4,
    )
    ds = data.as_tf_dataset(training=True, sampler=sampler, seed=0)
    assert int(ds.cardinality()) == 2  # a fixed-length sampler: Keras knows the epoch length
    epoch1 = [b[1].numpy().tolist() for b in ds]
    epoch2 = [b[1].numpy().tolist() for b in ds]
    assert epoch1 == [[0, 0, 1, 1], [2, 2, 3, 3]]
    assert epoch2 == [[3, 3, 0, 0], [1, 1, 2, 2]]
    assert sampler.calls == 2


def test_variable_length_sampler_gives_unknown_cardinality():
    data = from_arrays(_gradient_images(8), np.arange(8) // 2, image_size=32)
    sampler = ListSampler([[np.array([0, 1, 2, 3])]], batch_size=4)
    sampler.epoch_length = "max"  # the count may follow a re-clustering
    ds = data.as_tf_dataset(training=True, sampler=sampler, seed=0)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_cluster_sampler_yields_cluster_ids():
    data = from_arrays(_gradient_images(6), [0, 0, 1, 1, 2, 2], image_size=32)
    sampler = ListSampler(
        [[(np.array([0, 1, 2, 3]), 1), (np.array([4, 5]), 0)]], batch_size=4, yields_clusters=True
    )
    batches = list(data.as_tf_dataset(sampler=sampler, with_clusters=True))
    images, targets = batches[0]
    assert tuple(images.shape) == (4, 32, 32, 3)
    assert targets["labels"].numpy().tolist() == [0, 0, 1, 1]
    assert targets["clusters"].dtype == tf.int32
    assert targets["clusters"].numpy().tolist() == [1, 1, 1, 1]
    assert batches[1][1]["clusters"].numpy().tolist() == [0, 0]
    # Without with_clusters the cluster ids are dropped.
    plain = next(iter(data.as_tf_dataset(sampler=sampler)))
    assert plain[1].numpy().tolist() == [0, 0, 1, 1]


def test_sampler_and_argument_errors():
    data = from_arrays(_gradient_images(4), [0, 0, 1, 1], image_size=32)
    with pytest.raises(ValueError, match="yields_clusters"):
        data.as_tf_dataset(with_clusters=True)
    with pytest.raises(TypeError, match="epoch_batches"):
        data.as_tf_dataset(sampler=object())
    with pytest.raises(ValueError, match="batch_size"):
        data.as_tf_dataset(batch_size=0)
    bad = ListSampler([[np.array([0, 9])]], batch_size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"outside \[0, 4\)"):
        list(data.as_tf_dataset(sampler=bad))


def test_fashion_mnist_grey_images_become_rgb():
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        pytest.skip("install with: apt-get install dataset-fashion-mnist")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_dataset("fashion_mnist", "val", max_per_class=4)
    images, labels = next(iter(data.as_tf_dataset(batch_size=4)))
    assert tuple(images.shape) == (4, 32, 32, 3)
    np.testing.assert_allclose(images[..., 0], images[..., 2])
    assert data.num_classes == 2 and len(data) == 8  # two held-out classes, 4 images each
    assert set(labels.numpy().tolist()) <= {0, 1}


def test_real_samplers_drive_the_pipeline_and_reclustering_takes_effect():
    from keras_dml.data.samplers import ClusterMPerClassSampler, MPerClassSampler

    labels = np.repeat(np.arange(8), 4)
    data = from_arrays(_gradient_images(32, 8, 8), labels, image_size=8)
    sampler = MPerClassSampler(data.labels, m=2, batch_size=8, seed=0)
    for images, batch_labels in data.as_tf_dataset(True, sampler=sampler, seed=0):
        assert tuple(images.shape) == (8, 8, 8, 3)
        assert sorted(np.bincount(batch_labels.numpy()).tolist())[-4:] == [2, 2, 2, 2]
    clusters = (labels >= 4).astype(np.int64)
    cluster_sampler = ClusterMPerClassSampler(data.labels, clusters, m=2, batch_size=4, seed=0)
    ds = data.as_tf_dataset(True, sampler=cluster_sampler, with_clusters=True, seed=0)

    def cluster_and_low_labels():
        """(cluster id, whether every label is < 4) of each batch of one epoch."""
        return {(int(t["clusters"][0]), bool((t["labels"] < 4).numpy().all())) for _, t in ds}

    assert cluster_and_low_labels() == {(0, True), (1, False)}
    cluster_sampler.set_clusters(1 - clusters)  # swap the assignment between epochs
    assert cluster_and_low_labels() == {(1, True), (0, False)}


@pytest.mark.filterwarnings("ignore:.*ran out of data", "ignore:.*shuffle=True")
def test_model_fit_re_requests_sampler_batches_every_epoch():
    import keras

    data = from_arrays(_gradient_images(8, 8, 8), np.arange(8) // 2, image_size=8)
    sampler = ListSampler([[np.arange(4), np.arange(4, 8)]], batch_size=4)
    model = keras.Sequential(
        [keras.Input((8, 8, 3)), keras.layers.Flatten(), keras.layers.Dense(4)]
    )
    model.compile(
        optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    history = model.fit(data.as_tf_dataset(True, sampler=sampler, seed=0), epochs=2, verbose=0)
    assert sampler.calls == 2 and len(history.history["loss"]) == 2
