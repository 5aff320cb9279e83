"""The table of docs/reliability.md: every serving path fed every kind of input, in one test.

Each cell of the page's table is what the path does with a batch of two images whose first one
is broken (or an empty batch); this test measures every cell and compares with the page.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from keras_dml.evaluation import embed
from keras_dml.export import export_onnx, export_saved_model
from keras_dml.methods import get_method
from keras_dml.search import EmbeddingIndex
from keras_dml.serving import InputContractError
from tests.export.test_parity import convnet, digit_images

pytestmark = pytest.mark.tf_only("feeds the SavedModel and tf2onnx exports")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
HEADING = "## What each path does with each input"
PATHS = ("model.predict", "SavedModel", "ONNX", "embed()", "EmbeddingIndex", "CLI search")


def arrays():
    """Input kind -> a batch (row 0 broken where the kind is per image)."""
    good = digit_images(2, offset=4)
    batches = {}
    for name, value in (("NaN pixel", np.nan), ("pixel > 255", 300.0), ("negative pixel", -1.0)):
        batch = good.copy()
        batch[0, 3, 5, 1] = value
        batches[name] = batch
    batches["[0, 1] floats"] = good / 255.0
    batches["empty batch"] = np.zeros((0, 32, 32, 3), np.float32)
    batches["wrong size"] = np.kron(good, np.ones((1, 2, 2, 1), "float32"))
    batches["wrong dtype"] = good > 128
    return batches


def files(folder):
    """Input kind -> the `--query` of `keras-dml search` (float TIFFs keep their values)."""
    from PIL import Image

    good = digit_images(1, offset=4)[0, ..., 0]
    written = {}
    for name, value in (("NaN pixel", np.nan), ("negative pixel", -1.0)):
        pixels = good.copy()
        pixels[3, 5] = value
        written[name] = ("tif", Image.fromarray(pixels))
    written["pixel > 255"] = ("png", Image.fromarray((good * 4).astype("uint16")))
    written["[0, 1] floats"] = ("tif", Image.fromarray(good / 255.0))
    written["wrong size"] = ("png", Image.fromarray(good.astype("uint8")).resize((64, 64)))
    written["wrong dtype"] = ("png", Image.fromarray(good > 128))
    paths = {}
    for i, (name, (suffix, image)) in enumerate(written.items()):
        image.save(folder / f"query{i}.{suffix}")
        paths[name] = str(folder / f"query{i}.{suffix}")
    (folder / "empty").mkdir()
    paths["empty batch"] = str(folder / "empty")
    return paths


def outcome(run, host):
    """What `run()` did: a NaN first row, a refusal, an empty result or an embedding (warned)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            output = np.asarray(run())
        except Exception as error:  # noqa: BLE001 (the graphs raise their runtime's errors)
            if host:  # the host paths refuse in one line with the contract's own error
                assert isinstance(error, InputContractError) and "\n" not in str(error), error
            return "refused"
    if output.shape[0] == 0:
        return "empty result"
    if np.isnan(output[0]).all() and np.isfinite(output[1]).all():
        return "NaN row"
    assert np.isfinite(output).all()
    warned = any("scaled to [0, 1]" in str(w.message) for w in caught)
    return "embedded, warned" if warned else "embedded, no warning"


def cli_outcome(main, argv, query, capsys):
    code = main([*argv, "--query", query, "-k", "1"])
    out, err = capsys.readouterr()
    if code != 0:
        assert out == "" and len(err.strip().splitlines()) == 1, err
        return "refused"
    if "scaled to [0, 1]" in err:
        return "embedded, warned"
    if len(out.splitlines()) == 0:
        return "empty result"
    assert out.splitlines()[1].split("\t")[2] == "4", out  # the original digit's class
    return "embedded, no warning"


def documented_table():
    """The page's table: {(input kind, path): cell}."""
    text = PAGE.read_text(encoding="utf-8").split(HEADING, 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("|")]
    header = [cell.strip(" `") for cell in rows[0].strip("|").split("|")]
    assert tuple(header[1:]) == PATHS, header
    table = {}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for path, cell in zip(PATHS, cells[1:]):
            table[cells[0], path] = cell
    return table


def test_every_path_does_with_every_input_what_the_reliability_page_says(tmp_path, capsys):
    import onnxruntime
    import tensorflow as tf

    from keras_dml_cli import main

    model = get_method("baseline").tiny_model(convnet())
    export_saved_model(model, str(tmp_path / "saved_model"))
    export_onnx(model, str(tmp_path / "model.onnx"))
    serve = tf.saved_model.load(str(tmp_path / "saved_model")).signatures["serving_default"]
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"))
    index = EmbeddingIndex.from_model(model, digit_images(8), labels=np.arange(8))
    model.save(tmp_path / "model.keras")
    for i, image in enumerate(digit_images(8)):
        from PIL import Image

        (tmp_path / "gallery" / str(i)).mkdir(parents=True)
        Image.fromarray(image.astype("uint8")).save(tmp_path / "gallery" / str(i) / "digit.png")
    argv = ["search", str(tmp_path / "model.keras"), "--gallery", str(tmp_path / "gallery")]
    queries = files(tmp_path)

    runs = {
        "model.predict": (False, lambda x: model.predict(x, verbose=0)),
        "SavedModel": (False, lambda x: serve(images=tf.constant(x))["embedding"]),
        "ONNX": (False, lambda x: session.run(None, {"images": x})[0]),
        "embed()": (True, lambda x: embed(model, x, batch_size=1, verbose=False)[0]),
        "EmbeddingIndex": (True, lambda x: index.search(x, k=1, batch_size=1).indices),
    }
    measured = {}
    for kind, batch in arrays().items():
        for path, (host, run) in runs.items():
            measured[kind, path] = outcome(lambda: run(batch), host)  # noqa: B023 (run at once)
        measured[kind, "CLI search"] = cli_outcome(main, argv, queries[kind], capsys)
    documented = documented_table()
    assert set(documented) == set(measured)
    # Cells name the outcome first; what follows (in parentheses) explains it.
    differ = {
        key: (re.sub(r"\s*\(.*", "", documented[key]), value)
        for key, value in measured.items()
        if re.sub(r"\s*\(.*", "", documented[key]) != value
    }
    assert differ == {}
