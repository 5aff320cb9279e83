"""Every registered method trains with every loss family.

Pair losses (margin, multi-similarity) and class-based losses (ProxyAnchor, normalised softmax)
go through the same hooks `keras_dml.training.train` uses. Class-based losses give each learner
its own class vectors: the columns of its slice of one `[C, D]` variable the model owns.
"""

import os

import keras
import numpy as np
import pytest

from keras_dml import backbones, losses
from keras_dml.data import load_dataset
from keras_dml.methods import get_method, list_methods
from keras_dml.methods.defaults import compile_with_config, m_per_class_batches
from tests.support.backend_utils import gradients
from tests.support.configs import config_dict
from tests.support.helpers import roundtrip, tiny_images, tiny_labels

LOSS_FAMILIES = {
    "margin": {"name": "margin"},
    "multi_similarity": {"name": "multi_similarity"},
    "proxy_anchor": {"name": "proxy_anchor"},
    "normalized_softmax": {"name": "normalized_softmax"},
    # pair losses
    "ntxent": {"name": "ntxent"},
    "supcon": {"name": "supcon"},
    "circle": {"name": "circle"},
    "lifted_structure": {"name": "lifted_structure"},
    "npairs": {"name": "npairs"},
    "tuplet_margin": {"name": "tuplet_margin"},
    "snr_contrastive": {"name": "snr_contrastive"},
    # class losses with several centers per class, and a list-wise loss
    "subcenter_arcface": {"name": "subcenter_arcface"},
    "soft_triple": {"name": "soft_triple", "centers_per_class": 3},
    "fast_ap": {"name": "fast_ap"},
}
# Families every method trains with in the bounded CI run (KERAS_DML_CI_BUDGET); each other family
# trains there with one method, in turn, so every loss and every method still meets the hooks.
# The margin loss (a pair loss with its own sampling) is the core; a class loss with every method
# is the default suite's `test_every_method_trains_with_a_class_loss_and_saves_it` (ProxyAnchor).
CORE_FAMILIES = ("margin",)
# Each method's small test model (its `MethodSpec.tiny` arguments).
METHOD_MODELS = {name: dict(get_method(name).tiny) for name in list_methods()}


@pytest.fixture(scope="module")
def splits():
    return {s: load_dataset("digits", split=s, image_size=32) for s in ("train", "val")}


def build_and_fit(method_name, loss, splits, steps=2, with_callbacks=False):
    """The `train()` path (fill class arguments, build, compile, prepare) and a short fit.

    Returns `(model, history, class vectors before)`, and the method's callbacks last with
    `with_callbacks`.
    """
    config = config_dict(
        {
            "method": method_name,
            "dataset": "digits",
            "model": METHOD_MODELS[method_name],
            "loss": dict(loss),
            "batch_size": 16,
            "m_per_class": 4,
            "epochs": 1,
            "method_options": {"epoch_length": steps} if method_name in ("dc", "hdc") else {},
        }
    )
    config["loss"] = losses.with_class_arguments(
        config["loss"], num_classes=splits["train"].num_classes
    )
    method = get_method(method_name)
    keras.utils.set_random_seed(0)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3), width=4)
    model = method.build(config, backbone, splits)
    (method.compile or compile_with_config)(config, model)
    dataset, callbacks = (method.prepare or m_per_class_batches)(config, model, splits)
    before = [keras.ops.convert_to_numpy(v).copy() for v in class_vectors(model)]
    history = model.fit(dataset, epochs=1, steps_per_epoch=steps, callbacks=callbacks, verbose=0)
    return (model, history, before, callbacks) if with_callbacks else (model, history, before)


def class_vectors(model):
    """The class-vector variables a model owns (proxies / class weights), any method."""
    found = [
        v
        for layer in model._flatten_layers()
        if losses.is_class_loss(layer)
        for v in [layer.class_weight_variable]
    ]
    return found


def check_trains(method_name, loss_name, splits):
    model, history, before = build_and_fit(method_name, LOSS_FAMILIES[loss_name], splits)
    assert np.isfinite(history.history["loss"]).all(), history.history
    after = [keras.ops.convert_to_numpy(v) for v in class_vectors(model)]
    if losses.is_class_loss(LOSS_FAMILIES[loss_name]):
        assert after, f"{method_name} owns no class vectors for {loss_name}"
        assert any(not np.allclose(a, b) for a, b in zip(after, before)), "proxies did not train"
    else:
        assert not after
    return model


@pytest.mark.parametrize("method_name", sorted(METHOD_MODELS))
def test_every_method_trains_with_a_class_loss_and_saves_it(method_name, splits):
    """ProxyAnchor through the train() hooks: proxies train and survive a `.keras` round trip."""
    model = check_trains(method_name, "proxy_anchor", splits)
    reloaded = roundtrip(model)
    for saved, loaded in zip(class_vectors(model), class_vectors(reloaded), strict=True):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(saved), keras.ops.convert_to_numpy(loaded)
        )
    images = tiny_images(4)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(model(images)),
        keras.ops.convert_to_numpy(reloaded(images)),
        atol=1e-5,
    )


def method_loss_grid(budget):
    """`(method, loss)` pairs: the full grid, or under a CI budget the core families with every
    method and each other family with one method (cycling through the methods)."""
    methods = sorted(METHOD_MODELS)
    if not budget:
        return [(m, loss) for m in methods for loss in sorted(LOSS_FAMILIES)]
    others = [loss for loss in sorted(LOSS_FAMILIES) if loss not in CORE_FAMILIES]
    core = [(m, loss) for m in methods for loss in CORE_FAMILIES]
    return core + [(methods[i % len(methods)], loss) for i, loss in enumerate(others)]


def test_budget_grid_meets_every_method_and_every_loss():
    grid = method_loss_grid(budget=True)
    assert {m for m, _ in grid} == set(METHOD_MODELS)
    assert {loss for _, loss in grid} == set(LOSS_FAMILIES)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method_name", "loss_name"), method_loss_grid(bool(os.environ.get("KERAS_DML_CI_BUDGET")))
)
def test_every_method_trains_with_every_loss_family(method_name, loss_name, splits):
    check_trains(method_name, loss_name, splits)


def test_every_registered_method_is_covered():
    assert set(list_methods()) <= set(METHOD_MODELS) | {"toy"}, sorted(list_methods())


@pytest.mark.backend_semantics
@pytest.mark.parametrize("method_name", ["dc", "bier", "abe"])
def test_learner_k_trains_only_its_own_columns_of_the_class_vectors(method_name, splits):
    """Per-learner proxies are column slices: learner k's loss moves only its columns."""
    model, _, _ = build_and_fit(method_name, LOSS_FAMILIES["proxy_anchor"], splits, steps=1)
    (proxies,) = class_vectors(model)
    images, labels = tiny_images(16), tiny_labels(16)
    a, b = model.learner_slices()[0]
    learner = model.learner_embeddings(images)[0]

    def loss(*_):
        if method_name == "abe":
            return model.metric_term(labels, learner, 0)
        if method_name == "bier":  # the method's own per-group loss, not a helper
            return model.loss_terms(labels, model(images))["learner_0_loss"]
        return model.metric_loss(labels, learner, class_weights=lambda w: w[:, a:b])

    (gradient,) = gradients(loss, [proxies])
    assert np.abs(gradient[:, a:b]).sum() > 0
    np.testing.assert_array_equal(np.delete(gradient, np.s_[a:b], axis=1), 0.0)


def test_divide_stage_uses_the_clusters_columns(splits):
    """D&C: a batch of cluster 1 reaches only learner 1's columns of the proxies."""
    model, _, _ = build_and_fit("dc", LOSS_FAMILIES["normalized_softmax"], splits, steps=1)
    model.set_stage("divide")
    (proxies,) = class_vectors(model)
    images, labels = tiny_images(16), tiny_labels(16)

    y = {"labels": labels, "clusters": np.ones(16, "int32")}
    (gradient,) = gradients(
        lambda *_: model.compute_loss(y=y, y_pred=model(images, training=True), training=True),
        [proxies],
    )
    (a0, b0), (a1, b1) = model.learner_slices()
    assert np.abs(gradient[:, a1:b1]).sum() > 0
    np.testing.assert_array_equal(gradient[:, a0:b0], 0.0)


def test_baseline_trains_with_its_default_loss_when_the_config_names_none(tmp_path):
    """A config without `loss` trains the baseline with normalised softmax, saved in config.json."""
    import json

    from keras_dml.training import train

    config = {"method": "baseline", "dataset": "digits", "epochs": 1, "batch_size": 16}
    config["model"] = {"embedding_dim": 16}
    result = train(config, str(tmp_path), verbose=0, report=False)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["loss"] == {"name": "normalized_softmax", "num_classes": 4}
    assert losses.is_class_loss(result["model"].loss_layer)
