"""`EmbeddingModel.compile(loss=<loss layer>)`: the model owns, trains and saves the layer.

Its weights never reach a SavedModel (the ONNX export is covered in `test_export_parity.py`).
"""

import os
import re

import keras
import numpy as np
import pytest

from keras_dml import losses
from keras_dml.export import export_saved_model
from keras_dml.models import EmbeddingModel
from tests.support.backend_utils import to_numpy
from tests.support.helpers import tiny_images, tiny_labels
from tests.support.paths import REPO_ROOT

DIM, NUM_CLASSES = 8, 4
CLASS_LOSSES = ("normalized_softmax", "proxy_anchor", "arcface", "cosface")


def tiny_model(seed=0, regularizer=None, **kwargs):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Rescaling(1.0 / 127.5, offset=-1.0)(inputs)
    x = keras.layers.Conv2D(
        8, 3, strides=4, padding="same", activation="relu", kernel_regularizer=regularizer
    )(x)
    return EmbeddingModel(keras.Model(inputs, x), embedding_dim=DIM, **kwargs)


def compiled_model(name, **loss_kwargs):
    model = tiny_model()
    loss_layer = losses.get(name, num_classes=NUM_CLASSES, embedding_dim=DIM, **loss_kwargs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss_layer)
    return model, loss_layer


def weights_of(layer):
    return [to_numpy(w).copy() for w in layer.trainable_weights]


@pytest.mark.parametrize("name", CLASS_LOSSES)
def test_owned_class_weights_train_and_save(name, tmp_path):
    model, loss_layer = compiled_model(name)
    assert model.loss_layer is loss_layer
    assert any(loss_layer.class_weight_variable is v for v in model.trainable_variables)
    proxies_before, heads_before = weights_of(loss_layer), weights_of(model.heads[0])
    history = model.fit(tiny_images(16), tiny_labels(16, NUM_CLASSES), batch_size=8, verbose=0)
    assert to_numpy(model.optimizer.iterations) == 2
    assert np.all(np.isfinite(history.history["loss"]))
    assert not np.allclose(proxies_before[0], to_numpy(loss_layer.class_weight_variable))
    assert not np.allclose(heads_before[0], to_numpy(model.heads[0].kernel))

    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    assert type(reloaded.loss_layer) is type(loss_layer)
    assert reloaded.loss_layer.get_config() == loss_layer.get_config()
    np.testing.assert_array_equal(
        to_numpy(reloaded.loss_layer.class_weight_variable),
        to_numpy(loss_layer.class_weight_variable),
    )
    images = tiny_images(4, seed=1)
    np.testing.assert_array_equal(to_numpy(reloaded(images)), to_numpy(model(images)))
    # The optimizer state (the proxies' moments included) resumes.
    assert to_numpy(reloaded.optimizer.iterations) == 2
    saved = {v.path: to_numpy(v) for v in model.optimizer.variables}
    for variable in reloaded.optimizer.variables:
        np.testing.assert_array_equal(to_numpy(variable), saved[variable.path])


@pytest.mark.tf_only("exports a TensorFlow SavedModel (export runs from the TensorFlow backend)")
@pytest.mark.parametrize("name", CLASS_LOSSES)
def test_owned_class_weights_stay_out_of_exports(name, tmp_path):
    import tensorflow as tf

    model, loss_layer = compiled_model(name)
    report = export_saved_model(model, tmp_path / "saved_model")
    assert list(report.excluded_weights) == [loss_layer.class_weight_variable.path]
    assert report.num_variables == len(model.weights) - 1
    loaded = tf.saved_model.load(str(tmp_path / "saved_model"))
    assert (NUM_CLASSES, DIM) not in {tuple(v.shape) for v in loaded.variables}


def test_round_trip_without_compile_restores_the_layer_and_resumes(tmp_path):
    model, loss_layer = compiled_model("arcface", margin=0.3)
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True, compile=False)
    assert reloaded.loss_layer.margin == 0.3 and not reloaded.compiled
    np.testing.assert_array_equal(
        to_numpy(reloaded.loss_layer.class_weights), to_numpy(loss_layer.class_weights)
    )
    reloaded.compile(optimizer="adam")  # no loss: the owned layer is the loss
    history = reloaded.fit(tiny_images(8), tiny_labels(8, NUM_CLASSES), verbose=0)
    assert np.isfinite(history.history["loss"][-1])


def test_compute_loss_is_the_layer_on_labels_and_embeddings():
    model, loss_layer = compiled_model("proxy_anchor")
    images, labels = tiny_images(8), tiny_labels(8, NUM_CLASSES)
    embeddings = model(images)
    expected = float(loss_layer(labels, embeddings))
    np.testing.assert_allclose(float(model.compute_loss(y=labels, y_pred=embeddings)), expected)
    evaluated = model.evaluate(images, labels, batch_size=8, verbose=0)
    np.testing.assert_allclose(evaluated, expected, rtol=1e-5)


def test_compute_loss_adds_the_models_regularisation_losses():
    model = tiny_model(regularizer=keras.regularizers.L2(0.5))
    loss_layer = losses.CosFaceLoss(num_classes=NUM_CLASSES, embedding_dim=DIM)
    model.compile(optimizer="adam", loss=loss_layer)
    labels, embeddings = tiny_labels(8, NUM_CLASSES), model(tiny_images(8))
    penalty = float(sum(keras.ops.sum(loss) for loss in model.losses))
    assert penalty > 0.0
    total = float(model.compute_loss(y=labels, y_pred=embeddings))
    np.testing.assert_allclose(total, float(loss_layer(labels, embeddings)) + penalty, rtol=1e-6)


def test_a_plain_loss_keeps_the_keras_path_and_replaces_a_loss_layer():
    model, loss_layer = compiled_model("cosface")
    assert "loss_layer" in model.get_config()
    count = len(model.trainable_variables)
    model.compile(optimizer="adam", loss=losses.ContrastiveLoss())
    assert model.loss_layer is None and "loss_layer" not in model.get_config()
    assert len(model.trainable_variables) == count - 1
    assert not any(loss_layer.class_weight_variable is w for w in model.weights)
    history = model.fit(tiny_images(8), tiny_labels(8, NUM_CLASSES), verbose=0)
    assert np.isfinite(history.history["loss"][-1])


def test_compile_without_loss_keeps_the_owned_layer():
    model, loss_layer = compiled_model("arcface")
    model.compile(optimizer="sgd")
    assert model.loss_layer is loss_layer


def test_constructor_argument_and_config_rebuild_the_layer():
    layer = losses.ArcFaceLoss(num_classes=NUM_CLASSES, embedding_dim=DIM, margin=0.3)
    model = tiny_model(loss_layer=layer)
    assert model.loss_layer is layer
    config = model.get_config()
    clone = EmbeddingModel.from_config(config)
    assert isinstance(clone.loss_layer, losses.ArcFaceLoss) and clone.loss_layer.margin == 0.3
    assert clone.loss_layer is not layer


def test_other_loss_layers_are_owned_too():
    model = tiny_model()
    margin = losses.LearnableMarginLoss(num_classes=NUM_CLASSES, seed=0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=margin)
    before = to_numpy(margin.beta).copy()
    model.fit(tiny_images(16), tiny_labels(16, NUM_CLASSES), batch_size=16, epochs=2, verbose=0)
    assert not np.allclose(before, to_numpy(margin.beta))


def test_proxies_take_their_own_learning_rate():
    """`LearningRateMultipliers` reaches the owned proxies by path (0 here: they stay put)."""
    from keras_dml.optimizers import LearningRateMultipliers

    model = tiny_model()
    loss_layer = losses.ProxyAnchorLoss(num_classes=NUM_CLASSES, embedding_dim=DIM)
    optimizer = LearningRateMultipliers(keras.optimizers.Adam(1e-2), {"proxies": 0.0})
    model.compile(optimizer=optimizer, loss=loss_layer)
    proxies, head = weights_of(loss_layer)[0], weights_of(model.heads[0])[0]
    model.fit(tiny_images(8), tiny_labels(8, NUM_CLASSES), batch_size=8, verbose=0)
    np.testing.assert_array_equal(to_numpy(loss_layer.proxies), proxies)
    assert not np.allclose(to_numpy(model.heads[0].kernel), head)


def test_mismatched_embedding_dim_is_refused_at_compile():
    model = tiny_model()
    layer = losses.ProxyAnchorLoss(num_classes=NUM_CLASSES, embedding_dim=DIM + 1)
    with pytest.raises(ValueError, match=f"embedding_dim={DIM}"):
        model.compile(optimizer="adam", loss=layer)
    assert model.loss_layer is None


def test_sample_weights_are_refused():
    model, _ = compiled_model("normalized_softmax")
    with pytest.raises(ValueError, match="per-sample weights"):
        model.fit(tiny_images(8), tiny_labels(8, NUM_CLASSES), sample_weight=np.ones(8), verbose=0)


def test_out_of_range_labels_make_fit_report_nan():
    """In a compiled train step the label check cannot raise, so the loss is NaN; where `fit`
    runs eagerly (PyTorch) the check raises the error naming the fix."""
    model, _ = compiled_model("proxy_anchor")
    labels = tiny_labels(8, NUM_CLASSES)
    labels[0] = NUM_CLASSES
    if keras.backend.backend() == "torch":
        with pytest.raises(ValueError, match=r"labels in \[0, 4\).*Received out-of-range"):
            model.fit(tiny_images(8), labels, batch_size=8, verbose=0)
        return
    history = model.fit(tiny_images(8), labels, batch_size=8, verbose=0)
    assert np.isnan(history.history["loss"][-1])


def test_readme_losses_snippet_runs():
    """The Losses page's code block (docs/losses.md) runs as written and the model owns the
    proxies."""
    root = REPO_ROOT
    with open(os.path.join(root, "docs", "losses.md")) as f:
        section = f.read()
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {"__name__": "__readme_losses__"}
    exec(compile(code, "README losses", "exec"), namespace)
    model, proxies = namespace["model"], namespace["proxies"]
    assert model.loss_layer is proxies
    assert any(proxies.proxies is v for v in model.trainable_variables)
