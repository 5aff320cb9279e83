"""`embed` and the `RetrievalEvaluation` callback inside `model.fit`."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_dml.evaluation import RetrievalEvaluation, embed, evaluate


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])


def _data(n=48, classes=12, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(classes), n // classes)
    x = (rng.normal(size=(classes, 8))[labels] + 0.3 * rng.normal(size=(n, 8))).astype(np.float32)
    return x, labels


def test_embed_dataset_array_and_tuple_agree():
    model = _model()
    x, labels = _data()
    expected = model.predict(x, verbose=0)
    dataset = tf.data.Dataset.from_tensor_slices((x, labels)).batch(10)
    emb, got_labels = embed(model, dataset, verbose=False)
    assert emb.dtype == np.float32 and emb.shape == (48, 4)
    np.testing.assert_allclose(emb, expected, atol=1e-5)
    np.testing.assert_array_equal(got_labels, labels)
    emb_array, none_labels = embed(model, x, batch_size=7, verbose=False)
    np.testing.assert_allclose(emb_array, expected, atol=1e-5)
    assert none_labels is None
    emb_tuple, tuple_labels = embed(model, (x, labels), batch_size=64, verbose=False)
    np.testing.assert_allclose(emb_tuple, expected, atol=1e-5)
    np.testing.assert_array_equal(tuple_labels, labels)
    images_only = tf.data.Dataset.from_tensor_slices(x).batch(16)
    assert embed(model, images_only, verbose=False)[1] is None


def test_embed_errors():
    model = _model()
    x, labels = _data()
    with pytest.raises(ValueError, match="labels"):
        embed(model, (x, labels[:5]), verbose=False)
    two_outputs = keras.Model(model.inputs, [model.outputs[0], model.outputs[0]])
    with pytest.raises(ValueError, match="ONE output"):
        embed(two_outputs, x, verbose=False)
    with pytest.raises(ValueError, match="batch_size"):
        embed(model, x, batch_size=0, verbose=False)


def test_callback_writes_logs_for_checkpoint_and_history(tmp_path):
    model = _model()
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    x, labels = _data()
    val = tf.data.Dataset.from_tensor_slices((x, labels)).batch(16)
    callback = RetrievalEvaluation(
        val, recall_at=(1, 2), metrics=("recall", "map@r", "nmi"), backend="numpy"
    )
    path = tmp_path / "best.keras"
    checkpoint = keras.callbacks.ModelCheckpoint(
        str(path), monitor="val_recall@1", mode="max", save_best_only=True, verbose=0
    )
    history = model.fit(
        x, np.zeros((48, 4)), epochs=2, batch_size=16, verbose=0, callbacks=[callback, checkpoint]
    )
    for key in ("val_recall@1", "val_recall@2", "val_map@r", "val_nmi"):
        assert len(history.history[key]) == 2, key
        assert callback.history[key] == history.history[key]
    assert callback.history["epoch"] == [0, 1]
    assert path.exists(), "ModelCheckpoint did not see val_recall@1"
    expected = evaluate(*embed(model, val, verbose=False), recall_at=(1, 2), backend="numpy")
    assert history.history["val_recall@1"][-1] == pytest.approx(expected["recall@1"])


def test_callback_every_n_epochs_and_query_gallery():
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    x, labels = _data()
    callback = RetrievalEvaluation(
        (x[::2], labels[::2]),
        query_dataset=(x[1::2], labels[1::2]),
        every_n_epochs=2,
        prefix="gallery_",
        recall_at=(1,),
        metrics=("recall",),
        backend="numpy",
    )
    history = model.fit(x, np.zeros((48, 4)), epochs=3, verbose=0, callbacks=[callback])
    assert callback.history["epoch"] == [1]
    assert len(history.history["gallery_recall@1"]) == 1
    assert 0.0 <= callback.history["gallery_recall@1"][0] <= 1.0


def test_callback_argument_errors():
    x, labels = _data()
    with pytest.raises(ValueError, match="every_n_epochs"):
        RetrievalEvaluation((x, labels), every_n_epochs=0)
    with pytest.raises(ValueError, match="subset"):
        RetrievalEvaluation((x, labels), metrics=("accuracy",))


def test_a_validation_split_of_one_image_is_named_with_its_class():
    """`fit` with a validation split of one image stops in one line naming the split and class."""
    x = np.random.default_rng(0).normal(size=(32, 8)).astype("float32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    model.compile(optimizer="adam", loss="mse")
    callback = RetrievalEvaluation((x[:1], np.array([7])), recall_at=(1,), metrics=("recall",))
    with pytest.raises(
        ValueError, match=r"validation split \('val_' metrics\) holds 1 image.*\[7\]"
    ):
        model.fit(x, np.zeros((32, 4)), epochs=1, verbose=0, callbacks=[callback])
    with pytest.raises(ValueError, match=r"Received 1 sample\(s\), of class\(es\) \[7\]"):
        evaluate(x[:1], np.array([7]), recall_at=(1,), metrics=("recall",))
