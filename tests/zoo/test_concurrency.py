"""Concurrent downloads of one model from several processes share one verified cache file."""

import multiprocessing

import numpy as np
import pytest

from keras_dml.zoo import lock as lock_module
from keras_dml.zoo.lock import FileLock
from tests.zoo.test_httpserver import ZooServer, file_entry, isolate_zoo, make_card, write_card

NAME = "zoo-test-concurrent"
DATA = np.random.default_rng(1).integers(0, 256, size=160_000, dtype=np.uint8).tobytes()


def _download_in_child(barrier, results):
    from keras_dml import zoo

    barrier.wait(timeout=60)
    try:
        path = zoo.download(NAME, progress=False, backoff_seconds=0.01, timeout=10)
        results.put(("ok", str(path), path.read_bytes() == DATA))
    except Exception as error:  # Reported to the parent, which fails the test.
        results.put(("error", repr(error), False))


def test_three_processes_download_once(monkeypatch, tmp_path):
    cards, _ = isolate_zoo(monkeypatch, tmp_path)
    server = ZooServer({"/m.keras": DATA}).start()
    server.delay = 0.1  # About 1 s per transfer, so the processes overlap.
    try:
        write_card(
            cards, make_card(NAME, [file_entry("m.keras", DATA, url=server.url("/m.keras"))])
        )
        context = multiprocessing.get_context("spawn")
        barrier, results = context.Barrier(3), context.Queue()
        workers = [
            context.Process(target=_download_in_child, args=(barrier, results)) for _ in range(3)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join(timeout=30)
    finally:
        server.stop()
    assert all(status == "ok" for status, _, _ in outcomes), outcomes
    assert len({path for _, path, _ in outcomes}) == 1
    assert all(same for _, _, same in outcomes)
    assert len(server.requests_for("/m.keras")) == 1  # The others waited on the lock.


@pytest.mark.parametrize("use_fcntl", [True, False])
def test_file_lock_excludes_second_holder(monkeypatch, tmp_path, use_fcntl):
    if not use_fcntl:
        monkeypatch.setattr(lock_module, "fcntl", None)
    elif lock_module.fcntl is None:
        pytest.skip("fcntl is not available on this platform")
    path = tmp_path / "x.lock"
    with FileLock(path), pytest.raises(TimeoutError, match="another process"):
        FileLock(path, timeout=0.2, poll_interval=0.05).acquire()
    with FileLock(path, timeout=0.2):
        pass


def test_fallback_lock_breaks_stale_lock(monkeypatch, tmp_path):
    monkeypatch.setattr(lock_module, "fcntl", None)
    path = tmp_path / "stale.lock"
    path.write_text("12345")  # Left behind by a crashed process.
    with FileLock(path, timeout=1.0, poll_interval=0.05, stale_seconds=0.0):
        assert path.exists()
    assert not path.exists()
