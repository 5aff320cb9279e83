"""Local keras-hub preset folders (a 4-stage ResNet, a 4-block ViT), built once per session."""

import pytest

pytest.importorskip("keras_hub")

from tests.support.hub_presets import resnet_preset, vit_preset  # noqa: E402


@pytest.fixture(scope="session")
def resnet_folder(tmp_path_factory):
    return resnet_preset(tmp_path_factory.mktemp("hub") / "resnet")


@pytest.fixture(scope="session")
def vit_folder(tmp_path_factory):
    return vit_preset(tmp_path_factory.mktemp("hub") / "vit")


@pytest.fixture(scope="session")
def presets(resnet_folder, vit_folder):
    return {"resnet": resnet_folder, "vit": vit_folder}
