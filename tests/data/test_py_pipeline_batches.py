"""PyDataset pipeline batches: the tf.data path's sampler batches, eval images, seeds, resume."""

import multiprocessing
import os
import warnings

import numpy as np
import pytest
from PIL import Image

from keras_dml.data.batch_loading import BatchLoader
from keras_dml.data.image_batches import ImageBatches
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.index_epochs import IndexEpochs
from keras_dml.data.numpy_preprocessing import EVAL_TOLERANCE, sample_crop_box
from keras_dml.data.pipeline_options import PipelineOptions
from keras_dml.data.py_pipeline import make_py_dataset
from keras_dml.data.samplers import ClusterMPerClassSampler, MPerClassSampler

LABELS = np.repeat(np.arange(8), 4)


def indexed_images(size=16):
    """Image i is filled with the value i, so a batch's pixels name its indices."""
    return np.broadcast_to(np.arange(len(LABELS), dtype=np.uint8)[:, None, None], (32, size, size))


def py_epoch(batches, sampler=None, epoch=None):
    """All batches of one epoch of a PyDataset, as Keras reads them."""
    if sampler is not None:
        sampler.set_epoch(epoch)
    batches.on_epoch_begin()
    out = [batches[step] for step in range(len(batches))]
    batches.on_epoch_end()
    return out


def tf_epoch(dataset, sampler, epoch):
    sampler.set_epoch(epoch)
    return [(x.numpy(), y) for x, y in dataset]


def noise_image(rng, height, width):
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


@pytest.mark.parametrize("epoch", [0, 2])
def test_sampler_batches_equal_the_tf_path_batches(epoch):
    from keras_dml.data.pipeline import make_tf_dataset

    data = ImageDataset(LABELS, images=indexed_images(), image_size=16)
    tf_sampler, py_sampler = (MPerClassSampler(LABELS, 2, 8, seed=5) for _ in range(2))
    tf_batches = tf_epoch(
        make_tf_dataset(
            data, PipelineOptions(True, sampler=tf_sampler, seed=1, augmentation="none")
        ),
        tf_sampler,
        epoch,
    )
    py_batches = py_epoch(
        make_py_dataset(
            data, PipelineOptions(True, sampler=py_sampler, seed=1, augmentation="none")
        ),
        py_sampler,
        epoch,
    )
    assert len(py_batches) == len(tf_batches) == 4
    for (tf_images, tf_labels), (py_images, py_labels) in zip(tf_batches, py_batches):
        np.testing.assert_array_equal(py_images, tf_images)
        np.testing.assert_array_equal(py_labels, tf_labels.numpy())
        assert py_images.dtype == np.float32 and py_labels.dtype == np.int32


def test_cluster_batches_equal_the_tf_path_batches():
    from keras_dml.data.pipeline import make_tf_dataset

    data = ImageDataset(LABELS, images=indexed_images(), image_size=16)
    clusters = LABELS // 4
    samplers = [ClusterMPerClassSampler(LABELS, clusters, 2, 4, seed=0) for _ in range(2)]
    arguments = dict(training=True, seed=0, augmentation="none", with_clusters=True)
    tf_batches = tf_epoch(
        make_tf_dataset(data, PipelineOptions(sampler=samplers[0], **arguments)), samplers[0], 1
    )
    py_batches = py_epoch(
        make_py_dataset(data, PipelineOptions(sampler=samplers[1], **arguments)), samplers[1], 1
    )
    assert len(py_batches) == len(tf_batches)
    for (tf_images, tf_targets), (py_images, py_targets) in zip(tf_batches, py_batches):
        np.testing.assert_array_equal(py_images, tf_images)
        for key in ("labels", "clusters"):
            np.testing.assert_array_equal(py_targets[key], tf_targets[key].numpy())


def test_eval_images_are_within_the_stated_tolerance_of_the_tf_path(tmp_path):
    from keras_dml.data.pipeline import make_tf_dataset

    rng = np.random.default_rng(0)
    shapes = [(20, 25), (37, 41), (64, 80), (100, 120), (90, 60)]
    paths = []
    for number, shape in enumerate(shapes):
        paths.append(str(tmp_path / f"{number}.png"))
        Image.fromarray(noise_image(rng, *shape)).save(paths[-1])
    for size in (16, 32):
        data = ImageDataset(np.arange(len(paths)), paths=paths, image_size=size)
        tf_images = next(iter(make_tf_dataset(data, PipelineOptions(batch_size=8))))[0].numpy()
        py_images = make_py_dataset(data, PipelineOptions(batch_size=8, num_parallel_calls=0))[0][0]
        difference = np.abs(py_images - tf_images)
        assert difference.max() <= EVAL_TOLERANCE, (size, difference.max())


def same_picture_batches(augmentation, seed, num_parallel_calls=0, tmp_path=None, hw=(40, 36)):
    """One epoch of 16 copies of one noise picture (`hw`), augmented, 2 batches of 8."""
    picture = noise_image(np.random.default_rng(1), *hw)
    labels = np.repeat(np.arange(4), 4)
    if tmp_path is None:
        data = ImageDataset(labels, images=np.stack([picture] * 16), image_size=32)
    else:
        Image.fromarray(picture).save(tmp_path / "picture.png")
        data = ImageDataset(labels, paths=[str(tmp_path / "picture.png")] * 16, image_size=32)
    sampler = MPerClassSampler(labels, 2, 8, seed=0)
    batches = make_py_dataset(
        data,
        PipelineOptions(
            True,
            sampler=sampler,
            seed=seed,
            augmentation=augmentation,
            num_parallel_calls=num_parallel_calls,
        ),
    )
    return [images for images, _ in py_epoch(batches, sampler, 0)]


def distinct_images(images):
    return len({image.tobytes() for image in images})


@pytest.mark.parametrize("augmentation", ["crop_flip", "resized_crop"])
def test_augmentation_is_fixed_by_the_seed_and_differs_across_images_and_steps(augmentation):
    first, again = same_picture_batches(augmentation, 3), same_picture_batches(augmentation, 3)
    for batch, repeated in zip(first, again):
        np.testing.assert_array_equal(batch, repeated)
    assert distinct_images(first[0]) > 4  # each image of a batch draws its own crop
    assert not np.array_equal(first[0], first[1])  # the steps draw differently
    assert not np.array_equal(first[0], same_picture_batches(augmentation, 4)[0])


def test_worker_processes_give_the_main_process_batches(tmp_path):
    in_process = same_picture_batches("crop_flip", 3, 0, tmp_path)
    in_workers = same_picture_batches("crop_flip", 3, 2, tmp_path)
    for batch, from_workers in zip(in_process, in_workers):
        np.testing.assert_array_equal(batch, from_workers)


def test_flip_mirrors_about_half_of_the_images():
    picture = noise_image(np.random.default_rng(1), 32, 32).astype(np.float32)
    flipped = 0
    for batch in same_picture_batches("flip", 0, hw=(32, 32)):
        for image in batch:
            assert np.array_equal(image, picture) or np.array_equal(image, picture[:, ::-1])
            flipped += np.array_equal(image, picture[:, ::-1])
    assert 3 <= flipped <= 13


def test_a_fresh_pipeline_at_epoch_e_replays_the_uninterrupted_epoch_e():
    images = np.stack([noise_image(np.random.default_rng(i), 40, 40) for i in range(32)])
    data = ImageDataset(LABELS, images=images, image_size=32)

    def pipeline():
        sampler = MPerClassSampler(LABELS, 2, 8, seed=7)
        batches = make_py_dataset(
            data, PipelineOptions(True, sampler=sampler, seed=2, augmentation="crop_flip")
        )
        return sampler, batches

    sampler, batches = pipeline()
    uninterrupted = [py_epoch(batches, sampler, epoch) for epoch in range(3)]
    sampler, batches = pipeline()
    resumed = py_epoch(batches, sampler, 2)
    assert len(resumed) == len(uninterrupted[2])
    for (images, labels), (expected_images, expected_labels) in zip(resumed, uninterrupted[2]):
        np.testing.assert_array_equal(images, expected_images)
        np.testing.assert_array_equal(labels, expected_labels)
    assert not np.array_equal(uninterrupted[1][0][0], uninterrupted[2][0][0])


def test_without_sampler_every_image_once_shuffled_per_epoch_and_the_remainder_dropped():
    data = ImageDataset(LABELS[:30], images=indexed_images()[:30], image_size=16)
    batches = make_py_dataset(
        data, PipelineOptions(True, batch_size=8, seed=0, augmentation="none")
    )
    assert len(batches) == 3  # 30 images: the last 6 dropped in training
    epochs = [np.concatenate([x[:, 0, 0, 0] for x, _ in py_epoch(batches)]) for _ in range(2)]
    assert all(len(set(order.tolist())) == 24 for order in epochs)
    assert not np.array_equal(epochs[0], epochs[1])
    evaluation = make_py_dataset(data, PipelineOptions(batch_size=8))
    order = np.concatenate([x[:, 0, 0, 0] for x, _ in py_epoch(evaluation)])
    np.testing.assert_array_equal(order, np.arange(30))


def test_a_file_that_fails_after_verification_is_left_out_with_a_warning(tmp_path):
    paths = []
    for number in range(4):
        paths.append(str(tmp_path / f"{number}.png"))
        Image.fromarray(noise_image(np.random.default_rng(number), 20, 20)).save(paths[-1])
    data = ImageDataset([0, 1, 2, 3], paths=paths, image_size=16, verify=True)
    with open(paths[2], "wb") as file:
        file.write(b"broken after verification")
    batches = make_py_dataset(data, PipelineOptions(batch_size=4, num_parallel_calls=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        images, labels = batches[0]
    assert images.shape[0] == 3 and labels.tolist() == [0, 1, 3]
    assert any(os.path.basename(paths[2]) in str(w.message) for w in caught)


def test_a_keras_pipeline_augments_whole_batches_and_must_keep_their_shape():
    import keras

    data = ImageDataset(LABELS, images=indexed_images(), image_size=16)
    halve = keras.layers.Rescaling(0.5)
    plain = make_py_dataset(data, PipelineOptions(True, batch_size=8, seed=0, augmentation="none"))[
        0
    ][0]
    halved = make_py_dataset(data, PipelineOptions(True, batch_size=8, seed=0, augmentation=halve))[
        0
    ][0]
    np.testing.assert_allclose(halved, plain * 0.5)
    with pytest.raises(ValueError, match="must keep the batch shape"):
        make_py_dataset(data, PipelineOptions(True, augmentation=keras.layers.Resizing(8, 8)))


def test_crop_boxes_follow_the_scale_and_ratio_ranges():
    rng = np.random.default_rng(0)
    boxes = np.array([sample_crop_box(120, 160, rng) for _ in range(300)])
    top, left, height, width = boxes.T
    assert (top >= 0).all() and (left >= 0).all()
    assert (top + height <= 120).all() and (left + width <= 160).all()
    area = height * width / (120 * 160)
    assert area.min() >= 0.16 and area.max() <= 1.0
    assert area.min() < 0.25 and area.max() > 0.75  # the whole range is drawn
    ratio = width / height
    assert ratio.min() >= 3 / 4 - 0.05 and ratio.max() <= 4 / 3 + 0.05


def test_a_sampler_whose_epoch_length_changes_is_served_at_the_built_count_with_a_warning():
    data = ImageDataset(LABELS, images=indexed_images(), image_size=16)
    sampler = ClusterMPerClassSampler(LABELS, LABELS // 4, 2, 4, seed=0, epoch_length="max")
    batches = make_py_dataset(
        data, PipelineOptions(True, sampler=sampler, with_clusters=True, seed=0)
    )
    built = len(batches)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(py_epoch(batches, sampler, 0)) == built  # the count it was built with
    sampler.set_clusters((LABELS >= 6).astype(np.int64))  # uneven clusters: more batches
    assert sampler.num_batches != built
    with pytest.warns(UserWarning, match=f"pipeline serves {built} per epoch"):
        epoch = py_epoch(batches, sampler, 1)
    assert len(epoch) == built


def test_as_dataset_is_tf_data_on_tensorflow_and_a_py_dataset_elsewhere():
    import keras

    import keras_dml.data

    data = ImageDataset(LABELS, images=indexed_images(), image_size=16)
    batches = data.as_dataset(batch_size=8)
    on_tensorflow = keras.backend.backend() == "tensorflow"
    assert isinstance(batches, keras.utils.PyDataset) != on_tensorflow
    images, labels = next(iter(batches))
    np.testing.assert_array_equal(np.asarray(labels), LABELS[:8])
    assert keras_dml.data.samplers.MPerClassSampler is MPerClassSampler  # modules stay reachable


class DiesInWorkers(BatchLoader):
    """A loader whose worker processes die at their first batch (a pool that breaks)."""

    def load(self, indices, seed_words):
        if multiprocessing.parent_process() is not None:
            os._exit(1)
        return super().load(indices, seed_words)


def test_a_broken_worker_pool_falls_back_to_the_main_process_with_a_warning():
    loader = DiesInWorkers(indexed_images(), None, (16, 16), None, None)
    epochs = IndexEpochs(len(LABELS), 8, False, False, 0)
    batches = ImageBatches(epochs, epochs.num_batches, loader, LABELS.astype(np.int32), workers=1)
    with pytest.warns(UserWarning, match="worker processes stopped"):
        images, labels = batches[0]
    np.testing.assert_array_equal(labels, LABELS[:8])
    np.testing.assert_array_equal(images[:, 0, 0, 0], np.arange(8))
    np.testing.assert_array_equal(batches[1][1], LABELS[8:16])  # later batches load here too
