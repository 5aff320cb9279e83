import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.losses import ContrastiveLoss, MarginLoss
from keras_dml.models.dcml import DCML, compose, self_reinforced_loss
from tests.support.backend_utils import gradients, to_numpy, value_and_gradients
from tests.support.helpers import check_model, tiny_images, tiny_labels

K, D, M = 3, 8, 4


def make_model(seed=0, **kwargs):
    keras.utils.set_random_seed(seed)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    options = {"num_learners": K, "learner_dim": D, "num_compositors": M}
    return DCML(backbone, **{**options, **kwargs})


def variables_of(model):
    """Trainable variables grouped: backbone, heads, weighting branch, sign branch."""
    return {
        "backbone": model.backbone.trainable_variables,
        "heads": [v for head in model.heads for v in head.trainable_variables],
        "weighting": [model.compositor.weighting_kernel, model.compositor.weighting_bias],
        "sign": [model.compositor.sign_kernel, model.compositor.sign_bias],
    }


def gradient_norms(model, term, images, labels):
    """Sum of the gradient norms of one loss term per variable group."""
    groups = variables_of(model)
    variables = [v for group in groups.values() for v in group]
    grads = gradients(
        lambda *_: model.loss_terms(labels, model(images, training=True))[term], variables
    )
    norms, start = {}, 0
    for group, members in groups.items():
        norms[group] = sum(float(np.linalg.norm(g)) for g in grads[start : start + len(members)])
        start += len(members)
    return norms


def test_check_model_and_saved_compositors():
    model = make_model(loss=MarginLoss(seed=1))
    reloaded = check_model(model, tiny_images(8), tiny_labels(8))
    config, reloaded_config = model.get_config(), reloaded.get_config()
    config.pop("backbone"), reloaded_config.pop("backbone")
    assert reloaded_config == config
    for a, b in zip(model.compositor.weights, reloaded.compositor.weights):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b))
    assert model.learner_dims == (D,) * K


@pytest.mark.backend_semantics
def test_gradient_routing_of_every_term():
    model = make_model(loss=ContrastiveLoss(), subtask_loss=ContrastiveLoss())
    images, labels = tiny_images(8), tiny_labels(8)
    reinforce = gradient_norms(model, "reinforce_loss", images, labels)
    subtask = gradient_norms(model, "subtask_loss", images, labels)
    dis = gradient_norms(model, "dis_loss", images, labels)
    # J_reinf (Eq. 7) reaches the compositors' weighting branch only.
    assert reinforce["weighting"] > 0
    assert reinforce["backbone"] == reinforce["heads"] == reinforce["sign"] == 0.0
    # J_T reaches the learners (sub-embeddings) and both compositor branches (weights, STE).
    assert min(subtask.values()) > 0
    # J_dis trains the learners only.
    assert dis["heads"] > 0 and dis["backbone"] > 0
    assert dis["weighting"] == dis["sign"] == 0.0


@pytest.mark.backend_semantics
def test_subtask_loss_does_not_reach_learners_through_the_compositor_input():
    model = make_model(loss=ContrastiveLoss(), subtask_loss=ContrastiveLoss())
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(8, K, D)).astype("float32")
    y = (raw / np.linalg.norm(raw, axis=-1, keepdims=True)).reshape(8, K * D)
    labels = tiny_labels(8)

    def manual_subtask(y, stop_weights):
        weights = model.compositor(y)
        if stop_weights:
            weights = keras.ops.stop_gradient(weights)
        z = compose(keras.ops.reshape(y, (8, K, D)), weights)
        return sum(model.subtask_loss(labels, z[:, m]) for m in range(M))

    ours, (grad_ours, grad_kernel) = value_and_gradients(
        lambda y, kernel: model.loss_terms(labels, y)["subtask_loss"],
        [y, model.compositor.weighting_kernel],
    )
    detached, (grad_detached,) = value_and_gradients(lambda y: manual_subtask(y, True), [y])
    (grad_attached,) = gradients(lambda y: manual_subtask(y, False), [y])
    np.testing.assert_allclose(float(ours), float(detached), rtol=1e-6)
    np.testing.assert_allclose(grad_ours, grad_detached, atol=1e-6)
    # The check is sensitive: letting the gradient through the compositor input changes it.
    assert np.abs(grad_ours - grad_attached).max() > 1e-4
    # ... while the compositor still receives the subtask gradient through its weights.
    assert float(np.linalg.norm(grad_kernel)) > 0


@pytest.mark.backend_semantics
def test_objective_is_equation_8():
    lambdas = [0.5, 1.0, 2.0, 0.0]
    model = make_model(
        loss=ContrastiveLoss(), lambda_subtask=lambdas, lambda_reinforce=0.3, dropout=0.0
    )
    images, labels = tiny_images(8), tiny_labels(8)
    y = model(images)
    terms = {k: float(v) for k, v in model.loss_terms(labels, y).items()}
    scores = model.composites(y)
    z = to_numpy(scores["composites"])
    np.testing.assert_allclose(np.linalg.norm(z, axis=-1), 1.0, atol=1e-5)
    subtask = sum(w * float(model.subtask_loss(labels, z[:, m])) for m, w in enumerate(lambdas))
    weights = np.abs(to_numpy(scores["weights"]))
    reinforce = float(np.sum(np.mean(-np.log(weights.max(-1)), axis=0)))
    dis = float(ContrastiveLoss()(labels, y))
    np.testing.assert_allclose(terms["subtask_loss"], subtask, rtol=1e-5)
    np.testing.assert_allclose(terms["reinforce_loss"], reinforce, rtol=1e-5)
    np.testing.assert_allclose(terms["dis_loss"], dis, rtol=1e-5)
    np.testing.assert_allclose(terms["loss"], dis + 0.3 * reinforce + subtask, rtol=1e-5)
    np.testing.assert_allclose(terms["max_weight"], weights.max(-1).mean(), rtol=1e-5)
    np.testing.assert_allclose(self_reinforced_loss(np.zeros((2, 3, 4))), np.log(4.0), rtol=1e-6)


def test_composites_use_normalised_sub_embeddings():
    model = make_model()
    images = tiny_images(4)
    y = model(images)
    learners = np.stack([to_numpy(e) for e in model.learner_embeddings(images)], axis=1)
    scores = model.composites(y)
    expected = np.einsum("nmk,nkd->nmd", to_numpy(scores["weights"]), learners)
    expected /= np.linalg.norm(expected, axis=-1, keepdims=True)
    np.testing.assert_allclose(to_numpy(scores["composites"]), expected, atol=1e-5)


def test_fit_logs_every_term_and_resumes_after_reload(tmp_path):
    model = make_model(loss=MarginLoss(seed=0))
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    images, labels = tiny_images(16), tiny_labels(16)
    history = model.fit(images, labels, batch_size=16, epochs=1, verbose=0).history
    for name in ("loss", "dis_loss", "subtask_loss", "reinforce_loss", "max_weight"):
        assert np.isfinite(history[name][-1]), name
    path = str(tmp_path / "dcml.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)  # compiled: optimizer state too
    assert int(reloaded.optimizer.iterations) == int(model.optimizer.iterations) == 1
    reloaded.fit(images, labels, batch_size=16, epochs=1, verbose=0)
    assert int(reloaded.optimizer.iterations) == 2


def test_compositor_weights_rows_sum_to_one():
    model = make_model()
    images = tiny_images(10)
    weights = model.compositor_weights(images, batch_size=4)
    assert weights.shape == (M, K)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    import tensorflow as tf  # tf.data is an input pipeline on every Keras backend

    dataset = tf.data.Dataset.from_tensor_slices((images, tiny_labels(10))).batch(3)
    np.testing.assert_allclose(model.compositor_weights(dataset), weights, atol=1e-5)


def test_default_subtask_loss_is_a_separate_copy_of_the_discriminative_loss():
    model = make_model(loss={"name": "learnable_margin", "num_classes": 4})
    assert model.subtask_loss is not model.dis_loss
    assert type(model.subtask_loss) is type(model.dis_loss)
    betas = [w for w in model.trainable_weights if w.path.endswith("beta") and w.ndim == 1]
    assert len([w for w in betas if w.shape == (4,)]) == 2


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_compositors": 0}, "num_compositors"),
        ({"learner_dim": 2.5}, "learner_dim"),
        ({"lambda_reinforce": -1.0}, "lambda_reinforce"),
        ({"lambda_subtask": [1.0, 1.0]}, "lambda_subtask"),
        ({"loss": "no_such_loss"}, "loss"),
        (
            {"subtask_loss": {"name": "proxy_nca", "num_classes": 4, "embedding_dim": K * D}},
            "subtask_loss",
        ),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_model(**kwargs)


def test_compile_rejects_a_loss_and_fit_needs_labels():
    model = make_model()
    with pytest.raises(ValueError, match="compile without `loss`"):
        model.compile(optimizer="adam", loss=MarginLoss())
    model.compile(optimizer="adam")
    with pytest.raises(ValueError, match="labels are missing"):
        model.fit(tiny_images(8), batch_size=8, epochs=1, verbose=0)
