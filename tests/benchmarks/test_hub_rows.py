"""The keras-hub benchmark rows (`<row>-hub_resnet`, `<row>-hub_vit`) and the keras-hub ResNet-50
step-time script: their run configs, their pairing in the table, and both scripts at tiny size."""

import json
import os
import sys

import pytest

from tests.benchmarks.test_records import run_script
from tests.support.docs_site import load_hooks
from tests.support.helpers import benchmark_script

BEST = "normalized_softmax"
HUB_ROWS = [
    f"baseline/{BEST}-hub_resnet",
    "dc/best-hub_resnet",
    f"baseline/{BEST}-hub_vit",
    "dc/best-hub_vit",
]


def rows_module():
    return benchmark_script("accuracy.rows")


def test_a_hub_row_is_its_budget_row_on_the_keras_hub_backbone_with_its_preset():
    module = rows_module()
    assert [n for n in module.row_names(BEST) if "-hub_" in n] == HUB_ROWS
    for row in HUB_ROWS:
        plain = row.rsplit("-", 1)[0]
        config = module.keras_config(row, "hangul", module.BUDGET, BEST, 0, hub_preset="P")
        expected = module.keras_config(plain, "hangul", module.BUDGET, BEST, 0)
        assert config["backbone"] == {"name": "keras_hub", "preset": "P", "weights": None}, row
        assert {k: v for k, v in config.items() if k != "backbone"} == {
            k: v for k, v in expected.items() if k != "backbone"
        }, row
    # A preset's own weights: `weights="imagenet"` of the keras_hub backbone.
    config = module.keras_config(
        "dc/best-hub_vit", "hangul", module.BUDGET, BEST, 0, None, "imagenet"
    )
    assert config["backbone"] == {"name": "keras_hub", "preset": "hub_vit", "weights": "imagenet"}
    # The architectures: ResNet-18's basic blocks, a ViT with patch 4 at the budget's 32 px.
    _, resnet, _ = module.HUB_BACKBONES["hub_resnet"]
    assert resnet["stackwise_num_blocks"] == [2, 2, 2, 2]
    assert resnet["block_type"] == "basic_block"
    _, vit, _ = module.HUB_BACKBONES["hub_vit"]
    assert vit["patch_size"] == 4 and vit["image_shape"][:2] == [32, 32]


def test_a_hub_row_is_compared_with_the_baseline_on_its_own_backbone():
    table = benchmark_script("accuracy.table")

    def record(row, backbone, recall):
        metrics = {"recall@1": recall, "map@r": recall / 2, "r_precision": 0.5, "nmi": 0.5}
        settings = {"backbone": backbone, "loss": {"name": BEST}}
        return {"row": row, "seed": 0, "settings": settings, "metrics": metrics, "seconds": 1.0}

    rows = {}
    for r in (
        record(f"baseline/{BEST}", "vgg_small", 0.9),
        record(f"baseline/{BEST}-hub_vit", "keras_hub:hub_vit", 0.5),
        record("dc/best-hub_vit", "keras_hub:hub_vit", 0.6),
        record("dc/best", "vgg_small", 0.8),
    ):
        rows.setdefault(table.table_key(r), []).append(r)
    found = {e["row"]: e for e in table.differences_from_baseline(rows)}
    assert found["dc/best-hub_vit"]["baseline"] == f"baseline/{BEST}-hub_vit"
    assert found["dc/best-hub_vit"]["recall@1"] == pytest.approx(0.1)
    assert found["dc/best"]["baseline"] == f"baseline/{BEST}"


def test_a_hub_preset_option_naming_no_hub_backbone_stops_in_one_line(capsys):
    module = benchmark_script("accuracy.run")
    assert module.parse_hub_presets(["hub_vit=kaggle://keras/vit/x"]) == {
        "hub_vit": "kaggle://keras/vit/x"
    }
    with pytest.raises(SystemExit):
        module.main(["--hub-preset", "vit=./folder", "--list"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--hub-preset 'vit=./folder': use NAME=PRESET with NAME one of" in error


@pytest.fixture
def tiny_hub(tmp_path, monkeypatch):
    """An 8-class hangul benchmark and a tiny `hub_resnet` architecture (the script saves it)."""
    pytest.importorskip("keras_hub")
    from tests.benchmarks.test_accuracy import hangul_options

    monkeypatch.setenv("KERAS_DML_DATA_DIR", str(tmp_path / "data"))
    tiny = {
        "input_conv_filters": [64],
        "input_conv_kernel_sizes": [3],
        "stackwise_num_filters": [64, 8],
        "stackwise_num_blocks": [1, 1],
        "stackwise_num_strides": [1, 2],
        "block_type": "basic_block",
        "use_pre_activation": False,
        "image_shape": [None, None, 3],
    }
    name, _, converter = rows_module().HUB_BACKBONES["hub_resnet"]
    monkeypatch.setitem(rows_module().HUB_BACKBONES, "hub_resnet", (name, tiny, converter))
    options = {**hangul_options(num_train_classes=8, pretrain_classes=0), "num_test_classes": 4}
    return [f"--dataset-option={k}={json.dumps(v)}" for k, v in options.items()]


@pytest.mark.slow
def test_the_accuracy_script_saves_a_hub_preset_and_records_its_rows(tmp_path, tiny_hub):
    from tests.support.hub_presets import vit_preset

    vit = vit_preset(tmp_path / "vit")
    out = str(tmp_path / "acc")
    argv = ["--rows", f"baseline/{BEST}-hub_resnet,baseline/{BEST}-hub_vit", "--seeds", "0"]
    argv += ["--set", "epochs=1", "--set", "batch_size=8", "--set", "m_per_class=2"]
    benchmark_script("accuracy.run").main(
        [*argv, *tiny_hub, "--output", out, "--hub-preset", f"hub_vit={vit}"]
    )
    with open(os.path.join(out, "results.jsonl")) as f:
        records = {r["row"]: r for r in map(json.loads, f)}
    # From random initialisation on the preset the script saved (its architecture recorded).
    resnet = records[f"baseline/{BEST}-hub_resnet"]
    assert "regime" not in resnet and resnet["settings"]["backbone"] == "keras_hub:hub_resnet"
    saved = os.path.join(out, "hub_presets", "hub_resnet", "config.json")
    with open(saved) as f:
        assert resnet["settings"]["hub_architecture"] == json.load(f)
    assert resnet["settings"]["hub_architecture"]["config"]["stackwise_num_filters"] == [64, 8]
    # From a given preset's own weights: its own regime, and the preset named.
    vit_record = records[f"baseline/{BEST}-hub_vit"]
    assert vit_record["regime"] == "preset"
    assert vit_record["settings"]["backbone"] == f"keras_hub:{vit}"
    run_dir = os.path.join(out, "pretrained_rows", f"baseline_{BEST}-hub_vit", "seed0")
    with open(os.path.join(run_dir, "config.json")) as f:
        assert json.load(f)["backbone"]["weights"] == "imagenet"


def test_the_hub_step_script_records_both_step_times_and_their_ratio(tmp_path):
    pytest.importorskip("keras_hub")
    from tests.support.hub_presets import resnet_preset

    module = benchmark_script("speed.hub_backbone_step")
    parser = module.build_parser()
    assert (parser.get_default("backbone"), parser.get_default("variant")) == ("resnet50", "v1.5")
    assert module.RESNET_50["stackwise_num_blocks"] == [3, 4, 6, 3]
    preset = resnet_preset(tmp_path / "resnet")
    record = run_script(
        "speed.hub_backbone_step",
        ["--backbone", "convnet", "--preset", preset, "--image-size", "32", "--batch-size", "4"]
        + ["--warmup", "1", "--rounds", "1", "--steps", "1"],
        tmp_path,
    )
    measured = record["measured"]
    step = measured["milliseconds_per_step"]
    assert measured["ratio"] == pytest.approx(step["keras_hub"] / step["keras_dml"])
    assert measured["parameters"]["keras_hub"] != measured["parameters"]["keras_dml"]
    (row,) = record["rows"]
    assert row["result"].startswith(f"{measured['ratio']:.2f}x ({step['keras_hub']:.0f} ms / ")
    assert row["what"] == f"keras-hub `{preset}` vs keras-dml convnet train step (32 px, batch 4)"


def test_a_speed_marker_quotes_a_measured_value_of_a_speed_record(tmp_path, monkeypatch):
    hooks = load_hooks()
    values = sys.modules[hooks.render_values.__module__]
    measured = {"ratio": 1.0512, "milliseconds_per_step": {"keras_hub": 412.4, "keras_dml": 392.0}}
    with open(tmp_path / "speed_hub_backbone_step.json", "w") as f:
        json.dump({"measured": measured}, f)
    monkeypatch.setattr(values, "RESULTS", str(tmp_path))
    text = "<!-- value: speed hub_backbone_step ratio --> (<!-- value: speed hub_backbone_step "
    text += "milliseconds_per_step.keras_hub --> ms)"
    assert hooks.render_values(text, "keras_hub.md") == "1.05 (412 ms)"
    with pytest.raises(ValueError, match=r"no field 'milliseconds_per_step.hub' in .*keras_dml"):
        hooks.render_values("<!-- value: speed hub_backbone_step milliseconds_per_step.hub -->")
    with pytest.raises(ValueError, match="no record benchmarks/results/speed_nosuch.json"):
        hooks.render_values("<!-- value: speed nosuch ratio -->")
