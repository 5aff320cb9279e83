"""Building a run configuration starts no TensorFlow runtime.

A `MultiWorkerMirroredStrategy` must configure TensorFlow's collective ops before the runtime
starts ("Collective ops must be configured at program startup"), and `train` creates it after
the configuration is built; checking the optimizer entry once built an optimizer, whose
`iterations` variable started the runtime (docs/distributed.md's multi-worker command failed).
"""

import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT

PROBE = """
from tensorflow.python.eager import context
from keras_dml_cli.parser import build_parser
from keras_dml_cli.run.train import config_from_args
from keras_dml.training import RunConfig

RunConfig.from_dict({"method": "dc", "dataset": "digits", "optimizer": {"name": "adamw"}})
argv = ["train", "--method", "baseline", "--dataset", "digits", "--output", "unused"]
args = build_parser().parse_args(argv)
config_from_args(args)
print("runtime started" if context.context()._context_handle is not None else "no runtime")
"""


@pytest.mark.tf_only("the TensorFlow runtime and its collective ops are TensorFlow's")
def test_building_a_run_configuration_starts_no_tensorflow_runtime():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "no runtime", result.stdout
