"""The exact evaluation's worker threads share the cores with BLAS (`evaluation.search_pass`)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from keras_dml.evaluation import evaluate, search_pass


def _blas_threads():
    """Threads of the BLAS NumPy's matrix products run on (other libraries' BLAS, e.g. faiss's
    OpenMP build, report their count per calling thread)."""
    numpy_blas = [
        info
        for info in threadpool_info()
        if info["user_api"] == "blas" and "numpy" in info["filepath"]
    ]
    if not numpy_blas:
        pytest.skip("NumPy's BLAS is not a library threadpoolctl finds in NumPy's folder")
    return {info["num_threads"] for info in numpy_blas}


def test_each_worker_gets_its_share_of_the_cores_and_the_limit_is_lifted(monkeypatch):
    before = _blas_threads()
    monkeypatch.setattr(search_pass, "_usable_cores", lambda: 4)
    with search_pass._blas_threads_shared(4):
        assert _blas_threads() == {1}  # 4 workers x 1 BLAS thread = 4 cores
    with search_pass._blas_threads_shared(1):
        assert _blas_threads() == before  # one worker: BLAS keeps every core
    assert _blas_threads() == before


def test_the_threaded_exact_pass_runs_under_the_limit(monkeypatch):
    seen = []
    real = search_pass.topk_from_block

    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(search_pass, "_search_workers", lambda: 2)
    monkeypatch.setattr(search_pass, "_usable_cores", lambda: 2)
    monkeypatch.setattr(search_pass, "topk_from_block", recording)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 8)).astype(np.float32)
    labels = rng.integers(0, 20, size=300)
    threaded = evaluate(x, labels, recall_at=(1, 4), chunk_size=32, metrics=("recall", "map@r"))
    assert seen and all(threads == {1} for threads in seen)
    monkeypatch.setattr(search_pass, "_search_workers", lambda: 1)
    assert evaluate(x, labels, recall_at=(1, 4), chunk_size=32, metrics=("recall", "map@r")) == (
        threaded
    )
