"""`keras-dml --help`, every sub-command's help and usage errors import no Keras: they read the
catalogue generated from the registries (`keras_dml_cli.catalogue`)."""

import json
import os
import subprocess
import sys

from keras_dml_cli import build_parser, catalogue
from keras_dml_cli.run.train import config_from_args
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT

COMMAND_LINES = [
    ["--help"],
    ["train", "--help"],
    ["demo", "--help"],
    ["evaluate", "--help"],
    ["report", "--help"],
    ["export", "--help"],
    ["zoo", "--help"],
    ["search", "--help"],
    ["embed", "--help"],
    ["embed", "m.keras", "--images", "photos"],  # neither --store nor --output
    ["backbones", "--help"],
    ["backbones", "convert", "--help"],
    ["train", "--no-such-flag"],
    ["train", "--method", "dc"],  # --output missing
    ["train", "--epochs", "three", "--output", "x"],
    ["train", "--method", "dcc", "--output", "x"],  # misspelt names: an argument error too
    ["train", "--method", "dc", "--loss", "contrastiv", "--output", "x"],
]

# Runs each command line through `main` in one fresh process and prints what it imported.
SCRIPT = """
import contextlib, io, json, sys
from keras_dml_cli import main
heavy = {}
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    heavy[" ".join(argv)] = sorted(
        name for name in ("tensorflow", "keras", "torch", "jax") if name in sys.modules
    )
print(json.dumps(heavy))
"""


def test_help_and_usage_errors_import_no_keras_or_tensorflow():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(COMMAND_LINES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    heavy = json.loads(result.stdout.strip().splitlines()[-1])
    assert heavy == {" ".join(argv): [] for argv in COMMAND_LINES}


def test_the_catalogue_is_generated_from_the_registries():
    """`keras_dml_cli/catalogue.json` is what `python -m keras_dml_cli.catalogue` writes now:
    a method, loss or dataset declared without regenerating it fails here."""
    assert catalogue.catalogue() == json.loads(json.dumps(catalogue.build())), (
        "keras_dml_cli/catalogue.json is out of date: run python -m keras_dml_cli.catalogue"
    )
    from keras_dml.methods.registry import ENTRY_POINT_GROUP

    assert catalogue.METHOD_ENTRY_POINT_GROUP == ENTRY_POINT_GROUP


def test_train_help_lists_every_method_and_loss(capsys):
    parser = build_parser(["train", "--help"])
    train_help = parser._subparsers._group_actions[0].choices["train"].format_help()
    for name in [*catalogue.catalogue()["methods"], *catalogue.catalogue()["losses"]]:
        assert name in train_help, name


def test_loss_flag_sets_the_loss_name():
    argv = ["train", "--method", "baseline", "--dataset", "digits", "--loss", "contrastive"]
    args = build_parser(argv).parse_args([*argv, "--output", "run"])
    assert config_from_args(args)["loss"] == {"name": "contrastive"}


def test_misspelt_method_or_loss_is_one_line_with_the_closest_name(capsys):
    from keras_dml_cli import main

    assert main(["train", "--method", "dcc", "--output", "x"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Unknown method 'dcc'. Did you mean 'dc'?" in err
    assert main(["train", "--method", "dc", "--loss", "contrastiv", "--output", "x"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Unknown loss 'contrastiv'. Did you mean 'contrastive'?" in err
