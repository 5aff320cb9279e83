import keras
import numpy as np
import pytest

from keras_dml.data.datasets.arrays import from_arrays
from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
from keras_dml.methods.hierarchical_divide_and_conquer.callback import (
    HierarchicalDivideAndConquerCallback,
)
from tests.models.hierarchical_divide_and_conquer.test_model import make_model, numpy
from tests.support.backend_utils import to_numpy


def tiny_data(num_classes=12, per_class=6, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(num_classes), per_class)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    return from_arrays(images, labels)


def hdc_fit(model, data, epochs, initial_epoch=0, extra_callbacks=(), **kwargs):
    sampler = ClusterMPerClassSampler(
        data.labels, np.zeros(len(data.labels), int), m=2, batch_size=8, seed=0, epoch_length=3
    )
    dataset = data.as_tf_dataset(training=True, batch_size=8, sampler=sampler, with_clusters=True)
    kwargs = {"division_every": 1, "niter": 10, "nredo": 1, **kwargs}
    callback = HierarchicalDivideAndConquerCallback(data, data.labels, sampler, **kwargs)
    history = model.fit(
        dataset,
        epochs=epochs,
        initial_epoch=initial_epoch,
        callbacks=[callback, *extra_callbacks],
        verbose=0,
    )
    return callback, sampler, history.history


@pytest.mark.slow
def test_fit_splits_and_resumes_from_checkpoint(tmp_path):
    data = tiny_data()
    model = make_model(max_learners=4, num_train_samples=len(data.labels))
    callback, sampler, history = hdc_fit(model, data, epochs=3, finetune_epoch=2)
    assert [entry["epoch"] for entry in callback.history] == [1, 2]
    assert callback.history[0]["split"] and to_numpy(model.division_depth) >= 1
    assert model.active_learners >= 2 and history["hdc_num_learners"][0] == 1.0
    assert history["hdc_split"][0] == 1.0  # the first division splits
    assert model.stage == "finetune" and int(numpy(model.backbone_frozen)) == 1
    np.testing.assert_array_equal(sampler.clusters, callback.assignment)
    np.testing.assert_array_equal(model.get_cluster_assignment(), callback.assignment)
    assert np.isfinite(history["loss"]).all()

    # Resume from a checkpoint taken after the divisions: same clusters, masks and learners.
    path = str(tmp_path / "ckpt.weights.h5")
    model.save_weights(path)
    resumed = make_model(max_learners=4, num_train_samples=len(data.labels))
    resumed.load_weights(path)
    assert resumed.active_learners == model.active_learners
    np.testing.assert_array_equal(numpy(resumed.soft_mask.masks), numpy(model.soft_mask.masks))
    callback2, sampler2, _ = hdc_fit(resumed, data, epochs=4, initial_epoch=3, division_every=2)
    assert callback2.history == []  # epoch 3 is not a division epoch for E=2
    np.testing.assert_array_equal(callback2.assignment, callback.assignment)
    np.testing.assert_array_equal(sampler2.clusters, callback.assignment)


def test_backup_and_restore_carries_the_division(tmp_path):
    data = tiny_data()
    backup = str(tmp_path / "backup")
    model = make_model(max_learners=2, num_train_samples=len(data.labels))
    # delete_checkpoint=False keeps the backup as if the run had been interrupted here.
    callback, _, _ = hdc_fit(
        model,
        data,
        2,
        extra_callbacks=[keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False)],
    )
    assert model.active_learners == 2
    fresh = make_model(max_learners=2, num_train_samples=len(data.labels))
    callback2, sampler2, _ = hdc_fit(
        fresh,
        data,
        3,
        division_every=4,
        extra_callbacks=[keras.callbacks.BackupAndRestore(backup)],
    )
    assert fresh.active_learners == 2 and callback2.history == []
    np.testing.assert_array_equal(callback2.assignment, callback.assignment)


def test_degenerate_inputs():
    data = tiny_data(num_classes=6)
    too_many = make_model(max_learners=4)  # 4 clusters need 8 classes; the data has 6
    with pytest.raises(ValueError, match="smaller max_learners"):
        hdc_fit(too_many, data, epochs=1)
    # Identical images: no 2-means split is acceptable, so the classes are split whole,
    # balanced (3 and 3), without a warning.
    images = np.zeros((12, 32, 32, 3), np.uint8)
    same = from_arrays(images, np.repeat(np.arange(6), 2))
    model = make_model(max_learners=2)
    callback, _, history = hdc_fit(model, same, epochs=2, split_attempts=2)
    assert model.active_learners == 2 and callback.history[0]["unsplit"] == []
    assignment = np.asarray(callback.assignment)
    assert sorted(np.unique(same.labels[assignment == k]).size for k in range(2)) == [3, 3]
    assert np.isfinite(history["loss"]).all()
    with pytest.raises(ValueError, match="division_every"):
        HierarchicalDivideAndConquerCallback(same, same.labels, object(), division_every=0)
    with pytest.raises(ValueError, match="set_clusters"):
        HierarchicalDivideAndConquerCallback(same, same.labels, object())


def test_failed_re_clustering_warns_and_keeps_the_clusters(monkeypatch):
    from keras_dml.methods.hierarchical_divide_and_conquer import chief_division as module

    original = module.recluster

    def fails_after_the_first(*args, previous=None, **kwargs):
        if previous is not None:
            raise module.ClusteringError("no acceptable partition")
        return original(*args, previous=previous, **kwargs)

    monkeypatch.setattr(module, "recluster", fails_after_the_first)
    data = tiny_data()
    model = make_model(max_learners=2, num_train_samples=len(data.labels))
    with pytest.warns(UserWarning, match="re-clustering failed .*keeping the previous clusters"):
        callback, _, history = hdc_fit(model, data, epochs=3)
    assert history["hdc_reclustered"][-1] == 0.0
    np.testing.assert_array_equal(callback.assignment, model.get_cluster_assignment())
