"""Model zoo: pretrained models by name, every byte verified against its card."""

from keras_dml.zoo.cache import cache_root, download, download_all, mirror_url
from keras_dml.zoo.card import ModelCard, read_card
from keras_dml.zoo.errors import (
    CardValidationError,
    DownloadError,
    IntegrityError,
    ModelNotPublishedError,
    UnknownModelError,
    UnsafeFormatError,
    ZooError,
)
from keras_dml.zoo.hub_loading import load_hub_preset
from keras_dml.zoo.hub_preset import convert_zoo_entry, push_hub_preset, save_hub_preset
from keras_dml.zoo.integrity import sha256_file, verify_file
from keras_dml.zoo.loading import load, load_with_card, resolve_model
from keras_dml.zoo.preset import save_preset
from keras_dml.zoo.publish import publish_run
from keras_dml.zoo.registry import card_directories, get_card, list_models
from keras_dml.zoo.schema import validate_card

__all__ = [
    "CardValidationError",
    "DownloadError",
    "IntegrityError",
    "ModelCard",
    "ModelNotPublishedError",
    "UnknownModelError",
    "UnsafeFormatError",
    "ZooError",
    "cache_root",
    "card_directories",
    "convert_zoo_entry",
    "download",
    "download_all",
    "get_card",
    "list_models",
    "load",
    "load_hub_preset",
    "load_with_card",
    "mirror_url",
    "publish_run",
    "push_hub_preset",
    "read_card",
    "resolve_model",
    "save_hub_preset",
    "save_preset",
    "sha256_file",
    "validate_card",
    "verify_file",
]
