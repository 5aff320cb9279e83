"""HTTP(S) transfer of one file into a `.part` file: resume, retry with back-off, progress."""

import http.client
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from urllib.parse import unquote, urlparse

from tqdm.auto import tqdm

from keras_dml.utils.version import __version__
from keras_dml.zoo.errors import DownloadError

_CHUNK = 1 << 16
_RETRYABLE_STATUS = (408, 425, 429, 500, 502, 503, 504)
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


class _RetryableError(Exception):
    """A transient failure (connection cut, timeout, 5xx): try again after a delay."""


def _user_agent():
    return f"keras-dml/{__version__} (+model zoo)"


def _copy_local(url, part_path):
    source = unquote(urlparse(url).path)
    try:
        shutil.copyfile(source, part_path)
    except FileNotFoundError as error:
        raise DownloadError(f"{url}: no such file on the mirror") from error


def _write_response(response, part_path, offset, expected_size, bar):
    """Streams a response into `part_path`; returns the number of bytes received."""
    received = 0
    with open(part_path, "ab" if offset else "wb") as handle:
        while True:
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            handle.write(chunk)
            received += len(chunk)
            bar.update(len(chunk))
            if offset + received > expected_size:
                break  # Longer than the card says: stop; verification reports the size.
        handle.flush()
        os.fsync(handle.fileno())
    return received


def _attempt(url, part_path, expected_size, timeout, bar):
    """One HTTP request (`_RetryableError` for transient failures, `DownloadError` for final)."""
    offset = os.path.getsize(part_path) if os.path.exists(part_path) else 0
    if offset > expected_size:
        os.remove(part_path)
        offset = 0
    if offset == expected_size and offset > 0:
        return
    headers = {"User-Agent": _user_agent(), "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
            if offset and status == 206:
                match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
                if not match or int(match.group(1)) != offset:
                    os.remove(part_path)  # Server answered another range: restart cleanly.
                    raise _RetryableError("unexpected Content-Range; restarting from byte 0")
            elif status == 200:
                offset = 0  # Range ignored (or fresh start): rewrite the file from byte 0.
            else:
                raise DownloadError(f"{url}: unexpected HTTP status {status}")
            length = response.headers.get("Content-Length", "")
            body_length = int(length) if length.isdigit() else None
            bar.reset(total=expected_size)
            bar.update(offset)
            received = _write_response(response, part_path, offset, expected_size, bar)
    except urllib.error.HTTPError as error:
        if error.code == 416:
            os.remove(part_path)  # Our partial file does not fit the server's file: restart.
            raise _RetryableError("HTTP 416 range not satisfiable") from error
        if error.code in _RETRYABLE_STATUS:
            raise _RetryableError(f"HTTP {error.code} {error.reason}") from error
        raise DownloadError(f"{url}: HTTP {error.code} {error.reason}") from error
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as e:
        raise _RetryableError(f"{type(e).__name__}: {e}") from e
    total = offset + received
    if body_length is not None and received < body_length and total <= expected_size:
        # http.client returns a short body without error when the connection drops.
        raise _RetryableError(f"connection closed after {received} of {body_length} bytes")
    if body_length is None and total < expected_size:
        raise _RetryableError(f"connection closed after {total} of {expected_size} bytes")
    # A complete body of the wrong length is left for the caller's verification to report.


def fetch_to_part(
    url,
    part_path,
    expected_size,
    max_attempts=5,
    backoff_seconds=1.0,
    max_backoff_seconds=60.0,
    timeout=30.0,
    progress=None,
    description=None,
):
    """Downloads `url` into `part_path`, resuming a partial file with HTTP Range.

    Args:
        url: str. `http://`, `https://` or `file://` URL.
        part_path: str or path. The partial file (kept between attempts and runs).
        expected_size: int. Size from the card; the body is never read far past it.
        max_attempts: int. Attempts without progress before giving up. Defaults to `5`.
        backoff_seconds: float. First retry delay. Defaults to `1.0`.
        max_backoff_seconds: float. Delay cap. Defaults to `60.0`.
        timeout: float. Socket timeout per request in seconds. Defaults to `30.0`.
        progress: bool or None. Progress bar; `None` shows it on a terminal only.
        description: str. Label of the progress bar. Defaults to the file name.

    Raises:
        DownloadError: a non-retryable error, or attempts exhausted.
    """
    if max_attempts < 1:
        raise ValueError(f"`max_attempts` must be >= 1. Received: max_attempts={max_attempts}")
    part_path = os.fspath(part_path)
    if urlparse(url).scheme == "file":
        _copy_local(url, part_path)
        return
    if expected_size == 0:
        open(part_path, "wb").close()
        return
    failures = 0
    with tqdm(
        total=expected_size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=description or os.path.basename(part_path).removesuffix(".part"),
        disable=None if progress is None else not progress,
        leave=False,
    ) as bar:
        while True:
            before = os.path.getsize(part_path) if os.path.exists(part_path) else 0
            try:
                _attempt(url, part_path, expected_size, timeout, bar)
                return
            except _RetryableError as error:
                after = os.path.getsize(part_path) if os.path.exists(part_path) else 0
                failures = 1 if after > before else failures + 1
                if failures >= max_attempts:
                    raise DownloadError(
                        f"{url}: giving up after {failures} attempts without progress "
                        f"({after} of {expected_size} bytes kept in {part_path}; running the "
                        f"same command again resumes). Last error: {error}"
                    ) from error
                time.sleep(min(backoff_seconds * 2 ** (failures - 1), max_backoff_seconds))
