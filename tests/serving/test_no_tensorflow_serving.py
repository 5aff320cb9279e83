"""Embed, evaluate and search a saved `.keras` model on JAX and PyTorch with TensorFlow blocked.

`keras_dml.evaluation.embed` / `evaluate`, `EmbeddingIndex` and the `keras-dml
evaluate` / `search` commands take an `ImageDataset`, its PyDataset, arrays and image folders
without TensorFlow; a SavedModel, a TensorFlow feature, is refused in one line. Each backend runs
in a fresh interpreter whose `import tensorflow` fails (`tests.support.no_tensorflow`).
"""

import textwrap

import keras
import pytest

from tests.support.no_tensorflow import CLI_RUNNER, run_blocked

# Each test starts its own JAX and PyTorch interpreters: the default suite runs them once, and
# .ci/run's JAX and PyTorch lines (which include tests/serving) would only repeat them.
pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="starts its own jax and torch interpreters; the default (TensorFlow) suite runs it",
)

SERVING_RUN = CLI_RUNNER + textwrap.dedent(
    """
    import contextlib, io, json, os, runpy, sys, tempfile
    import numpy as np
    from PIL import Image
    import keras
    from keras_dml import backbones, data
    from keras_dml.evaluation import embed, evaluate
    from keras_dml.evaluation.model_evaluation import evaluate_model
    from keras_dml.methods import get_method
    from keras_dml.search import EmbeddingIndex, Embedder
    from keras_dml.utils import MissingDependencyError


    root = tempfile.mkdtemp()
    built = get_method("baseline").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
    model_path = os.path.join(root, "model.keras")
    built.save(model_path)
    model = keras.saving.load_model(model_path)
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 3)
    images = rng.integers(0, 256, (12, 32, 32, 3)).astype(np.uint8)
    expected = keras.ops.convert_to_numpy(model(images.astype("float32"), training=False))
    dataset = data.ImageDataset(labels, images=images, image_size=32)
    # Batches of 4 everywhere: one input shape, so JAX compiles the model once.
    batches = dataset.as_dataset(training=False, batch_size=4)
    assert type(batches).__name__ == "ImageBatches", type(batches)

    # embed: an ImageDataset, its PyDataset and (images, labels) give the model's own rows.
    for source in (dataset, batches, (images, labels)):
        vectors, found = embed(model, source, batch_size=4, verbose=False)
        np.testing.assert_allclose(vectors, expected, atol=1e-5)
        np.testing.assert_array_equal(found, labels)
    streamed, _ = embed(model, batches, verbose=False, out_path=os.path.join(root, "e.npy"))
    np.testing.assert_allclose(streamed, expected, atol=1e-5)
    metrics = evaluate_model(model, {"test": dataset}, batch_size=4)
    assert metrics == evaluate(expected, labels), (metrics, evaluate(expected, labels))

    # EmbeddingIndex over an image folder (lossless PNG: each image finds itself first).
    folder = os.path.join(root, "gallery")
    for i, (image, label) in enumerate(zip(images, labels)):
        os.makedirs(os.path.join(folder, f"c{label}"), exist_ok=True)
        Image.fromarray(image).save(os.path.join(folder, f"c{label}", f"{i}.png"))
    index = EmbeddingIndex(model=model_path)
    index.add(folder, batch_size=4)
    result = index.search(images[:4], k=1, batch_size=4)
    assert [os.path.basename(i) for i in result.ids[:, 0]] == ["0.png", "1.png", "2.png", "3.png"]
    # ... over an ImageDataset, searched with its PyDataset.
    index = EmbeddingIndex(model=model)
    index.add(dataset, batch_size=4)
    result = index.search(batches, k=1, batch_size=4)
    np.testing.assert_array_equal(result.indices[:, 0], np.arange(12))

    # keras-dml evaluate / search on the saved model.
    code, out, err = cli(
        "evaluate", model_path, "--dataset", "image_folder", "--data-dir", folder, "--json"
    )
    assert code == 0, err
    split = data.load_dataset("image_folder", split="test", data_dir=folder, image_size=32)
    scores, expected_scores = json.loads(out), evaluate_model(model, {"test": split})
    assert sorted(scores) == sorted(expected_scores), scores
    for key, value in expected_scores.items():
        if isinstance(scores[key], float):
            assert abs(scores[key] - float(value)) <= 1e-6, (key, scores[key], value)
        else:
            assert scores[key] == value, (key, scores[key], value)
    query = os.path.join(folder, "c1", "4.png")
    code, out, err = cli("search", model_path, "--gallery", folder, "--query", query, "-k", "2")
    assert code == 0, err
    first = out.splitlines()[1].split("\\t")
    assert first[2] == "c1" and first[3] == query, out

    # A SavedModel needs TensorFlow: one line, from the API and the command line.
    saved_model = os.path.join(root, "saved_model")
    os.makedirs(saved_model)
    open(os.path.join(saved_model, "saved_model.pb"), "wb").close()
    try:
        Embedder(saved_model)
        raise AssertionError("a SavedModel loaded without TensorFlow")
    except MissingDependencyError as error:
        assert "needs TensorFlow: pip install \\"keras-dml[tensorflow]\\"" in str(error), error
        assert "\\n" not in str(error)
    code, out, err = cli("search", saved_model, "--gallery", folder, "--query", query)
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("keras-dml: error:") and "needs TensorFlow" in err, err

    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("SERVING-RAN-WITHOUT-TENSORFLOW")
    """
)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_embed_evaluate_and_search_run_with_tensorflow_blocked(tmp_path, backend):
    result = run_blocked(tmp_path, backend, SERVING_RUN)
    assert "SERVING-RAN-WITHOUT-TENSORFLOW" in result.stdout, result.stderr[-3000:]
