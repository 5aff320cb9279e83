import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.models.abe import ABE, MHeads
from keras_dml.visualization.attention import plot_attention
from tests.helpers import tiny_images

pytest.importorskip("matplotlib")


def convnet(seed=0):
    keras.utils.set_random_seed(seed)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def test_plot_attention_writes_a_png(tmp_path):
    model = ABE(convnet(), num_learners=3, embedding_dim=12)
    path = plot_attention(model, tiny_images(2), str(tmp_path / "grid" / "attention.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    plot_attention(model, tiny_images(2), str(tmp_path / "channel.png"), reduce=4)


def test_plot_attention_with_given_maps_and_errors(tmp_path):
    model = MHeads(convnet(), num_learners=2, embedding_dim=8)
    images = tiny_images(2)
    maps = np.random.default_rng(0).random((2, 2, 32, 32))
    plot_attention(model, images, str(tmp_path / "maps.png"), maps=maps)
    with pytest.raises(ValueError, match="attention masks"):
        plot_attention(model, images, str(tmp_path / "x.png"))
    with pytest.raises(ValueError, match="maps"):
        plot_attention(model, images, str(tmp_path / "x.png"), maps=maps[:, :, :16])


@pytest.mark.parametrize("layer", ["features", "attended", "spatial"])
def test_gradcam_maps_of_an_abe_learner(layer):
    pytest.importorskip("tf_keras_vis")
    from keras_dml.visualization.gradcam import gradcam_maps

    model = ABE(convnet(), num_learners=2, embedding_dim=16)
    images = tiny_images(3)
    maps = gradcam_maps(model, images, learner=1, layer=layer)
    assert maps.shape == (3, 32, 32) and maps.dtype == np.float32
    assert maps.min() >= 0.0 and maps.max() <= 1.0
    target = keras.ops.convert_to_numpy(model.learner_embeddings(images[:1])[1])[0]
    maps = gradcam_maps(model, images, learner=1, layer=layer, target=target)
    assert maps.shape == (3, 32, 32) and np.all(np.isfinite(maps))


def test_gradcam_maps_of_an_mheads_learner():
    pytest.importorskip("tf_keras_vis")
    from keras_dml.visualization.gradcam import gradcam_maps

    model = MHeads(convnet(), num_learners=2, embedding_dim=8)
    maps = gradcam_maps(model, tiny_images(2), learner=0)
    assert maps.shape == (2, 32, 32) and maps.min() >= 0.0 and maps.max() <= 1.0
    with pytest.raises(ValueError, match="target"):
        gradcam_maps(model, tiny_images(2), learner=0, layer="attended")
