import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.models.abe import ABE
from keras_dml.models.mheads import MHeads
from keras_dml.visualization.attention import plot_attention
from tests.support.helpers import tiny_images

pytest.importorskip("matplotlib")


def convnet(seed=0):
    keras.utils.set_random_seed(seed)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def test_gradcam_maps_draw_with_plot_attention():
    pytest.importorskip("tf_keras_vis")
    from keras_dml.visualization.gradcam import gradcam_maps

    model = MHeads(convnet(), num_learners=2, embedding_dim=8)
    images = tiny_images(2)
    maps = np.stack([gradcam_maps(model, images, learner=k) for k in range(2)], axis=1)
    figure = plot_attention(model, images, maps=maps)
    overlays = [a.images[1] for a in figure.axes if len(a.images) == 2]
    assert len(overlays) == 4
    assert all(o.get_clim() == overlays[0].get_clim() for o in overlays)


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
