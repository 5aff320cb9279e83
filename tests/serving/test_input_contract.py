"""One input contract for every serving path: every bad input, every path.

Before it, an all-NaN image got an ordinary finite embedding from `model.predict`, `embed`,
`EmbeddingIndex.search` and the SavedModel signature (graph-mode max pooling turns NaN into the
lowest float), [0, 1]-scaled floats were served silently, a 64x64 copy of a 32 px image was
searched (cosine 0.52 to the right embedding, wrong neighbours) and a 1-channel array failed
with a raw TensorFlow graph error. The rule is in `keras_dml/serving/input_contract.py`.
"""

import re
import warnings

import keras
import numpy as np
import pytest

from keras_dml.evaluation import embed, evaluate
from keras_dml.methods import get_method, list_methods
from keras_dml.search import EmbeddingIndex
from keras_dml.serving import InputContractError
from tests.export.test_parity import convnet, digit_images

SIZE = 32


def bad_inputs():
    """name -> a batch of two images breaking the contract (row 0 broken where it is per row)."""
    good = digit_images(2, offset=4)
    nan, inf = good.copy(), good.copy()
    nan[0] = np.nan
    inf[0, 3, 5, 1] = np.inf
    return {
        "nan": nan,
        "inf": inf,
        "unit_scaled": good / 255.0,
        "wrong_size": np.kron(good, np.ones((1, 2, 2, 1), "float32")),
        "one_channel": good[..., :1],
        "wrong_dtype": good > 128,
    }


BAD = sorted(bad_inputs())
# What the host-side paths (NumPy before the model) do with each bad input.
HOST_REFUSALS = {
    "nan": "Image 0 of the batch has NaN or infinite pixels",
    "inf": "Image 0 of the batch has NaN or infinite pixels",
    "wrong_size": r"must be \[N, 32, 32, 3\] .* never resized",
    "one_channel": r"must be a batch \[N, 32, 32, 3\] of RGB pixels; got shape \(\d, 32, 32, 1\)",
    "wrong_dtype": "got dtype bool",
}
UNIT_WARNING = r"look scaled to \[0, 1\].* expect raw pixels in \[0, 255\]"


@pytest.fixture(scope="module")
def model():
    return get_method("baseline").tiny_model(convnet())


@pytest.fixture(scope="module")
def index(model):
    return EmbeddingIndex.from_model(model, digit_images(8), labels=np.arange(8))


def one_line(error):
    return "\n" not in str(error).strip()


def has_contract_line(error):
    """Inside `model.predict` the contract's line arrives wrapped (Keras adds the call's
    arguments, a traced TensorFlow graph its node); the line itself is whole."""
    pattern = r"Images must be (a batch )?\[N, 32, 32, 3\].*(resize|RGB)|Images .*dtype bool"
    return any(re.search(pattern, line) for line in str(error).splitlines())


def expect_host_behaviour(name, run):
    """Runs `run()` on the bad input `name`: a one-line refusal, or one warning for [0, 1]."""
    if name == "unit_scaled":
        with pytest.warns(UserWarning, match=UNIT_WARNING) as caught:
            run()
        assert len([w for w in caught if "scaled to [0, 1]" in str(w.message)]) == 1
        return
    with pytest.raises(InputContractError, match=HOST_REFUSALS[name]) as error:
        run()
    assert one_line(error.value)


@pytest.mark.parametrize("name", BAD)
def test_embed_applies_the_contract(model, name):
    images = bad_inputs()[name]
    # Two batches of one image: the [0, 1] warning is shown once per call, not per batch.
    expect_host_behaviour(name, lambda: embed(model, images, batch_size=1, verbose=False))


@pytest.mark.parametrize("name", BAD)
def test_index_search_and_add_apply_the_contract(index, name):
    images = bad_inputs()[name]
    expect_host_behaviour(name, lambda: index.search(images, k=1, batch_size=1))
    expect_host_behaviour(name, lambda: EmbeddingIndex(model=index.embedder).add(images))


@pytest.mark.parametrize("name", BAD)
def test_model_predict_gives_nan_rows_or_refuses(model, name):
    images = bad_inputs()[name]
    if name in ("nan", "inf"):
        output = model.predict(images, verbose=0)
        assert np.isnan(output[0]).all()
        np.testing.assert_allclose(output[1], model.predict(images[1:], verbose=0)[0], atol=1e-6)
    elif name == "unit_scaled":  # valid pixels to the graph; the array is warned about once
        with pytest.warns(UserWarning, match=UNIT_WARNING) as caught:
            assert np.isfinite(model.predict(images, verbose=0)).all()
        # Once, whatever else the backend warns about.
        assert sum(bool(re.search(UNIT_WARNING, str(w.message))) for w in caught) == 1
    else:
        with pytest.raises(Exception, match=r"\[N, 32, 32, 3\]|dtype bool") as error:
            model.predict(images, verbose=0)
        assert has_contract_line(error.value)


def test_search_result_of_a_resized_copy_is_the_original(index):
    """What the refusal asks for: resizing the 64 px copy gives back the right neighbour."""
    big = bad_inputs()["wrong_size"]
    resized = keras.ops.convert_to_numpy(keras.ops.image.resize(big, (SIZE, SIZE)))
    assert index.search(resized, k=1).indices.ravel().tolist() == [4, 5]


@pytest.mark.parametrize("method", list_methods())
def test_every_method_returns_nan_rows_for_nonfinite_and_out_of_range_images(method):
    """Each model family's `call` marks the row (ABE, BIER and H-D&C have their own `call`)."""
    model = get_method(method).tiny_model(convnet())
    images = bad_inputs()["inf"]
    output = model.predict(images, verbose=0)
    assert np.isnan(output[0]).all() and np.isfinite(output[1]).all()
    for value in (255.5, -0.5):
        images = digit_images(2)
        images[0, 7, 2, 0] = value
        output = model.predict(images, verbose=0)
        assert np.isnan(output[0]).all() and np.isfinite(output[1]).all(), value
    with pytest.raises(Exception, match=r"\[N, 32, 32, 3\]") as error:
        model.predict(bad_inputs()["wrong_size"], verbose=0)
    assert has_contract_line(error.value)


def test_consumers_refuse_nan_embeddings(model, index):
    output = model.predict(bad_inputs()["nan"], verbose=0)
    with pytest.raises(ValueError, match="NaN or Inf") as error:
        evaluate(output, np.array([0, 0]))
    assert one_line(error.value)
    with pytest.raises(ValueError, match="NaN or Inf") as error:
        index.search(output, k=1)
    assert one_line(error.value)
    with pytest.raises(ValueError, match="NaN or Inf") as error:
        EmbeddingIndex().add(output)
    assert one_line(error.value)


def test_good_inputs_pass_without_warning(index):
    images = digit_images(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Keras' torch backend warns about NumPy 2's `__array__(copy=...)`; not the contract's.
        warnings.simplefilter("ignore", DeprecationWarning)
        assert index.search(images, k=1).indices.ravel().tolist() == [0, 1, 2]
        assert index.search(images.astype("uint8"), k=1).indices.ravel().tolist() == [0, 1, 2]
        assert index.search(np.zeros((1, SIZE, SIZE, 3), "float32"), k=1).indices.shape == (1, 1)


def file_inputs(folder):
    """The bad inputs as files for `keras-dml search`: float TIFFs keep NaN, Inf and [0, 1]
    values (they used to be decoded to black), a 64 px and a grayscale PNG are decoded and
    resized (the file rule), a 16-bit PNG holds values above 255."""
    from PIL import Image

    good = digit_images(1, offset=4)[0]
    nan, inf = good[..., 0].copy(), good[..., 0].copy()
    nan[:] = np.nan
    inf[3, 5] = np.inf
    images = {
        "nan.tif": Image.fromarray(nan),
        "inf.tif": Image.fromarray(inf),
        "unit_scaled.tif": Image.fromarray(good[..., 0] / 255.0),
        "wrong_size.png": Image.fromarray(good.astype("uint8")).resize((64, 64)),
        "one_channel.png": Image.fromarray(good[..., 0].astype("uint8")),
        "sixteen_bit.png": Image.fromarray((good[..., 0] * 4).astype("uint16")),
    }
    for name, image in images.items():
        image.save(folder / name)
    return {name.split(".")[0]: str(folder / name) for name in images}


FILE_OUTCOMES = {
    "nan": "error: Image 0 of the batch has NaN or infinite pixels",
    "inf": "error: Image 0 of the batch has NaN or infinite pixels",
    "unit_scaled": r"warning: Image values lie in \[0, [0-9.]+\]: the images look scaled",
    "wrong_size": None,  # resized: the original image (row 4) is the nearest neighbour
    "one_channel": None,  # converted to RGB: the original image again
    "sixteen_bit": r"error: Images must be raw pixels in \[0, 255\]; got values in \[0, 1020\]",
}


@pytest.fixture(scope="module")
def cli_gallery(model, tmp_path_factory):
    from PIL import Image

    root = tmp_path_factory.mktemp("cli")
    model.save(root / "model.keras")
    for i, image in enumerate(digit_images(8)):
        (root / "gallery" / str(i)).mkdir(parents=True)
        Image.fromarray(image.astype("uint8")).save(root / "gallery" / str(i) / "digit.png")
    return root, file_inputs(root)


@pytest.mark.parametrize("name", sorted(FILE_OUTCOMES))
def test_search_cli_applies_the_contract_to_files(cli_gallery, name, capsys):
    from keras_dml_cli import main

    root, queries = cli_gallery
    argv = ["search", str(root / "model.keras"), "--gallery", str(root / "gallery")]
    code = main([*argv, "--query", queries[name], "-k", "1"])
    out, err = capsys.readouterr()
    expected = FILE_OUTCOMES[name]
    if expected is None:
        assert code == 0
        assert out.splitlines()[1].split("\t")[2] == "4"  # the class of the original digit
    elif name == "unit_scaled":
        assert code == 0 and len(out.splitlines()) == 2  # embedded as given, after the warning
    else:
        assert code != 0 and out == ""
    if expected is not None:
        assert len(err.strip().splitlines()) == 1
        assert re.match(f"keras-dml: {expected}", err.strip())
    else:
        assert err == ""


def test_search_cli_as_a_process_refuses_a_nan_file_in_one_line(cli_gallery):
    import os
    import subprocess
    import sys

    root, queries = cli_gallery
    command = [sys.executable, "-m", "keras_dml_cli", "search", str(root / "model.keras")]
    command += ["--gallery", str(root / "gallery"), "--query", queries["nan"]]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    assert result.returncode != 0 and result.stdout == ""
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("keras-dml: error: Image 0 of the batch has NaN or infinite pixels")
    )


@pytest.mark.parametrize("name", ["wrong_size", "one_channel", "wrong_dtype"])
def test_a_refused_predict_leaves_the_model_intact(name):
    """Keras' JAX `predict` lifts the weights out of the model before tracing `call`: a
    refusal raised there used to leave a model that could not predict again."""
    fresh = get_method("baseline").tiny_model(convnet())
    good = digit_images(2)
    before = fresh.predict(good, verbose=0)
    with pytest.raises(InputContractError):
        fresh.predict(bad_inputs()[name], verbose=0)
    np.testing.assert_allclose(fresh.predict(good, verbose=0), before, atol=1e-6)


# One method per `call` that serves the output (EnsembleModel, ABE's family, BIER, H-D&C).
@pytest.mark.parametrize("method", ["baseline", "abe", "bier", "hdc"])
def test_training_embeds_out_of_range_pixels_and_inference_marks_them(method):
    """Augmentation may move pixels slightly out of [0, 255]: `fit` trains on them (finite
    loss); only inference and the exported graphs give such an image a NaN row."""
    from keras_dml.losses import ContrastiveLoss
    from tests.support.helpers import tiny_labels

    keras.utils.set_random_seed(0)
    spec = get_method(method)
    model = spec.tiny_model(convnet())
    loss = None if method in ("abe", "hdc") else ContrastiveLoss()  # their own by default
    model.compile(optimizer=keras.optimizers.SGD(1e-4), loss=loss)
    images = digit_images(8)
    images[:, 0, 0, :] = 256.0
    images[:, 1, 1, :] = -1.0
    history = model.fit(images, tiny_labels(8), batch_size=8, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
    assert np.isnan(model.predict(images[:2], verbose=0)).all()
