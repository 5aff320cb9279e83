import glob
import os

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.methods import get_method
from keras_dml.models.dcml import DCML
from tests.support.configs import config_file_dict
from tests.support.helpers import tiny_images, tiny_labels
from tests.support.paths import REPO_ROOT

DCML_SPEC = get_method("dcml")
CONFIG_DIR = os.path.join(REPO_ROOT, "recipes", "configs")
CONFIGS = sorted(glob.glob(os.path.join(CONFIG_DIR, "dcml_*.json")))


def test_every_paper_dataset_has_a_config():
    names = {os.path.basename(path) for path in CONFIGS}
    for dataset in ("cub200", "cars196", "sop", "fashion_mnist"):
        assert f"dcml_{dataset}.json" in names


@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_configs_build_the_model_they_describe(path):
    config = config_file_dict(path)
    assert config["method"] == DCML_SPEC.name == "dcml"
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))  # the model part, CPU-sized
    model = DCML_SPEC.build(config, backbone, {})
    assert isinstance(model, DCML)
    assert model.num_compositors == config["model"]["num_compositors"]
    assert model.learner_dims == (config["model"]["learner_dim"],) * 4
    assert model.dis_loss.get_config()["beta"] == config["loss"]["beta"]
    if config["dataset"] != "fashion_mnist":  # Sec. 4.2 + the authors' optimisation settings
        assert config["backbone"]["name"] == "resnet50"
        assert (config["batch_size"], config["m_per_class"]) == (100, 2)
        assert config["optimizer"]["learning_rate"] == 1e-5
        assert config["optimizer"]["weight_decay"] == 4e-4
        assert model.lambda_reinforce == 0.05 and set(model.lambda_subtask) == {1.0}


def test_fashion_mnist_recipe_compiles_and_trains_one_step():
    config = config_file_dict(os.path.join(CONFIG_DIR, "dcml_fashion_mnist.json"))
    size = config["image_size"]
    keras.utils.set_random_seed(0)
    model = DCML_SPEC.build(config, backbones.get("convnet", input_shape=(size, size, 3)), {})
    DCML_SPEC.compile(config, model)
    history = model.fit(tiny_images(8, size), tiny_labels(8), batch_size=8, verbose=0)
    assert np.isfinite(history.history["subtask_loss"][-1])


def test_compile_hook_rejects_method_options():
    config = config_file_dict(os.path.join(CONFIG_DIR, "dcml_fashion_mnist.json"))
    config["method_options"] = {"unknown": 1}
    model = DCML_SPEC.build(config, backbones.get("convnet", input_shape=(32, 32, 3)), {})
    with pytest.raises(ValueError, match="method_options"):
        DCML_SPEC.compile(config, model)
