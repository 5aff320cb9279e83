import keras
import numpy as np
import pytest

from keras_dml.data.datasets.arrays import from_arrays
from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
from keras_dml.losses import ContrastiveLoss
from keras_dml.methods.divide_and_conquer.callback import DivideAndConquerCallback
from keras_dml.models.divide_and_conquer import DivideAndConquer
from tests.support import backend_utils
from tests.support.helpers import check_model, tiny_images, tiny_labels


def tiny_backbone():
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    return keras.Model(inputs, x)


def make_model(num_learners=4, **kwargs):
    keras.utils.set_random_seed(0)
    model = DivideAndConquer(tiny_backbone(), embedding_dim=16, num_learners=num_learners, **kwargs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=ContrastiveLoss())
    return model


def snapshot(model):
    weights = {v.path: keras.ops.convert_to_numpy(v).copy() for v in model.weights}
    slots = {v.path: keras.ops.convert_to_numpy(v).copy() for v in model.optimizer.variables}
    return weights, slots


def cluster_batch(cluster, n=16):
    images = tiny_images(n, seed=cluster + 1)
    labels = tiny_labels(n, num_classes=4)
    return images, {"labels": labels, "clusters": np.full((n,), cluster, "int32")}


def test_check_model_and_config():
    model = DivideAndConquer(tiny_backbone(), embedding_dim=16, num_learners=4)
    reloaded = check_model(model, tiny_images(16), tiny_labels(16), loss=ContrastiveLoss())
    assert reloaded.num_learners == 4 and reloaded.learner_dims == (4, 4, 4, 4)
    assert model.stage == "divide"
    with pytest.raises(ValueError, match="learner_weights"):
        DivideAndConquer(tiny_backbone(), num_learners=2, learner_weights=(1.0, 1.0))
    with pytest.raises(ValueError, match="stage"):
        model.set_stage("merge")


@pytest.mark.backend_semantics
@pytest.mark.parametrize("learner_dims", [None, (2, 6, 4, 4)])
def test_cluster_step_gives_gradients_only_to_backbone_and_its_head(learner_dims):
    model = make_model(learner_dims=learner_dims)
    images, targets = cluster_batch(1)
    variables = model.trainable_variables
    grads = backend_utils.gradients(
        lambda *_: model.compute_loss(y=targets, y_pred=model(images, training=True)), variables
    )
    gradients = dict(zip((v.path for v in variables), grads))
    for k, head in enumerate(model.heads):
        for variable in head.trainable_variables:
            magnitude = float(np.abs(gradients[variable.path]).max())
            assert (magnitude > 0) == (k == 1), f"{variable.path}: |gradient| = {magnitude}"
    assert float(np.abs(gradients[model.backbone.trainable_variables[0].path]).max()) > 0


@pytest.mark.parametrize("learner_dims", [None, (2, 6, 4, 4)])
def test_cluster_step_moves_only_backbone_and_its_head_without_momentum(learner_dims):
    model = make_model(learner_dims=learner_dims)
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=ContrastiveLoss())
    weights, _ = snapshot(model)
    images, targets = cluster_batch(1)
    model.fit(images, targets, batch_size=16, epochs=1, verbose=0)
    new_weights, _ = snapshot(model)
    for path, before in weights.items():
        if "learner_" in path and "learner_1_head" not in path:
            np.testing.assert_array_equal(before, new_weights[path], err_msg=path)
    for path in (model.heads[1].kernel.path, model.backbone.trainable_variables[0].path):
        assert not np.array_equal(weights[path], new_weights[path]), path


def test_idle_heads_adam_moments_only_decay():
    # Warm the Adam moments of every head with a full-embedding step first; a cluster-1 step then
    # feeds the idle heads a zero gradient, so their first moments decay by beta_1 exactly.
    model = make_model()
    images, targets = cluster_batch(0)
    model.fit(images, targets["labels"], batch_size=16, epochs=1, verbose=0)
    _, slots = snapshot(model)
    images, targets = cluster_batch(1)
    model.fit(images, targets, batch_size=16, epochs=1, verbose=0)
    _, new_slots = snapshot(model)
    idle = [
        p for p in slots if "momentum" in p and any(f"learner_{k}_head" in p for k in (0, 2, 3))
    ]
    assert idle
    for path in idle:
        np.testing.assert_allclose(new_slots[path], 0.9 * slots[path], rtol=1e-6, err_msg=path)
    active = [p for p in slots if "momentum" in p and "learner_1_head" in p]
    assert any(not np.allclose(new_slots[p], 0.9 * slots[p]) for p in active)


def test_conquer_stage_updates_every_head():
    model = make_model()
    model.set_stage("conquer")
    weights, _ = snapshot(model)
    images, targets = cluster_batch(2)
    model.fit(images, targets, batch_size=16, epochs=1, verbose=0)
    new_weights, _ = snapshot(model)
    for head in model.heads:
        assert not np.array_equal(weights[head.kernel.path], new_weights[head.kernel.path])
    assert int(keras.ops.convert_to_numpy(model.stage_variable)) == 1


def test_learner_loss_is_the_slice_loss():
    model = make_model()
    images, targets = cluster_batch(3)
    expected = ContrastiveLoss()(targets["labels"], model.learner_embeddings(images)[3])
    features = model.features(images, training=True)
    assert features.shape[0] == 16
    history = model.fit(images, targets, batch_size=16, epochs=1, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], float(expected), rtol=1e-4)


def digits_like(num_classes=12, per_class=6, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(num_classes), per_class)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    return from_arrays(images, labels)


def dc_fit(model, data, epochs, state_dir, initial_epoch=0, **callback_kwargs):
    sampler = ClusterMPerClassSampler(
        data.labels, np.zeros(len(data.labels), int), m=2, batch_size=8, seed=0, epoch_length=4
    )
    dataset = data.as_tf_dataset(training=True, batch_size=8, sampler=sampler, with_clusters=True)
    callback = DivideAndConquerCallback(
        data, data.labels, sampler, nredo=1, niter=10, state_dir=state_dir, **callback_kwargs
    )
    history = model.fit(
        dataset, epochs=epochs, initial_epoch=initial_epoch, callbacks=[callback], verbose=0
    )
    return callback, sampler, history


@pytest.mark.slow
def test_callback_divides_logs_and_resumes(tmp_path):
    data = digits_like()
    model = make_model(num_learners=2)
    callback, sampler, history = dc_fit(
        model, data, epochs=3, state_dir=str(tmp_path), recluster_every=2, val_data=data
    )
    assert [entry["epoch"] for entry in callback.history] == [0, 2]
    assert int(keras.ops.convert_to_numpy(model.division_count)) == 2
    np.testing.assert_array_equal(sampler.clusters, callback.assignment)
    assert len(callback.history[1]["learner_recall@1"]) == 2
    assert 0.0 <= callback.history[1]["nmi_previous"] <= 1.0
    assert "dc_nmi_previous" in history.history and "dc_learner_1_recall@1" in history.history
    assert sum(callback.history[0]["cluster_sizes"]) == len(data.labels)

    # Resume from a checkpoint taken after division 2: same clusters, no re-division at epoch 3.
    path = str(tmp_path / "ckpt.weights.h5")
    model.save_weights(path)
    resumed = make_model(num_learners=2)
    resumed.load_weights(path)
    callback2, sampler2, _ = dc_fit(
        resumed, data, epochs=4, initial_epoch=3, state_dir=str(tmp_path), recluster_every=2
    )
    assert callback2.history == []
    np.testing.assert_array_equal(callback2.assignment, callback.assignment)
    np.testing.assert_array_equal(sampler2.clusters, callback.assignment)


@pytest.mark.slow
def test_conquer_all_data_and_degenerate_inputs(tmp_path):
    data = digits_like()
    model = make_model(num_learners=2)
    callback, sampler, _ = dc_fit(
        model,
        data,
        epochs=2,
        state_dir=None,
        conquer_epoch=1,
        conquer_sampling="all",
        cluster_on="features",
    )
    assert model.stage == "conquer" and sampler.num_clusters == 1
    too_many = make_model(num_learners=8)  # 8 learners need 16 classes; the data has 12
    with pytest.raises(ValueError, match="fewer learners"):
        dc_fit(too_many, data, epochs=1, state_dir=None)


def test_callback_argument_errors():
    sampler = ClusterMPerClassSampler(np.repeat(np.arange(4), 2), np.zeros(8, int), 2, 4)
    with pytest.raises(ValueError, match="cluster_on"):
        DivideAndConquerCallback(None, np.zeros(8), sampler, cluster_on="pixels")
    with pytest.raises(ValueError, match="recluster_every"):
        DivideAndConquerCallback(None, np.zeros(8), sampler, recluster_every=0)
    with pytest.raises(ValueError, match="set_clusters"):
        DivideAndConquerCallback(None, np.zeros(8), object())


def test_failed_division_keeps_the_previous_one(monkeypatch):
    """A division that cannot give every cluster two classes keeps the last good assignment."""
    from keras_dml.methods.divide_and_conquer import callback as callback_module
    from keras_dml.methods.divide_and_conquer import chief_division

    labels = np.repeat(np.arange(4), 6)
    previous = np.tile([0, 1], 12)

    class Sampler:
        def set_clusters(self, clusters):
            raise AssertionError("the sampler must keep its clusters")

    cb = callback_module.DivideAndConquerCallback(
        np.zeros((24, 4), "float32"), labels, Sampler(), recluster_every=1
    )
    cb.assignment = previous.copy()

    class Model:
        num_learners = 2
        division_count = keras.Variable(1, dtype="int32", trainable=False)

    cb.set_model(Model())
    monkeypatch.setattr(cb, "_vectors", lambda data, features: np.zeros((24, 4), "float32"))

    def failing_division(*args, **kwargs):
        raise callback_module.ClusteringError("no acceptable partition")

    monkeypatch.setattr(chief_division, "divide_samples", failing_division)
    with pytest.warns(UserWarning, match="Keeping the previous division"):
        entry = cb.divide(epoch=4)
    assert "failed" in entry and np.array_equal(cb.assignment, previous)
    assert cb._epoch_logs == {"dc_division_failed": 1.0}
    assert int(keras.ops.convert_to_numpy(Model.division_count)) == 1
