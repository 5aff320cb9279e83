"""An epoch's batches and crops are a function of (seed, epoch[, step]), not of the run's past.

A sampler that advanced one generator through the run, or augmentation seeds from a `tf.data`
generator re-randomised every epoch, would make a run resumed at epoch e (a new process) draw
epoch 0's batches and crops again. These tests draw epoch e after epochs
0..e-1 and directly (as a resumed run does) and ask for the same result.
"""

import numpy as np
import pytest

from keras_dml.data import (
    ClusterMPerClassSampler,
    ImageDataset,
    MPerClassSampler,
    SamplerEpochCallback,
)
from keras_dml.data.samplers.epoch_seeds import batch_seed, check_epoch, check_seed

LABELS = np.repeat(np.arange(12), 5)


def same_batches(a, b):
    return len(a) == len(b) and all(
        np.array_equal(
            np.asarray(x[0] if isinstance(x, tuple) else x),
            np.asarray(y[0] if isinstance(y, tuple) else y),
        )
        and (not isinstance(x, tuple) or x[1] == y[1])
        for x, y in zip(a, b)
    )


def test_m_per_class_epoch_is_the_same_after_a_restart():
    uninterrupted = MPerClassSampler(LABELS, m=2, batch_size=8, seed=5)
    epochs = [uninterrupted.epoch_batches() for _ in range(3)]
    resumed = MPerClassSampler(LABELS, m=2, batch_size=8, seed=5)
    resumed.set_epoch(2)
    assert resumed.epoch == 2
    assert same_batches(resumed.epoch_batches(), epochs[2])
    assert resumed.epoch == 3
    assert same_batches(resumed.epoch_batches(epoch=1), epochs[1])
    assert not same_batches(epochs[1], epochs[2])
    other_seed = MPerClassSampler(LABELS, m=2, batch_size=8, seed=6)
    assert not same_batches(other_seed.epoch_batches(2), epochs[2])


def test_cluster_sampler_epoch_is_the_same_after_a_restart():
    clusters = (LABELS >= 6).astype(int)
    uninterrupted = ClusterMPerClassSampler(LABELS, np.zeros_like(LABELS), 2, 8, seed=1)
    uninterrupted.epoch_batches()
    uninterrupted.set_clusters(clusters)  # a division before epoch 1
    epochs = [uninterrupted.epoch_batches() for _ in range(2)]
    # A run resumed at epoch 2 restores the assignment, then draws epoch 2.
    resumed = ClusterMPerClassSampler(LABELS, clusters, 2, 8, seed=1)
    resumed.set_epoch(2)
    assert same_batches(resumed.epoch_batches(), epochs[1])
    assert not same_batches(epochs[0], epochs[1])


def test_sampler_epoch_callback_sets_the_epoch_keras_runs():
    sampler = MPerClassSampler(LABELS, m=2, batch_size=8)
    SamplerEpochCallback(sampler).on_epoch_begin(4)
    assert sampler.epoch == 4

    class OldProtocol:
        batch_size, num_batches = 2, 1

        def epoch_batches(self):
            return [np.array([0, 1])]

    with pytest.raises(ValueError, match="needs a sampler with `set_epoch"):
        SamplerEpochCallback(OldProtocol())


@pytest.mark.parametrize("epoch", [-1, 1.5, True, "2"])
def test_bad_epochs_raise_one_line(epoch):
    with pytest.raises(ValueError, match=r"`epoch` must be an int >= 0\. Received"):
        check_epoch(epoch)
    with pytest.raises(ValueError, match="`epoch` must be"):
        MPerClassSampler(LABELS, m=2, batch_size=8).set_epoch(epoch)


def test_seeds_are_stateless_and_bad_seeds_raise():
    assert batch_seed(3, 1, 2).tolist() == batch_seed(3, 1, 2).tolist()
    assert batch_seed(3, 1, 2).tolist() != batch_seed(3, 2, 1).tolist()
    assert batch_seed(3, 1, 2).dtype == np.int64
    assert check_seed(None) != check_seed(None)  # unseeded: a fresh seed each time
    with pytest.raises(ValueError, match="`seed` must be an int or None"):
        check_seed(0.5)


class SameBatches:
    """A sampler serving the same batches every epoch: only the augmentation changes."""

    batch_size, num_batches = 4, 2

    def __init__(self):
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def epoch_batches(self):
        self.epoch += 1
        return [np.arange(4), np.arange(4, 8)]


def pipeline_epochs(sampler, epochs, start=0, seed=2):
    """The images of `epochs` epochs of a crop + flip pipeline, from epoch `start` on."""
    images = np.random.default_rng(0).integers(0, 256, (LABELS.size, 40, 40, 3)).astype(np.uint8)
    data = ImageDataset(LABELS, images=images, image_size=32)
    sampler.set_epoch(start)
    dataset = data.as_tf_dataset(True, sampler=sampler, seed=seed, augmentation="crop_flip")
    return [np.stack([batch[0].numpy() for batch in dataset]) for _ in range(epochs)]


def test_pipeline_crops_epoch_e_alike_after_a_restart():
    uninterrupted = pipeline_epochs(SameBatches(), epochs=3)
    resumed = pipeline_epochs(SameBatches(), epochs=1, start=2)
    np.testing.assert_array_equal(resumed[0], uninterrupted[2])
    assert not np.array_equal(uninterrupted[1], uninterrupted[2])  # each epoch crops anew
    assert not np.array_equal(uninterrupted[2][0], uninterrupted[2][1])  # and each batch
    other_seed = pipeline_epochs(SameBatches(), epochs=1, start=2, seed=3)
    assert not np.array_equal(other_seed[0], uninterrupted[2])


def test_pipeline_serves_a_samplers_epoch_e_after_a_restart():
    sampler = MPerClassSampler(LABELS, m=2, batch_size=8, seed=1, num_batches=3)
    uninterrupted = pipeline_epochs(sampler, epochs=3)
    resumed = MPerClassSampler(LABELS, m=2, batch_size=8, seed=1, num_batches=3)
    np.testing.assert_array_equal(pipeline_epochs(resumed, epochs=1, start=2)[0], uninterrupted[2])
