import itertools

import keras
import numpy as np
import pytest

from keras_dml.losses.binomial_deviance import BinomialDevianceLoss
from keras_dml.losses.contrastive import ContrastiveLoss
from keras_dml.models.bier import BIER, HEAD_PATTERN, boosting_weights
from keras_dml.models.boosting.boosted_loss import boosted_learner_losses
from keras_dml.models.boosting.pair_losses import get_loss_form
from keras_dml.models.embedding_model import EmbeddingModel
from tests.support.backend_utils import gradients, to_numpy, value_and_gradients
from tests.support.helpers import check_model, tiny_images, tiny_labels


def tiny_backbone(seed=0):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Rescaling(1.0 / 127.5, offset=-1.0)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2)(x)
    return keras.Model(inputs, keras.layers.ReLU()(x))


@pytest.mark.parametrize("diversity", [None, "activation", "adversarial"])
def test_check_model(diversity):
    model = BIER(tiny_backbone(), group_sizes=(4, 6, 8), diversity=diversity, regressor_units=16)
    reloaded = check_model(model, tiny_images(8), tiny_labels(8))
    config, reloaded_config = model.get_config(), reloaded.get_config()
    config.pop("backbone"), reloaded_config.pop("backbone")
    assert reloaded_config == config
    if diversity == "adversarial":  # training-only regressors are saved (training resumes)
        for a, b in zip(model.diversity_layer.weights, reloaded.diversity_layer.weights):
            np.testing.assert_allclose(to_numpy(a), to_numpy(b))


def test_output_dot_product_is_the_ensemble_similarity():
    images = tiny_images(6)
    model = BIER(tiny_backbone(), group_sizes=(4, 6, 8))
    out = model.predict(images, verbose=0)
    learners = [to_numpy(e) for e in model.learner_embeddings(images)]
    expected = sum(a * e @ e.T for a, e in zip(boosting_weights(3), learners))  # Eq. 3
    np.testing.assert_allclose(out @ out.T, expected, atol=1e-5)
    alpha_model = BIER(tiny_backbone(), group_sizes=(4, 6, 8), output_weighting="alpha")
    np.testing.assert_allclose(
        np.linalg.norm(alpha_model.predict(images, verbose=0)[:, :4], axis=1), 1 / 6, atol=1e-5
    )


@pytest.mark.parametrize(
    "loss,plain_loss",
    [
        ("binomial_deviance", BinomialDevianceLoss()),
        ("contrastive", ContrastiveLoss(similarity="cosine", balance="separate")),
    ],
)
def test_single_learner_equals_plain_training(loss, plain_loss):
    images, labels = tiny_images(8), tiny_labels(8)
    bier = BIER(tiny_backbone(1), group_sizes=(16,), loss=loss)
    plain = EmbeddingModel(tiny_backbone(1), learner_dims=(16,))
    plain.set_weights(bier.get_weights())
    bier_loss, bier_grads = value_and_gradients(
        lambda *_: bier.compute_bier_losses(images, labels, training=True)["loss"],
        bier.trainable_variables,
    )
    plain_value, plain_grads = value_and_gradients(
        lambda *_: plain_loss(labels, plain(images, training=True)), plain.trainable_variables
    )
    np.testing.assert_allclose(bier_loss, plain_value, rtol=1e-5)
    assert len(bier_grads) == len(plain_grads) and np.abs(bier_grads[0]).sum() > 0.0
    for a, b in zip(bier_grads, plain_grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    bier.compile(keras.optimizers.SGD(0.1))
    plain.compile(keras.optimizers.SGD(0.1), loss=plain_loss)
    h1 = bier.fit(images, labels, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    h2 = plain.fit(images, labels, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    np.testing.assert_allclose(h1["loss"], h2["loss"], rtol=1e-4)
    for a, b in zip(bier.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def _unit(rows):
    rows = np.asarray(rows, dtype="float32")
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("loss", ["binomial_deviance", "contrastive", "triplet"])
def test_second_learner_focuses_on_the_first_learners_mistakes(loss):
    labels = np.array([0, 0, 1, 1])
    # Learner 1 separates class 0 well, but confuses samples 1 and 2 (a wrong pair).
    first = _unit([[1, 0], [1, 0.9], [0.9, 1], [0, 1]])
    second = _unit([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])
    form = get_loss_form(loss)
    _, weights = boosted_learner_losses([first, second], labels, form)
    w1, w2 = to_numpy(weights[0]), to_numpy(weights[1])
    assert np.all(w1 == 1.0)
    if loss == "triplet":
        # anchor 1, positive 0, negative 2 is violated; anchor 0, positive 1, negative 3 is not.
        assert w2[1, 0, 2] > w2[0, 1, 3]
    else:
        assert w2[1, 2] > w2[0, 3]  # wrong negative pair vs well-separated negative pair
        # Positive pairs (0, 1) and (2, 3) are equally similar under learner 1 (0.743), so they
        # weigh the same, and less than the wrong negative pair.
        np.testing.assert_allclose(w2[2, 3], w2[0, 1], rtol=1e-6)
        assert w2[0, 1] < w2[1, 2]
    assert np.all((w2 >= 0) & (w2 <= 1))


@pytest.mark.parametrize("loss", ["binomial_deviance", "contrastive", "triplet"])
@pytest.mark.parametrize("variant", ["paper", "reference"])
def test_weights_and_losses_finite_for_extreme_inputs(loss, variant):
    if variant == "reference" and loss != "binomial_deviance":
        with pytest.raises(ValueError, match="binomial deviance"):
            boosted_learner_losses(
                [np.eye(3, dtype="float32")], [0, 0, 1], get_loss_form(loss), variant
            )
        return
    rng = np.random.default_rng(0)
    cases = [
        np.zeros((6, 4), "float32"),  # all-zero embeddings (similarity 0)
        np.ones((6, 4), "float32") / 2.0,  # identical embeddings (similarity 1)
        _unit(rng.normal(size=(6, 4)) * 1e6),
    ]
    for labels in ([0, 0, 1, 1, 2, 2], [0, 1, 2, 3, 4, 5], [0] * 6):
        for case in cases:
            losses, weights = boosted_learner_losses(
                [case, -case, case], labels, get_loss_form(loss), variant
            )
            assert all(np.isfinite(to_numpy(v)) for v in losses)
            assert all(np.all(np.isfinite(to_numpy(w))) for w in weights)


def test_triplet_loss_matches_a_naive_loop():
    rng = np.random.default_rng(1)
    labels = np.array([0, 0, 1, 1, 2])
    e = _unit(rng.normal(size=(5, 3)))
    (value,), _ = boosted_learner_losses([e], labels, get_loss_form("triplet", margin=0.1))
    s, terms = e @ e.T, []
    for a, p, n in itertools.product(range(5), repeat=3):
        if a != p and labels[a] == labels[p] and labels[a] != labels[n]:
            terms.append(max(0.0, s[a, n] - s[a, p] + 0.1))
    np.testing.assert_allclose(to_numpy(value), np.mean(terms), rtol=1e-5)


@pytest.mark.backend_semantics
@pytest.mark.parametrize("diversity", ["activation", "adversarial"])
def test_diversity_loss_never_reaches_the_backbone(diversity):
    model = BIER(tiny_backbone(), group_sizes=(4, 6, 8), diversity=diversity, regressor_units=16)
    images, labels = tiny_images(8), tiny_labels(8)

    def diversity_loss(*_):
        return model.compute_bier_losses(images, labels, training=True)["diversity_loss"]

    backbone_grads = gradients(diversity_loss, model.backbone.trainable_variables)
    assert backbone_grads and all(np.all(g == 0) for g in backbone_grads)
    grads = gradients(diversity_loss, [h.kernel for h in model.heads])
    assert all(np.any(g != 0) for g in grads)


def test_adversarial_regressors_maximise_what_the_learners_minimise():
    model = BIER(
        tiny_backbone(),
        group_sizes=(4, 6),
        diversity="adversarial",
        regressor_units=8,
        lambda_weight=0.0,
    )
    layer = model.diversity_layer
    f = [np.random.default_rng(0).normal(size=(5, d)).astype("float32") for d in (4, 6)]
    sources = [*f, *layer.trainable_variables]
    loss_grads = gradients(lambda f0, f1, *_: layer([f0, f1]), sources)
    sim_grads = gradients(lambda f0, f1, *_: sum(layer.similarity_losses([f0, f1])), sources)
    # Regressors descend on -L_sim (maximise similarity) ...
    assert len(sources) > 2 and np.abs(sim_grads[2]).sum() > 0.0
    for g_loss, g_sim in zip(loss_grads[2:], sim_grads[2:]):
        np.testing.assert_allclose(g_loss, -g_sim, rtol=1e-5, atol=1e-7)
    # ... and the embeddings receive the reversed gradient: they descend on +L_sim.
    hidden, output = layer.regressors[0]
    (expected,) = gradients(
        lambda plain: keras.ops.mean(keras.ops.sum((plain * output(hidden(f[1]))) ** 2, -1)) / 6.0,
        [f[0]],
    )
    assert np.abs(expected).sum() > 0.0
    np.testing.assert_allclose(loss_grads[0], expected, rtol=1e-5, atol=1e-7)


def test_training_reports_every_term_and_reference_variant_and_lr_multiplier():
    images, labels = tiny_images(8), tiny_labels(8)
    model = BIER(
        tiny_backbone(),
        group_sizes=(4, 6, 8),
        diversity="adversarial",
        regressor_units=16,
        boosting="reference",
    )
    model.compile(keras.optimizers.Adam(1e-3), embedding_lr_multiplier=10.0)
    history = model.fit(images, labels, batch_size=8, epochs=1, verbose=0).history
    assert {"loss", "metric_loss", "diversity_loss", "learner_2_loss"} <= set(history)
    optimizer = model.optimizer  # the heads' learning rate is 10x: 1e-2
    head_rate = float(optimizer.learning_rate) * optimizer.get_multiplier(HEAD_PATTERN)
    assert head_rate == pytest.approx(1e-2)
    head_paths = sorted(v.path for head in model.heads for v in head.trainable_variables)
    assert optimizer.scaled_variables(HEAD_PATTERN) == head_paths
    assert np.isfinite(model.evaluate(images, labels, verbose=0, return_dict=True)["loss"])


def test_argument_errors():
    backbone = tiny_backbone()
    with pytest.raises(ValueError, match="diversity"):
        BIER(backbone, group_sizes=(4, 4), diversity="orthogonal")
    with pytest.raises(ValueError, match="two learners"):
        BIER(backbone, group_sizes=(8,), diversity="activation")
    with pytest.raises(ValueError, match="loss"):
        BIER(backbone, group_sizes=(4, 4), loss="margin")
    with pytest.raises(ValueError, match="reference"):
        BIER(backbone, group_sizes=(4, 4), loss="triplet", boosting="reference")
    with pytest.raises(ValueError, match="Unknown options"):
        BIER(backbone, group_sizes=(4, 4), loss_options={"margin": 0.1})
    assert BIER(backbone).learner_dims == (96, 160, 256)


def test_build_bier_from_the_fashion_mnist_config_with_the_real_convnet():
    from keras_dml import backbones
    from keras_dml.methods import get_method
    from tests.support.configs import config_file_dict

    spec = get_method("bier")
    config = config_file_dict("recipes/configs/bier_fashion_mnist.json")
    size = config["image_size"]
    backbone = backbones.get(config["backbone"]["name"], input_shape=(size, size, 3))
    model = spec.build(config, backbone, {})
    spec.compile(config, model)
    assert isinstance(model, BIER) and model.diversity == "adversarial"
    assert model.learner_dims == (22, 42, 64)
    history = model.fit(tiny_images(8), tiny_labels(8), batch_size=8, verbose=0).history
    assert np.isfinite(history["loss"][0])
    for name in ("cub200", "cars196", "sop"):
        gpu = config_file_dict(f"recipes/configs/bier_{name}.json")
        assert gpu["model"]["group_sizes"] == [96, 160, 256] and gpu["batch_size"] == 128
    with pytest.raises(ValueError, match="method_options"):
        spec.compile({**config, "method_options": {"lr": 1}}, model)


def test_a_compiled_loss_replaces_boosting_by_one_loss_per_group():
    """Any loss passed to compile trains each group on its own slice, without boosting weights."""
    from keras_dml import losses
    from keras_dml.pairs.distances import l2_normalize

    model = BIER(tiny_backbone(), group_sizes=(4, 6))
    model.compile("adam", loss=losses.MultiSimilarityLoss())
    images, labels = tiny_images(8), tiny_labels(8)
    output = model(images)
    terms = model.loss_terms(labels, output)
    expected = [
        losses.MultiSimilarityLoss()(labels, l2_normalize(output[:, a:b]))
        for a, b in model.learner_slices()
    ]
    for m, value in enumerate(expected):
        np.testing.assert_allclose(float(terms[f"learner_{m}_loss"]), float(value), rtol=1e-5)
    boosted = BIER(tiny_backbone(), group_sizes=(4, 6))
    boosted.compile("adam")
    assert not np.isclose(
        float(boosted.loss_terms(labels, output)["metric_loss"]), float(terms["metric_loss"])
    )
