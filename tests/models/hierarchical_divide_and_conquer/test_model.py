import keras
import numpy as np
import pytest

from keras_dml.losses import ContrastiveLoss
from keras_dml.models.hierarchical_divide_and_conquer import HierarchicalDivideAndConquer
from tests.support.helpers import check_model, roundtrip, tiny_images, tiny_labels


def tiny_backbone():
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu")(x)
    return keras.Model(inputs, x)


def make_model(max_learners=4, lr=1e-2, **kwargs):
    keras.utils.set_random_seed(0)
    kwargs.setdefault("embedding_dim", 16)
    model = HierarchicalDivideAndConquer(tiny_backbone(), max_learners=max_learners, **kwargs)
    model.compile(optimizer=keras.optimizers.Adam(lr), loss=ContrastiveLoss())
    return model


def numpy(x):
    return keras.ops.convert_to_numpy(x).copy()


def cluster_batch(cluster, n=16):
    return tiny_images(n, seed=cluster + 1), {
        "labels": tiny_labels(n, num_classes=4),
        "clusters": np.full((n,), cluster, "int32"),
    }


@pytest.mark.backend_semantics
def test_check_model_round_trip_keeps_masks_and_state():
    model = HierarchicalDivideAndConquer(tiny_backbone(), embedding_dim=16, max_learners=4)
    assert model.learner_dims == (16,) and model.active_learners == 1
    model.split_learners([0, 0])
    model.soft_mask.masks.assign(np.random.default_rng(0).random((4, 16)).astype("float32"))
    reloaded = check_model(model, tiny_images(16), tiny_labels(16), loss=ContrastiveLoss())
    assert reloaded.active_learners == 2 and reloaded.max_learners == 4
    np.testing.assert_allclose(numpy(reloaded.soft_mask.masks), numpy(model.soft_mask.masks))
    assert len(model.subspace_embeddings(tiny_images(4))) == 2
    with pytest.raises(ValueError, match="max_learners"):
        HierarchicalDivideAndConquer(tiny_backbone(), num_learners=4)
    with pytest.raises(ValueError, match="stage"):
        model.set_stage("merge")


def test_output_is_final_embedding_eq8():
    model = make_model()
    model.split_learners([0, 0])
    masks = np.random.default_rng(1).standard_normal((4, 16)).astype("float32")
    model.soft_mask.masks.assign(masks)
    images = tiny_images(4)
    raw = numpy(model.raw_embedding(images))
    expected = raw * np.maximum(masks[:2], 0).sum(0)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(numpy(model(images)), expected, atol=1e-5)
    np.testing.assert_allclose(numpy(model.learner_embeddings(images)[0]), expected, atol=1e-5)


def test_cluster_step_uses_only_its_subspace_loss():
    model = make_model(orthogonality_weight=0.5)
    model.split_learners([0, 0])
    model.split_learners([0, 0, 1, 1])
    masks = np.random.default_rng(3).random((4, 16)).astype("float32")
    model.soft_mask.masks.assign(masks)
    images, targets = cluster_batch(2)
    subspace = model.subspace_embeddings(images)[2]
    expected_metric = float(ContrastiveLoss()(targets["labels"], subspace))
    expected_orth = float(model.soft_mask.orthogonality_loss(4))
    history = model.fit(images, targets, batch_size=16, epochs=1, verbose=0).history
    np.testing.assert_allclose(history["metric_loss"][0], expected_metric, rtol=1e-4)
    np.testing.assert_allclose(history["orthogonality_loss"][0], expected_orth, rtol=1e-4)
    np.testing.assert_allclose(history["loss"][0], expected_metric + 0.5 * expected_orth, rtol=1e-4)


def test_cluster_step_moves_only_its_mask_without_orthogonality():
    model = make_model(orthogonality_weight=0.0)
    model.split_learners([0, 0])
    before = numpy(model.soft_mask.masks)
    model.fit(*cluster_batch(1), batch_size=16, epochs=1, verbose=0)
    after = numpy(model.soft_mask.masks)
    assert not np.allclose(before[1], after[1])
    np.testing.assert_array_equal(before[[0, 2, 3]], after[[0, 2, 3]])


def test_finetune_stage_uses_final_embedding():
    model = make_model(orthogonality_weight=0.0)
    model.split_learners([0, 0])
    model.soft_mask.masks.assign(np.random.default_rng(4).random((4, 16)).astype("float32"))
    model.set_stage("finetune")
    images, targets = cluster_batch(1)
    expected = float(ContrastiveLoss()(targets["labels"], model(images)))
    history = model.fit(images, targets, batch_size=16, epochs=1, verbose=0).history
    np.testing.assert_allclose(history["metric_loss"][0], expected, rtol=1e-4)
    assert model.stage == "finetune"


def test_frozen_backbone_is_not_updated():
    model = make_model()
    model.set_backbone_frozen(True)
    backbone = [numpy(v) for v in model.backbone.trainable_variables]
    head = numpy(model.heads[0].kernel)
    model.fit(*cluster_batch(0), batch_size=16, epochs=1, verbose=0)
    for before, variable in zip(backbone, model.backbone.trainable_variables):
        np.testing.assert_array_equal(before, numpy(variable))
    assert not np.allclose(head, numpy(model.heads[0].kernel))
    model.set_backbone_frozen(False)
    model.fit(*cluster_batch(0), batch_size=16, epochs=1, verbose=0)
    assert not np.allclose(backbone[0], numpy(model.backbone.trainable_variables[0]))


def test_mask_optimizer_has_scaled_learning_rate_and_resets_on_split():
    model = make_model(lr=1e-3, mask_lr_multiplier=100.0)
    np.testing.assert_allclose(float(model.mask_optimizer.learning_rate), 0.1, rtol=1e-6)
    model.split_learners([0, 0])
    model.fit(*cluster_batch(0), batch_size=16, epochs=1, verbose=0)
    assert int(numpy(model.mask_optimizer.iterations)) == 1
    assert any(np.abs(numpy(v)).sum() > 0 for v in model.mask_optimizer.variables)
    model.split_learners([0, 0, 1, 1])
    assert int(numpy(model.mask_optimizer.iterations)) == 0
    for variable in model.mask_optimizer.variables:
        if not variable.path.endswith("learning_rate"):
            assert np.abs(numpy(variable)).sum() == 0.0, variable.path
    np.testing.assert_allclose(float(model.mask_optimizer.learning_rate), 0.1, rtol=1e-6)


def test_fixed_masks_model_keeps_orthogonal_untrainable_masks():
    model = make_model(fixed_masks=True)
    model.split_learners([0, 0])
    model.split_learners([0, 0, 1, 1])
    masks = numpy(model.soft_mask.masks)
    np.testing.assert_array_equal(masks, np.repeat(np.eye(4, dtype="float32"), 4, axis=1))
    model.fit(*cluster_batch(3), batch_size=16, epochs=1, verbose=0)
    np.testing.assert_array_equal(numpy(model.soft_mask.masks), masks)
    assert model.soft_mask.masks.path not in {v.path for v in model.trainable_variables}


def test_assignment_state_round_trips():
    model = make_model(num_train_samples=6)
    model.set_cluster_assignment([0, 1, 1, 0, 1, 0])
    reloaded = roundtrip(model)
    np.testing.assert_array_equal(reloaded.get_cluster_assignment(), [0, 1, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="num_train_samples"):
        model.set_cluster_assignment([0, 1])
