"""Runs code in a fresh interpreter where `import tensorflow` fails (an import hook, no uninstall).

The interpreter's `sitecustomize` (loaded before anything else, in worker processes too) puts a
`sys.meta_path` finder first that raises `ImportError` for `tensorflow` and `tensorflow.*`. Tests
of the TensorFlow-free paths run their code through `run_blocked` and assert that it
printed a marker line and that `"tensorflow" not in sys.modules` at the end.
"""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import REPO_ROOT

BLOCKER = textwrap.dedent(
    """
    import importlib.machinery
    import sys

    class BlockTensorFlow:
        # Finds `tensorflow` (so `importlib.util.find_spec` probes, as torch._dynamo's, still
        # answer) with a loader whose import raises ImportError.
        def find_spec(self, name, path=None, target=None):
            if name == "tensorflow" or name.startswith("tensorflow."):
                return importlib.machinery.ModuleSpec(name, self)

        def create_module(self, spec):
            raise ImportError(f"{spec.name} is blocked by the test's import hook")

        def exec_module(self, module):
            raise ImportError(f"{module.__name__} is blocked by the test's import hook")

    sys.meta_path.insert(0, BlockTensorFlow())
    """
)


# `cli(*argv)` -> (exit code, stdout, stderr): `python -m keras_dml_cli ARGV` run in the blocked
# interpreter itself (a new process would not have the hook). Prepend it to a test's code.
CLI_RUNNER = textwrap.dedent(
    """
    import contextlib, io, runpy, sys

    def cli(*argv):
        out, err, sys.argv = io.StringIO(), io.StringIO(), ["keras-dml", *argv]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_module("keras_dml_cli", run_name="__main__")
            except SystemExit as exit:
                return exit.code, out.getvalue(), err.getvalue()
        raise AssertionError("the command did not exit")
    """
)


def run_blocked(tmp_path, backend, code, timeout=300, cwd=None):
    """Runs `code` in a fresh interpreter on `backend` with `tensorflow` imports blocked.

    Args:
        tmp_path: a folder for the `sitecustomize.py` that installs the hook.
        backend: `"jax"` or `"torch"` (`KERAS_BACKEND`).
        code: str. Python source run with `python -c`.
        timeout: float. Seconds before the run is killed. Defaults to `300`.
        cwd: folder the code runs in. Defaults to the current one.

    Returns:
        `subprocess.CompletedProcess` with text `stdout` and `stderr`; the calling test is
        skipped when `backend` is not installed.
    """
    if importlib.util.find_spec(backend) is None:
        # The README's test command installs the `dev` extra only; CI installs the backends.
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO_ROOT}")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
