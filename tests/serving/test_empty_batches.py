"""An empty batch gets one answer on every path: an empty `[0, D]` float32 result.

`model.predict` on an empty batch used to crash inside Keras (`UnboundLocalError:
'batch_outputs'`), TensorFlow's convolutions failed on it in `model(x)`, `embed` said "received no
data" and the SavedModel signature refused it, while the ONNX graph returned `[0, D]`.
"""

import keras
import numpy as np
import pytest

from keras_dml.evaluation import embed
from keras_dml.methods import get_method, list_methods
from keras_dml.search import EmbeddingIndex
from keras_dml.serving import InputContractError
from tests.export.test_parity import convnet, digit_images

EMPTY = np.zeros((0, 32, 32, 3), np.float32)


@pytest.fixture(scope="module")
def model():
    return get_method("baseline").tiny_model(convnet())


def expect_empty(output, dim):
    output = keras.ops.convert_to_numpy(output)
    assert output.shape == (0, dim) and output.dtype == np.float32


@pytest.mark.parametrize("method", list_methods())
def test_every_method_embeds_an_empty_batch_as_zero_rows(method):
    model = get_method(method).tiny_model(convnet())
    expect_empty(model.predict(EMPTY, verbose=0), model.embedding_dim)
    expect_empty(model.predict_on_batch(EMPTY), model.embedding_dim)
    expect_empty(model(EMPTY), model.embedding_dim)
    expect_empty(model.predict(EMPTY.astype("uint8"), verbose=0), model.embedding_dim)


def test_an_empty_batch_of_another_size_is_still_refused(model):
    for run in (model.predict, model.predict_on_batch, model):
        with pytest.raises(InputContractError, match=r"\[N, 32, 32, 3\]"):
            run(np.zeros((0, 16, 16, 3), np.float32))


class EmptyStream(keras.utils.PyDataset):
    def __len__(self):
        return 0

    def __getitem__(self, index):
        raise IndexError(index)


def test_embed_gives_zero_rows_for_an_empty_array_pair_file_or_dataset(model, tmp_path):
    expect_empty(embed(model, EMPTY, verbose=False)[0], 16)
    embeddings, labels = embed(model, (EMPTY, np.zeros(0, "int64")), verbose=False)
    expect_empty(embeddings, 16)
    assert labels.shape == (0,)
    expect_empty(embed(model, EMPTY, verbose=False, out_path=tmp_path / "e.npy")[0], 16)
    assert np.load(tmp_path / "e.npy").shape == (0, 16)
    expect_empty(embed(model, EmptyStream(), verbose=False)[0], 16)


def test_index_search_of_no_queries_gives_no_rows(model):
    index = EmbeddingIndex.from_model(model, digit_images(4), labels=np.arange(4))
    result = index.search(EMPTY, k=2)
    assert result.indices.shape == (0, 2) and result.scores.shape == (0, 2)
