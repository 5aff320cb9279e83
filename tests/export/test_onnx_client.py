"""deployment/onnx_client.py: embeds a folder, answers queries, checks images, needs no TF."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
from PIL import Image

from keras_dml.export import export_onnx
from keras_dml.models import EmbeddingModel
from tests.export.test_parity import digit_images, tiny_backbone
from tests.support.paths import REPO_ROOT

REPO = Path(REPO_ROOT)
CLIENT = REPO / "deployment" / "onnx_client.py"


def load_client():
    spec = importlib.util.spec_from_file_location("onnx_client", CLIENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A uint8 ONNX model and a folder of mixed images (sizes, grayscale, RGBA)."""
    root = tmp_path_factory.mktemp("client")
    model = EmbeddingModel(tiny_backbone(), learner_dims=(8, 8))
    export_onnx(model, root / "model.onnx", input_dtype="uint8")
    images = digit_images(6).astype("uint8")
    folder = root / "images"
    (folder / "sub").mkdir(parents=True)
    for i, image in enumerate(images[:4]):
        Image.fromarray(image).save(folder / f"rgb_{i}.png")
    Image.fromarray(images[4][..., 0]).resize((50, 40)).save(folder / "sub" / "gray.png")
    rgba = np.concatenate([images[5], np.full((32, 32, 1), 255, np.uint8)], axis=-1)
    Image.fromarray(rgba).save(folder / "rgba.png")
    return model, root, folder, images


def test_embed_and_query_without_tensorflow(setup):
    model, root, folder, images = setup
    index = root / "index.npy"
    script = (
        "import sys, runpy\n"
        f"sys.argv = ['onnx_client.py', 'embed', '--model', {str(root / 'model.onnx')!r},\n"
        f"            '--images', {str(folder)!r}, '--output', {str(index)!r}]\n"
        "try:\n"
        f"    runpy.run_path({str(CLIENT)!r}, run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "for name in ('tensorflow', 'keras', 'keras_dml'):\n"
        "    assert name not in sys.modules, name + ' was imported'\n"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "grayscale image (L) converted to RGB" in result.stderr
    assert "alpha dropped" in result.stderr

    embeddings = np.load(index)
    paths = Path(str(index)[:-4] + ".paths.txt").read_text().split()
    assert embeddings.shape == (6, 16) and len(paths) == 6
    assert paths[:4] == [str(folder / f"rgb_{i}.png") for i in range(4)]
    # RGB images of the model's size embed exactly like the Keras model.
    expected = keras.ops.convert_to_numpy(model(images[:4].astype("float32")))
    np.testing.assert_allclose(embeddings[:4], expected, rtol=0, atol=1e-5)
    # RGBA: alpha dropped, identical to the RGB pixels.
    rgba_row = paths.index(str(folder / "rgba.png"))
    expected_rgba = keras.ops.convert_to_numpy(model(images[5:6].astype("float32")))
    np.testing.assert_allclose(embeddings[rgba_row], expected_rgba[0], rtol=0, atol=1e-5)

    result = subprocess.run(
        [sys.executable, str(CLIENT), "query", "--model", str(root / "model.onnx")]
        + ["--index", str(index), "--image", str(folder / "rgb_2.png"), "-k", "3"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3
    rank, score, path = lines[0].split("\t")
    assert rank == "1" and path == str(folder / "rgb_2.png") and float(score) > 0.9999


def test_prepare_checks_arrays(setup):
    client_module = load_client()
    _, root, _, images = setup
    client = client_module.EmbeddingClient(str(root / "model.onnx"))
    assert (client.height, client.width, client.channels) == (32, 32, 3)
    assert client.input_dtype is np.uint8
    options = client.session.get_session_options()
    assert options.intra_op_num_threads == os.cpu_count()

    assert client.prepare(images[0]).shape == (32, 32, 3)
    # PIL images are decoded and resized; arrays must already be [32, 32, 3] (the input
    # contract, keras_dml/serving/input_contract.py: arrays are never resized or converted).
    assert client.prepare(Image.fromarray(images[0][..., 0]).resize((20, 10))).shape == (32, 32, 3)
    for shape in ((32, 32, 1), (32, 32, 2), (10, 20, 3)):
        with pytest.raises(client_module.ClientError, match=r"\[N, 32, 32, 3\]"):
            client.prepare(np.zeros(shape, np.uint8))
    with pytest.raises(client_module.ClientError, match=r"\[H, W, C\] = \[32, 32, 3\]"):
        client.prepare(np.zeros((10, 20), np.float32))
    with pytest.raises(client_module.ClientError, match="got shape"):
        client.prepare(np.zeros((1, 32, 32, 3, 1), np.uint8))
    with pytest.raises(client_module.ClientError, match=r"\[0, 255\]"):
        client.prepare(np.full((32, 32, 3), 2.5, np.float32) - 3.0)
    with pytest.raises(client_module.ClientError, match="dtype"):
        client.prepare(np.zeros((32, 32, 3), bool))
    with pytest.raises(client_module.ClientError, match=r"\[N, H, W, C\]"):
        client.embed(np.zeros((32, 32, 3), np.uint8))
    batch = client.embed(images[:3])
    assert batch.shape == (3, 16) and batch.dtype == np.float32


def test_search_is_the_shared_exact_algorithm(monkeypatch):
    """The client loads keras_dml/search/exact_topk/ by path (no keras_dml import) and its
    result equals the plain-NumPy fallback and a naive sort, ties ordered by row."""
    client_module = load_client()
    shared = client_module.load_shared_search()
    assert shared is not None and shared.__name__ == "_keras_dml_exact_topk"
    package = REPO / "keras_dml" / "search" / "exact_topk"
    assert Path(shared.__file__).resolve() == package / "__init__.py"
    rng = np.random.default_rng(0)
    index = rng.integers(-1, 2, size=(50, 4)).astype("float32")  # exact products: real ties
    queries = rng.integers(-1, 2, size=(6, 4)).astype("float32")
    scores, ids = client_module.nearest(index, queries, 7)
    expected = [sorted(range(50), key=lambda j: (-float(q @ index[j]), j))[:7] for q in queries]
    np.testing.assert_array_equal(ids, expected)
    monkeypatch.setattr(client_module, "load_shared_search", lambda: None)
    fallback_scores, fallback_ids = client_module.nearest(index, queries, 7)
    np.testing.assert_array_equal(fallback_ids, ids)
    np.testing.assert_array_equal(fallback_scores, scores)


def test_query_reads_a_saved_keras_dml_index(setup, tmp_path):
    """An index folder saved by keras_dml.search answers the client's query (names, classes)."""
    from keras_dml.search import EmbeddingIndex

    _, root, folder, images = setup
    gallery = tmp_path / "gallery"
    for name in ("zero", "one"):
        (gallery / name).mkdir(parents=True)
    for i, image in enumerate(images):
        Image.fromarray(image).save(gallery / ("zero" if i % 2 == 0 else "one") / f"{i}.png")
    index = EmbeddingIndex.from_model(str(root / "model.onnx"), gallery)
    index.save(tmp_path / "saved")
    result = subprocess.run(
        [sys.executable, str(CLIENT), "query", "--model", str(root / "model.onnx")]
        + ["--index", str(tmp_path / "saved"), "--image", str(gallery / "one" / "3.png")]
        + ["-k", "2"],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rank, score, label, path = result.stdout.strip().splitlines()[0].split("\t")
    assert (rank, label, path) == ("1", "one", str(gallery / "one" / "3.png"))
    assert float(score) > 0.9999


def test_missing_model_is_reported(tmp_path, capsys):
    client_module = load_client()
    code = client_module.main(
        ["embed", "--model", str(tmp_path / "nope.onnx"), "--images", str(tmp_path)]
        + ["--output", str(tmp_path / "e.npy")]
    )
    assert code == 1
    assert "ONNX model not found" in capsys.readouterr().err


def test_shared_search_copied_next_to_the_client_needs_only_numpy(tmp_path):
    """The serving-machine layout: the client and a copy of the exact_topk folder side by side.
    The copy is the one loaded, its relative imports resolve, and neither keras_dml, keras nor
    TensorFlow is imported (the package stays NumPy-only)."""
    shutil.copy(CLIENT, tmp_path / "onnx_client.py")
    shutil.copytree(
        REPO / "keras_dml" / "search" / "exact_topk",
        tmp_path / "exact_topk",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    script = (
        "import sys, runpy\n"
        "import numpy as np\n"
        f"client = runpy.run_path({str(tmp_path / 'onnx_client.py')!r})\n"
        "shared = client['load_shared_search']()\n"
        "assert shared is client['load_shared_search'](), 'loaded twice'\n"
        "print(shared.__file__)\n"
        "index = np.eye(5, dtype='float32')\n"
        "scores, ids = client['nearest'](index, index[[3, 1]], 2)\n"
        "print(ids.tolist())\n"
        "for name in ('tensorflow', 'keras', 'keras_dml'):\n"
        "    assert name not in sys.modules, name + ' was imported'\n"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded, ids = result.stdout.strip().splitlines()
    assert Path(loaded).resolve() == (tmp_path / "exact_topk" / "__init__.py").resolve()
    assert ids == "[[3, 0], [1, 0]]"
