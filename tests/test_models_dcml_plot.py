import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.models.dcml import DCML
from keras_dml.visualization.compositor_weights import plot_compositor_weights
from tests.helpers import tiny_images

pytest.importorskip("matplotlib")


def test_plot_from_an_array(tmp_path):
    weights = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], dtype="float32")
    path = tmp_path / "sub" / "weights.png"
    plotted = plot_compositor_weights(weights, str(path))
    np.testing.assert_array_equal(plotted, weights)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_from_a_model(tmp_path):
    keras.utils.set_random_seed(0)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    model = DCML(backbone, num_learners=2, learner_dim=8, num_compositors=3)
    images = tiny_images(6)
    plotted = plot_compositor_weights(model, str(tmp_path / "w.png"), images=images)
    assert plotted.shape == (3, 2)
    np.testing.assert_allclose(plotted, model.compositor_weights(images), atol=1e-6)
    with pytest.raises(ValueError, match="images"):
        plot_compositor_weights(model, str(tmp_path / "x.png"))


@pytest.mark.parametrize("bad", [np.zeros((3,)), np.full((2, 2), np.nan), np.zeros((0, 2))])
def test_invalid_weights(tmp_path, bad):
    with pytest.raises(ValueError, match="num_compositors"):
        plot_compositor_weights(bad, str(tmp_path / "bad.png"))
