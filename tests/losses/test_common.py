"""Behaviour shared by every loss: degenerate batches, dtypes, graph mode, configs, fit."""

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import dtype_name, gradients, to_numpy, traced, value_and_gradients

DIM = 8

# name -> (factory, is_layer). Layers own trainable weights; Loss classes go to `compile`.
LOSS_FACTORIES = {
    "contrastive": (lambda: losses.ContrastiveLoss(margin=1.0), False),
    "contrastive_cosine": (lambda: losses.ContrastiveLoss(similarity="cosine"), False),
    "triplet_semi_hard": (lambda: losses.TripletLoss(mining="semi-hard"), False),
    "triplet_batch_hard": (lambda: losses.TripletLoss(mining="batch-hard"), False),
    "triplet_all_soft": (lambda: losses.TripletLoss(mining="all", soft_margin=True), False),
    "triplet_random": (lambda: losses.TripletLoss(mining="random", seed=3), False),
    "margin": (lambda: losses.MarginLoss(seed=1), False),
    "margin_closest": (lambda: losses.MarginLoss(sampling="closest", normalize_by="pairs"), False),
    "binomial_deviance": (lambda: losses.BinomialDevianceLoss(), False),
    "multi_similarity": (lambda: losses.MultiSimilarityLoss(), False),
    "learnable_margin": (lambda: losses.LearnableMarginLoss(num_classes=4, nu=0.01, seed=2), True),
    "proxy_nca": (lambda: losses.ProxyNCALoss(num_classes=4, embedding_dim=DIM), True),
}
PAIR_LOSSES = [name for name in LOSS_FACTORIES if name != "proxy_nca"]


def _evaluate(loss_obj, is_layer, labels, embeddings, return_count=False):
    if is_layer:
        return loss_obj(labels, embeddings, return_count=return_count)
    if return_count:
        return loss_obj.loss_and_count(labels, embeddings)
    return loss_obj(labels, embeddings)


def _state(loss_obj):
    """The variables a JAX step carries for a loss: a layer's, or a loss's seed state."""
    if isinstance(loss_obj, keras.layers.Layer):
        return loss_obj.variables
    generator = getattr(loss_obj, "seed_generator", None)
    return [] if generator is None else [generator.state]


def _batch(seed=0, n=8, num_classes=4):
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) % num_classes).astype("int32")
    return labels, rng.normal(size=(n, DIM)).astype("float32")


@pytest.mark.parametrize("name", sorted(LOSS_FACTORIES))
def test_regular_batch_gives_finite_positive_loss_and_count(name):
    factory, is_layer = LOSS_FACTORIES[name]
    labels, embeddings = _batch()
    loss, count = _evaluate(factory(), is_layer, labels, embeddings, return_count=True)
    assert dtype_name(loss) == "float32" and dtype_name(count) == "int32"
    assert np.isfinite(float(loss)) and float(loss) != 0.0
    assert int(count) > 0


@pytest.mark.parametrize("name", PAIR_LOSSES)
@pytest.mark.parametrize("labels", [[3] * 6, [0, 1, 2, 3, 4, 5]], ids=["one_class", "distinct"])
def test_degenerate_batches_give_zero_loss_and_finite_zero_gradients(name, labels):
    factory, is_layer = LOSS_FACTORIES[name]
    loss_obj = factory()
    labels = np.asarray(labels, "int32")
    embeddings = np.random.default_rng(1).normal(size=(6, DIM)).astype("float32")
    loss, count = _evaluate(loss_obj, is_layer, labels, embeddings, return_count=True)
    (gradient,) = gradients(lambda x: _evaluate(loss_obj, is_layer, labels, x), [embeddings])
    assert float(loss) == 0.0 and int(count) == 0
    assert np.all(np.isfinite(gradient)) and np.all(gradient == 0.0)


def test_proxy_nca_without_valid_labels_is_zero():
    layer = losses.ProxyNCALoss(num_classes=4, embedding_dim=DIM)
    embeddings = np.ones((3, DIM), "float32")
    labels = np.array([7, 8, -1])
    loss, count = layer(labels, embeddings, return_count=True)
    (gradient,) = gradients(lambda x: layer(labels, x), [embeddings])
    assert float(loss) == 0.0 and int(count) == 0
    assert np.all(gradient == 0.0)


@pytest.mark.parametrize("name", sorted(LOSS_FACTORIES))
def test_duplicate_embeddings_keep_gradients_finite(name):
    factory, is_layer = LOSS_FACTORIES[name]
    labels = np.array([0, 0, 1, 1, 2, 2], "int32")
    base = np.random.default_rng(2).normal(size=(3, DIM)).astype("float32")
    embeddings = np.repeat(base, 2, axis=0)  # positive pairs at distance 0
    loss_obj = factory()
    loss, (gradient,) = value_and_gradients(
        lambda x: _evaluate(loss_obj, is_layer, labels, x), [embeddings]
    )
    assert np.isfinite(float(loss))
    assert np.all(np.isfinite(gradient))


@pytest.mark.parametrize("name", sorted(LOSS_FACTORIES))
def test_float16_embeddings_give_float32_loss(name):
    factory, is_layer = LOSS_FACTORIES[name]
    labels, embeddings = _batch()
    loss_obj = factory()
    loss = _evaluate(loss_obj, is_layer, labels, embeddings.astype("float16"))
    assert dtype_name(loss) == "float32"
    reference = _evaluate(loss_obj, is_layer, labels, embeddings.astype("float16").astype("f4"))
    if "random" not in name and name not in ("margin", "learnable_margin"):
        np.testing.assert_allclose(float(loss), float(reference), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(LOSS_FACTORIES))
def test_graph_mode_with_unknown_batch_size(name):
    factory, is_layer = LOSS_FACTORIES[name]
    loss_obj = factory()
    labels, embeddings = _batch()

    graph_loss = traced(
        lambda y, x: _evaluate(loss_obj, is_layer, y, x, return_count=True),
        [((None,), "int32"), ((None, DIM), "float32")],
        state=_state(loss_obj),
    )

    loss, count = graph_loss(labels, embeddings)
    eager_loss, eager_count = _evaluate(loss_obj, is_layer, labels, embeddings, return_count=True)
    assert np.isfinite(float(loss)) and int(count) > 0
    if "random" not in name and name not in ("margin", "learnable_margin"):
        np.testing.assert_allclose(float(loss), float(eager_loss), rtol=1e-5)
        assert int(count) == int(eager_count)


@pytest.mark.parametrize("name", sorted(LOSS_FACTORIES))
def test_config_round_trip(name):
    factory, is_layer = LOSS_FACTORIES[name]
    loss_obj = factory()
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss_obj))
    assert type(restored) is type(loss_obj)
    assert restored.get_config() == loss_obj.get_config()
    if not is_layer:
        labels, embeddings = _batch()
        if "random" not in name and name != "margin":
            np.testing.assert_allclose(
                float(restored(labels, embeddings)), float(loss_obj(labels, embeddings)), rtol=1e-6
            )


@pytest.mark.parametrize(
    "name", ["contrastive", "triplet_random", "margin", "binomial_deviance", "multi_similarity"]
)
def test_compile_and_fit_with_loss_class(name):
    factory, _ = LOSS_FACTORIES[name]
    labels, _ = _batch(n=16)
    inputs = np.random.default_rng(3).normal(size=(16, 5)).astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(DIM)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=factory())
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(inputs, labels, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert any(not np.allclose(b, to_numpy(w)) for b, w in zip(before, model.trainable_weights))


@pytest.mark.parametrize("name", ["triplet_random", "triplet_semi_hard", "margin", "proxy_nca"])
def test_xla_compiled_graph(name):
    factory, is_layer = LOSS_FACTORIES[name]
    loss_obj = factory()
    labels, embeddings = _batch()

    compiled = traced(
        lambda y, x: _evaluate(loss_obj, is_layer, y, x, return_count=True),
        jit_compile=True,
        state=_state(loss_obj),
    )
    loss, count = compiled(labels, embeddings)
    assert np.isfinite(float(loss)) and int(count) > 0
