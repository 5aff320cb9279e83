"""Card schema validation, card discovery, listing and unknown-name suggestions."""

import copy
import json

import pytest

from keras_dml import zoo
from keras_dml.zoo import registry
from tests.zoo.test_httpserver import file_entry, isolate_zoo, make_card, write_card

DATA = b"tiny model bytes"


@pytest.fixture
def cards(monkeypatch, tmp_path):
    directory, _ = isolate_zoo(monkeypatch, tmp_path)
    return directory


def _valid(name="tiny"):
    return make_card(name, [file_entry("model.keras", DATA, url="https://example.org/m.keras")])


def _set(card, dotted, value):
    target = card
    *parents, last = dotted.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is _DELETE:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return card


_DELETE = object()
BAD_CARDS = [
    ("name", _DELETE, "'name' is missing"),
    ("name", "Tiny Model", "'name' must be lowercase"),
    ("schema_version", 2, "'schema_version' must be 1"),
    ("status", "draft", "'status' must be one of"),
    ("sha256", "oops", "'sha256' is not a known card field"),
    ("files.0.sha256", "ABC", "'files[0].sha256' must be 64 lowercase hex"),
    ("files.0.sha265", "0" * 64, "'files[0].sha265' is not a known file key"),
    ("files.0.size", -1, "'files[0].size' must be a byte count"),
    ("files.0.size", True, "'files[0].size' must be a byte count"),
    ("files.0.url", "ftp://example.org/m.keras", "'files[0].url' must be an http(s) URL"),
    ("files.0.filename", "../m.keras", "'files[0].filename' must be a plain file name"),
    ("files.0.path", "/etc/passwd", "'files[0].path' must be a path relative"),
    ("files.0.path", "../../secret.keras", "'files[0].path' must be a path relative"),
    ("model.file", "other.keras", "'model.file' names 'other.keras', which is not listed"),
    ("model.file", "model.h5", "'model.file' must name a '.keras' file"),
    ("model", {"config": {"class_name": "Sequential"}}, "needs exactly 'config' and 'weights'"),
    ("metrics.command", _DELETE, "'metrics.command' is missing"),
    ("metrics.values", {}, "'metrics.values' is empty"),
    ("metrics.values", {"recall@1": "high"}, "'metrics.values.recall@1' must be a number"),
    ("metrics", _DELETE, "'metrics' is missing"),
    ("preprocessing.input_size", [224], "'preprocessing.input_size' must be [height, width]"),
    ("preprocessing.pixel_range", [1, 0], "'preprocessing.pixel_range' must be [low, high]"),
    ("training.protocol", _DELETE, "'training.protocol' is missing"),
    ("license", "", "'license' must be a non-empty string"),
    ("embedding_dim", 0, "'embedding_dim' must be an int >= 1"),
]


@pytest.mark.parametrize("dotted, value, message", BAD_CARDS)
def test_invalid_card_names_file_and_field(cards, dotted, value, message):
    path = write_card(cards, _set(_valid(), dotted, value), filename="tiny.json")
    with pytest.raises(zoo.CardValidationError) as info:
        zoo.get_card("tiny")
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_not_published_rules(cards):
    card = _valid()
    card["status"] = "not published"
    del card["metrics"]
    write_card(cards, card)
    with pytest.raises(zoo.CardValidationError, match="'training.recipe' is missing"):
        zoo.get_card("tiny")
    card["training"]["recipe"] = "recipes/configs/tiny.json"
    write_card(cards, card)
    with pytest.raises(zoo.CardValidationError, match=r"'files\[0\].url' must be absent"):
        zoo.get_card("tiny")
    del card["files"][0]["url"]
    write_card(cards, card)
    assert zoo.get_card("tiny").status == "not published"


def test_published_file_needs_url_or_path(cards):
    card = _valid()
    del card["files"][0]["url"]
    write_card(cards, card)
    with pytest.raises(zoo.CardValidationError, match="needs a 'url' or a 'path'"):
        zoo.get_card("tiny")


def test_bad_json_and_name_mismatch(cards):
    (cards / "broken.json").write_text("{not json")
    with pytest.raises(zoo.CardValidationError, match=r"broken.json: field '<json>'"):
        zoo.get_card("broken")
    write_card(cards, _valid("other"), filename="renamed.json")
    with pytest.raises(zoo.CardValidationError, match="is 'other' but the file is"):
        zoo.get_card("renamed")


def test_validate_card_in_memory_and_weights_model():
    card = _valid()
    card["files"].append(file_entry("model.weights.h5", DATA, url="https://example.org/w.h5"))
    card["model"] = {
        "config": {"class_name": "Sequential", "config": {}},
        "weights": "model.weights.h5",
    }
    assert zoo.validate_card(copy.deepcopy(card)) == card
    card["files"].append(dict(card["files"][0]))
    with pytest.raises(zoo.CardValidationError, match="lists 'model.keras' more than once"):
        zoo.validate_card(card)


def test_list_models_and_status_filter(cards):
    write_card(cards, _valid("alpha"))
    recipe_only = make_card("beta", [], status="not published")
    recipe_only["training"]["recipe"] = "recipes/configs/beta.json"
    del recipe_only["metrics"], recipe_only["model"]
    write_card(cards, recipe_only)
    summaries = zoo.list_models()
    assert [s["name"] for s in summaries] == ["alpha", "beta"]
    assert summaries[0]["metrics"] == {"recall@1": 0.5}
    assert summaries[0]["size"] == len(DATA)
    assert summaries[0]["card"] == str((cards / "alpha.json").resolve())
    assert [s["name"] for s in zoo.list_models(status="published")] == ["alpha"]
    assert [s["name"] for s in zoo.list_models(status="not published")] == ["beta"]
    with pytest.raises(ValueError, match="Received: status='draft'"):
        zoo.list_models(status="draft")


def test_unknown_name_suggests_close_matches(cards):
    for name in ("dnc_resnet50_cub200", "dnc_resnet50_cars196", "bier_googlenet_sop"):
        write_card(cards, _valid(name))
    with pytest.raises(zoo.UnknownModelError) as info:
        zoo.get_card("dnc_resnet50_cub")
    message = str(info.value)
    assert "Did you mean: 'dnc_resnet50_cub200'" in message
    assert "bier_googlenet_sop" not in message
    assert "keras-dml zoo list" in message
    assert "KERAS_DML_MODELS_DIR" in message
    with pytest.raises(KeyError):  # UnknownModelError is also a KeyError.
        zoo.load("no_such_model_anywhere")


def test_first_directory_wins(monkeypatch, tmp_path, cards):
    first, second = tmp_path / "first", tmp_path / "second"
    write_card(first, _valid("shared") | {"description": "first"})
    write_card(second, _valid("shared") | {"description": "second"})
    monkeypatch.setenv("KERAS_DML_MODELS_DIR", f"{first}:{second}")
    assert zoo.card_directories()[:2] == [first.resolve(), second.resolve()]
    assert zoo.get_card("shared").data["description"] == "first"


def test_default_directories_cover_package_and_repository():
    assert registry._PACKAGE_CARDS.parts[-3:] == ("keras_dml", "zoo", "cards")
    assert registry._REPOSITORY_MODELS.name == "model_zoo"
    assert (registry._REPOSITORY_MODELS.parent / "pyproject.toml").is_file()


def test_repository_cards_are_valid():
    """Every card shipped in the repository's model_zoo/ folder passes validation."""
    for path in sorted(registry._REPOSITORY_MODELS.glob("*.json")):
        card = zoo.read_card(path)
        assert card.name == path.stem
        json.dumps(card.data)
