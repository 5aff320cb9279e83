"""How the mutation runner starts pytest in a tree copy: a fork of a warm process, or a new one.

A mutation's tests take seconds; starting Python and importing TensorFlow and Keras for each of
them took as long again. `ForkedTests` forks the runner, which imported those once
(`preload_heavy_modules`), and runs pytest in the child, in the copy; `SpawnedTests` starts a new
interpreter (platforms without `fork`, or `--no-fork`). Both run `pytest -x -q <nodes>` with the
copy first on the path and as the working folder, write pytest's output to a log file, and are
polled, so one loop in the runner schedules either (no threads, which `fork` must not meet).

The child never sees this tree's `keras_dml` or `tests`: the runner imports neither before it
forks (`tests.mutations` aside, dropped from the child's module table), so the copy's mutated
files are the ones imported.
"""

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import traceback

# Imported by the runner before it forks: what every keras-dml test imports and does not
# change between mutations (never keras_dml, whose files the mutations change).
HEAVY_MODULES = ("numpy", "tensorflow", "keras", "PIL.Image", "pytest")


def preload_heavy_modules():
    """Imports `HEAVY_MODULES` (the ones installed) so that forked children start warm."""
    for name in HEAVY_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def test_environment(tree):
    """The environment of a pytest run in `tree`: the copy first on the path, quiet TensorFlow."""
    env = dict(os.environ, PYTHONPATH=str(tree), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def pytest_arguments(nodes):
    return ["-x", "-q", *nodes]


class SpawnedTests:
    """`python -m pytest -x -q <nodes>` in `tree`, as a new process (its own process group)."""

    def __init__(self, tree, nodes, log_path):
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pytest", *pytest_arguments(nodes)],
                cwd=tree,
                env=test_environment(tree),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.pid = self.process.pid

    def poll(self):
        """The exit code, or `None` while it runs."""
        return self.process.poll()

    def kill(self):
        _kill_group(self.pid)
        self.process.wait()


class ForkedTests:
    """`pytest.main(["-x", "-q", *nodes])` in `tree`, in a fork of this (preloaded) process."""

    def __init__(self, tree, nodes, log_path):
        self.log_path = log_path
        self.code = None
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            _run_pytest_here(tree, nodes, log_path)

    def poll(self):
        """The exit code, or `None` while it runs."""
        if self.code is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def kill(self):
        _kill_group(self.pid)
        if self.code is None:
            os.waitpid(self.pid, 0)
            self.code = -signal.SIGKILL


def _run_pytest_here(tree, nodes, log_path):
    """The forked child: pytest in `tree`, output to `log_path`, then `os._exit(code)`."""
    code = 3
    try:
        os.setpgid(0, 0)  # its own group, so a timeout also stops what its tests started
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(tree)
        environment = test_environment(tree)
        os.environ.clear()
        os.environ.update(environment)
        sys.path.insert(0, str(tree))
        for name in [m for m in sys.modules if m == "tests" or m.startswith("tests.")]:
            del sys.modules[name]  # the runner's own package: the copy's is imported instead
        import pytest

        code = int(pytest.main(pytest_arguments(nodes)))
    except BaseException:  # report anything, then leave without running the runner's code
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _kill_group(pid):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def can_fork():
    """Whether this platform can fork a warm runner (POSIX)."""
    return hasattr(os, "fork")
