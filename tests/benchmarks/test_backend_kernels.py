"""benchmarks/speed/backend_kernels.py: the backbone's kernels timed alone on each backend.

The kernels must compute the same thing on every backend, or the timings compare different work:
each backend's results are checked against TensorFlow's on tiny inputs.
"""

import json

import numpy as np
import pytest

from tests.support.docs_site import load_hooks
from tests.support.helpers import benchmark_script

TINY = ["--batch", "2", "--size", "6", "--channels", "4", "--matmul", "8", "--repeats", "1"]


def _values(script, builder, data):
    kernels, wait = builder(data)
    return {name: np.asarray(wait(kernels[name]())) for name in script.KERNELS}


def _torch_to_tensorflow_layout(values):
    nhwc = {k: v.transpose(0, 2, 3, 1) for k, v in values.items() if v.ndim == 4}
    nhwc["conv gradient (filter)"] = values["conv gradient (filter)"].transpose(2, 3, 1, 0)
    return {**values, **nhwc}


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_every_backend_computes_tensorflows_kernels(backend):
    pytest.importorskip(backend)
    script = benchmark_script("speed.backend_kernels")
    data = script.inputs(script.build_parser().parse_args(TINY))
    reference = _values(script, script.tensorflow_kernels, data)
    values = _values(script, getattr(script, f"{backend}_kernels"), data)
    if backend == "torch":
        values = _torch_to_tensorflow_layout(values)
    for name in script.KERNELS:
        assert values[name].shape == reference[name].shape, name
        scale = np.abs(reference[name]).max()
        np.testing.assert_allclose(values[name], reference[name], atol=1e-5 * scale, err_msg=name)
    # The two gradients are different operations: timing one under the other's name would pass
    # the shape check only by accident.
    assert reference["conv gradient (input)"].shape != reference["conv gradient (filter)"].shape


def test_the_worker_prints_every_kernels_time(capsys):
    script = benchmark_script("speed.backend_kernels")
    script.main([*TINY, "--worker", "tensorflow"])
    (line,) = [
        x for x in capsys.readouterr().out.splitlines() if x.startswith(script.RESULT_PREFIX)
    ]
    result = json.loads(line[len(script.RESULT_PREFIX) :])
    assert set(result["milliseconds"]) == set(script.KERNELS)
    assert all(value > 0 for value in result["milliseconds"].values())


def test_summary_takes_the_median_round_and_rates_against_tensorflow():
    script = benchmark_script("speed.backend_kernels")

    def result(ms):
        return {"milliseconds": dict.fromkeys(script.KERNELS, ms), "versions": {}, "xla_flags": ""}

    summary = script.summarize(
        {"tensorflow": [result(1.0), result(3.0), result(2.0)], "jax": [result(6.0)] * 3}
    )
    assert summary["tensorflow"]["milliseconds"]["matmul"] == 2.0
    rows = script.ratio_rows(summary)
    assert len(rows) == len(script.KERNELS)
    assert rows[0] == {"what": "conv forward: jax time / TensorFlow time", "result": "3.00x"}


def test_the_site_table_lists_each_kernel_with_its_ratio(tmp_path):
    script = benchmark_script("speed.backend_kernels")
    times = {"tensorflow": 2.0, "jax": 5.0}
    summary = {
        b: {"milliseconds": dict.fromkeys(script.KERNELS, ms), "versions": {}, "xla_flags": ""}
        for b, ms in times.items()
    }
    record = {
        "command": "python -m benchmarks.speed.backend_kernels",
        "date": "2026-11-27 12:00 UTC",
        "machine": {"platform": "Linux x86_64", "cores": 2, "load_average": [0.5]},
        "shape": {"batch": 128, "size": 32, "channels": 64, "matmul": 2048},
        "measured": summary,
    }
    (tmp_path / "backend_kernels.json").write_text(json.dumps(record))
    table = load_hooks().backend_kernels_table(str(tmp_path))
    assert "| conv gradient (filter) | 2.0 | 5.0 | 2.50x |" in table
    assert "`python -m benchmarks.speed.backend_kernels`" in table
