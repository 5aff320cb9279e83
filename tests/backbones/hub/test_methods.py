"""Every method builds its heads on a keras-hub CNN and ViT, and saves and loads back."""

import keras
import numpy as np
import pytest

pytest.importorskip("keras_hub")

from keras_dml import backbones  # noqa: E402
from keras_dml.methods import get_method, list_methods  # noqa: E402

IMAGES = np.random.default_rng(0).uniform(0, 255, (3, 32, 32, 3)).astype("float32")


@pytest.mark.parametrize("family", ["resnet", "vit"])
@pytest.mark.parametrize("method", list_methods())
def test_every_method_builds_on_the_backbone_and_loads_back(method, family, presets, tmp_path):
    keras.utils.set_random_seed(0)
    backbone = backbones.get("keras_hub", preset=presets[family], input_shape=(32, 32, 3))
    model = get_method(method).tiny_model(backbone)
    embeddings = model.predict(IMAGES, verbose=0)
    assert np.isfinite(embeddings).all() and embeddings.shape[0] == 3
    path = str(tmp_path / "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True, compile=False)
    np.testing.assert_allclose(reloaded.predict(IMAGES, verbose=0), embeddings, atol=1e-5)


def test_abe_on_a_vit_masks_the_stage3_token_map(presets):
    backbone = backbones.get("keras_hub", preset=presets["vit"], input_shape=(32, 32, 3))
    model = get_method("abe").tiny_model(backbone)
    assert (model.branch_point, model.trunk_end) == ("stage3", "stage4")
    assert model.spatial_extractor.output_shape == (None, 4, 4, 32)


def test_a_missing_split_point_is_refused_in_one_line(presets):
    backbone = backbones.get("keras_hub", preset=presets["vit"], input_shape=(32, 32, 3))
    with pytest.raises(ValueError, match="no layer or split point named 'stage5'") as error:
        spec = get_method("abe")
        spec.model(backbone, **{**spec.tiny, "branch_point": "stage5"})
    assert "\n" not in str(error.value)


def test_abe_trunk_on_a_resnet_runs_its_strided_stage_at_stride_1(presets):
    backbone = backbones.get("keras_hub", preset=presets["resnet"], input_shape=(32, 32, 3))
    model = get_method("abe").tiny_model(backbone)
    # keras-hub pads explicitly before each strided 3x3 convolution: at stride 1 it is `same`.
    assert model.attention_trunk.output_shape[1:3] == model.spatial_extractor.output_shape[1:3]


@pytest.mark.parametrize("layer", ["features", "attended"])
def test_grad_cam_reads_a_vit_token_map(presets, layer):
    from keras_dml.visualization.gradcam import gradcam_maps

    backbone = backbones.get("keras_hub", preset=presets["vit"], input_shape=(32, 32, 3))
    model = get_method("abe").tiny_model(backbone)
    maps = gradcam_maps(model, IMAGES, learner=1, layer=layer)
    assert maps.shape == (3, 32, 32) and np.isfinite(maps).all()
    assert (maps.max(axis=(1, 2)) > maps.min(axis=(1, 2))).all()  # not a flat map
