"""Verified downloads: cache, resume with Range, retries, integrity errors, mirrors."""

import hashlib
import os

import numpy as np
import pytest

from keras_dml import zoo
from tests.zoo.test_httpserver import ZooServer, file_entry, isolate_zoo, make_card, write_card

NAME = "zoo-test-tiny"
DATA = np.random.default_rng(0).integers(0, 256, size=150_000, dtype=np.uint8).tobytes()
FAST = {"progress": False, "backoff_seconds": 0.01, "max_attempts": 3, "timeout": 5}


@pytest.fixture
def env(monkeypatch, tmp_path):
    cards, cache = isolate_zoo(monkeypatch, tmp_path)
    server = ZooServer({"/models/model.keras": DATA}).start()
    entry = file_entry("model.keras", DATA, url=server.url("/models/model.keras"))
    write_card(cards, make_card(NAME, [entry]))
    yield {"server": server, "cards": cards, "cache": cache, "entry": entry}
    server.stop()


def _cache_file(cache, entry):
    return cache / "keras_dml" / "zoo" / NAME / entry["sha256"][:16] / entry["filename"]


def test_fresh_download_lands_in_cache(env):
    path = zoo.download(NAME, **FAST)
    assert path == _cache_file(env["cache"], env["entry"])
    assert path.read_bytes() == DATA
    assert not path.with_name("model.keras.part").exists()
    requests = env["server"].requests_for("/models/model.keras")
    assert [r["range"] for r in requests] == [None]


def test_cache_hit_needs_no_server(env):
    first = zoo.download(NAME, **FAST)
    env["server"].stop()
    env["server"] = ZooServer({}).start()  # The fixture stops whatever is there at the end.
    assert zoo.download(NAME, **FAST) == first
    assert env["server"].requests == []


def test_resume_after_connection_cut(env):
    env["server"].cut_after = 50_000
    path = zoo.download(NAME, **FAST)
    assert path.read_bytes() == DATA
    ranges = [r["range"] for r in env["server"].requests_for("/models/model.keras")]
    assert ranges == [None, "bytes=50000-"]


def test_resume_part_file_left_by_earlier_run(env):
    part = _cache_file(env["cache"], env["entry"]).with_name("model.keras.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(DATA[:12_345])
    assert zoo.download(NAME, **FAST).read_bytes() == DATA
    ranges = [r["range"] for r in env["server"].requests_for("/models/model.keras")]
    assert ranges == ["bytes=12345-"]


def test_stale_part_from_another_file_restarts_once(env):
    part = _cache_file(env["cache"], env["entry"]).with_name("model.keras.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * 10_000)  # Bytes of some older file, not a prefix of DATA.
    assert zoo.download(NAME, **FAST).read_bytes() == DATA
    ranges = [r["range"] for r in env["server"].requests_for("/models/model.keras")]
    assert ranges == ["bytes=10000-", None]


def test_server_ignoring_range_restarts_cleanly(env):
    part = _cache_file(env["cache"], env["entry"]).with_name("model.keras.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(DATA[:30_000])
    env["server"].ignore_range = True
    path = zoo.download(NAME, **FAST)
    assert path.read_bytes() == DATA  # Not the 30 kB prefix followed by the whole file.


def test_retries_after_503(env):
    env["server"].fail_once_status = 503
    assert zoo.download(NAME, **FAST).read_bytes() == DATA
    assert len(env["server"].requests_for("/models/model.keras")) == 2


def test_404_is_not_retried(env):
    env["server"].files.clear()
    env["server"].fail_once_status = 503
    with pytest.raises(zoo.DownloadError, match="HTTP 404"):
        zoo.download(NAME, **FAST)
    assert len(env["server"].requests) == 2  # 503 retried once, 404 final.


def test_gives_up_after_attempts_on_connection_errors(env):
    dead = ZooServer({})
    dead_url = dead.url("/model.keras")
    dead.server_close()  # Nothing listens on that port any more.
    entry = dict(env["entry"], url=dead_url)
    write_card(env["cards"], make_card(NAME, [entry]))
    with pytest.raises(zoo.DownloadError, match="giving up after 3 attempts"):
        zoo.download(NAME, **FAST)


def test_tampered_bytes_rejected_and_deleted(env):
    env["server"].tamper = True
    tampered = bytes([DATA[0] ^ 0xFF]) + DATA[1:]
    with pytest.raises(zoo.IntegrityError) as info:
        zoo.download(NAME, **FAST)
    message = str(info.value)
    assert env["entry"]["sha256"] in message
    assert hashlib.sha256(tampered).hexdigest() in message
    folder = _cache_file(env["cache"], env["entry"]).parent
    assert not [p for p in folder.iterdir() if not p.name.endswith(".lock")]


@pytest.mark.parametrize("delta", [7, -7])
def test_wrong_size_rejected(env, delta):
    entry = dict(env["entry"], size=len(DATA) + delta)
    write_card(env["cards"], make_card(NAME, [entry]))
    with pytest.raises(zoo.IntegrityError) as info:
        zoo.download(NAME, **FAST)
    assert f"size {len(DATA) + delta} bytes" in str(info.value)
    assert not _cache_file(env["cache"], entry).exists()
    assert not _cache_file(env["cache"], entry).with_name("model.keras.part").exists()


def test_corrupted_cache_is_replaced(env):
    path = zoo.download(NAME, **FAST)
    path.write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="Ignoring a bad copy"):
        assert zoo.download(NAME, **FAST).read_bytes() == DATA
    assert len(env["server"].requests_for("/models/model.keras")) == 2


def test_mirror_env_var_takes_precedence(env, monkeypatch):
    mirror = ZooServer({f"/zoo/{NAME}/model.keras": DATA}).start()
    try:
        monkeypatch.setenv("KERAS_DML_MIRROR", mirror.url("/zoo/"))
        assert zoo.download(NAME, **FAST).read_bytes() == DATA
        assert len(mirror.requests_for(f"/zoo/{NAME}/model.keras")) == 1
        assert env["server"].requests == []
    finally:
        mirror.stop()


def test_mirror_miss_falls_back_to_card_url(env, monkeypatch):
    mirror = ZooServer({}).start()
    try:
        monkeypatch.setenv("KERAS_DML_MIRROR", mirror.url())
        assert zoo.download(NAME, **FAST).read_bytes() == DATA
        assert len(mirror.requests) == 1
        assert len(env["server"].requests) == 1
    finally:
        mirror.stop()


def test_mirror_local_directory(env, monkeypatch, tmp_path):
    (tmp_path / "mirror" / NAME).mkdir(parents=True)
    (tmp_path / "mirror" / NAME / "model.keras").write_bytes(DATA)
    monkeypatch.setenv("KERAS_DML_MIRROR", str(tmp_path / "mirror"))
    assert zoo.download(NAME, **FAST).read_bytes() == DATA
    assert env["server"].requests == []


def test_file_shipped_next_to_card_is_used_offline(env):
    files = env["cards"] / "files"
    files.mkdir()
    (files / "model.keras").write_bytes(DATA)
    entry = file_entry("model.keras", DATA, path="files/model.keras")
    write_card(env["cards"], make_card(NAME, [entry]))
    assert zoo.download(NAME, **FAST) == (files / "model.keras").resolve()
    (files / "model.keras").write_bytes(DATA[:-1])  # e.g. a git-lfs pointer or a bad edit
    with pytest.warns(UserWarning), pytest.raises(zoo.IntegrityError, match="size 149999"):
        zoo.download(NAME, **FAST)
    assert (files / "model.keras").exists()  # Never deletes files the user owns.


def test_not_published_names_recipe(env):
    entry = file_entry("model.keras", DATA)
    card = make_card(NAME, [entry], status="not published")
    card["training"]["recipe"] = "recipes/configs/tiny.json"
    del card["metrics"]
    write_card(env["cards"], card)
    with pytest.raises(zoo.ModelNotPublishedError, match="recipes/configs/tiny.json"):
        zoo.download(NAME, **FAST)


def test_download_all_and_unknown_file(env):
    assert set(zoo.download_all(NAME, **FAST)) == {"model.keras"}
    with pytest.raises(ValueError, match="no file 'other.bin'"):
        zoo.download(NAME, filename="other.bin", **FAST)
    assert os.path.isdir(zoo.cache_root())
