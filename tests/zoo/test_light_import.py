"""`import keras_dml.zoo` and listing the zoo import no Keras: the zoo's registering import of
layers, losses and models waits for the first `zoo.load`, which imports `keras_dml.zoo.loading`."""

import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT

SCRIPT = """
import sys
from keras_dml import zoo
zoo.list_models()
print(sorted(name for name in ("keras", "tensorflow", "keras_dml.layers") if name in sys.modules))
"""


def test_listing_the_zoo_imports_no_keras():
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": REPO_ROOT}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=REPO_ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
