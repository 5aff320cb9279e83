"""With an ONNX file, the pipeline's workers need no TensorFlow: it runs with `import tensorflow`
blocked (on JAX), and the store it writes equals the one the `.keras` model writes."""

import os
import textwrap

import numpy as np

from keras_dml.stores import StoreIndex
from tests.stores.gallery import make_gallery, skip_without
from tests.support.no_tensorflow import run_blocked

skip_without("apache_beam", "pymilvus", "onnxruntime")

from keras_dml.pipelines.embed import embed_images  # noqa: E402 (after the skips)

CODE = textwrap.dedent(
    """
    import sys
    from keras_dml.pipelines.embed import embed_images

    counts = embed_images("model.onnx", "photos", store="onnx.db", batch_size=8)
    assert counts["embedded"] == 15, counts
    assert "tensorflow" not in sys.modules
    print("embedded without tensorflow")
    """
)


def test_onnx_workers_need_no_tensorflow(tmp_path):
    model, folder = make_gallery(str(tmp_path))
    # The launcher exports the .keras model (`onnx_path`) and embeds with the ONNX file.
    onnx = str(tmp_path / "model.onnx")
    embed_images(model, folder, store=str(tmp_path / "keras.db"), onnx_path=onnx)
    result = run_blocked(tmp_path, "jax", CODE, cwd=tmp_path)
    assert "embedded without tensorflow" in result.stdout, result.stderr[-3000:]
    from_keras, from_onnx = (
        StoreIndex(str(tmp_path / "keras.db")),
        StoreIndex(
            str(tmp_path / "onnx.db"),
            model=model,  # the same weights: the fingerprint check passes
        ),
    )
    assert [os.path.relpath(i, tmp_path) for i in from_keras.ids] == from_onnx.ids
    np.testing.assert_allclose(from_keras.embeddings, from_onnx.embeddings, atol=1e-5)
