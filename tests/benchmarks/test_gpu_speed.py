"""benchmarks/speed/gpu_speed.py: keras-dml on JAX against PyTorch + PML at 224 px.

No GPU here: the PyTorch side runs at a tiny size on the CPU, in this process, and the record's
rows are checked on timings given to it; keras-dml's side is backend_speed.py's worker, tested
in test_backend_speed.py (the synthetic data included).
"""

import json

import pytest

from tests.support.helpers import benchmark_script

pytest.importorskip("torch")
pytest.importorskip("pytorch_metric_learning")

TINY = ["--backbone", "convnet", "--image-size", "16", "--batch-size", "8", "--steps", "2"]
TINY += ["--precision", "float32"]


def test_the_pytorch_side_times_pml_training_steps(capsys):
    script = benchmark_script("speed.gpu_speed")
    script.main([*TINY, "--pml-worker"])
    output = capsys.readouterr().out.splitlines()
    (line,) = [x for x in output if x.startswith(script.RESULT_PREFIX)]
    result = json.loads(line[len(script.RESULT_PREFIX) :])
    assert result["images_per_second"] > 0 and result["device"] == "cpu"


def test_the_record_compares_the_baselines_and_each_method_with_its_baseline(tmp_path, monkeypatch):
    script = benchmark_script("speed.gpu_speed")
    monkeypatch.setattr(
        script, "run_pml", lambda args, argv: {"images_per_second": 50.0, "device": "cpu"}
    )
    steady = {"baseline/margin": 60.0, "dc/paper": 45.0}
    monkeypatch.setattr(
        script, "run_one", lambda args, backend, row: {"row": row, "steady": steady[row]}
    )
    path = tmp_path / "record.json"
    script.main([*TINY, "--rows", *steady, "--record", str(path)])
    record = json.loads(path.read_text())
    versus_pml, dc = record["rows"]
    assert versus_pml["result"] == "1.20x" and versus_pml["target"] == ">= 1.00x"
    assert versus_pml["what"].startswith("keras-dml baseline (jax) / PyTorch + PML, convnet 16 px")
    assert dc == {
        "what": "dc/paper / keras-dml baseline, training images/s",
        "result": "0.75x",
        "target": "reported",
    }
