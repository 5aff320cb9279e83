"""An inter-process file lock guarding download + verify + rename of a cached file."""

import contextlib
import os
import time

try:
    import fcntl
except ImportError:  # Windows and other non-POSIX platforms.
    fcntl = None


class FileLock:
    """Exclusive lock on `path`, usable as a context manager.

    Args:
        path: str or path. The lock file (created if missing).
        timeout: float. Seconds to wait before raising `TimeoutError`. Defaults to `3600`.
        poll_interval: float. Seconds between attempts. Defaults to `0.1`.
        stale_seconds: float. Without `fcntl`: age at which a lock file is abandoned. Defaults
            to `7200`.
    """

    def __init__(self, path, timeout=3600.0, poll_interval=0.1, stale_seconds=7200.0):
        self.path = os.fspath(path)
        self.timeout = float(timeout)
        self.poll_interval = float(poll_interval)
        self.stale_seconds = float(stale_seconds)
        self._fd = None

    def _try_acquire(self):
        if fcntl is not None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
            self._fd = fd
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            with contextlib.suppress(OSError):
                if time.time() - os.path.getmtime(self.path) > self.stale_seconds:
                    os.remove(self.path)
            return False
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def acquire(self):
        """Blocks until the lock is held; raises `TimeoutError` after `timeout` seconds."""
        deadline = time.monotonic() + self.timeout
        while not self._try_acquire():
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"Could not lock {self.path} within {self.timeout:.0f} s: another process "
                    "is downloading the same file. Wait for it, or delete the lock file if no "
                    "keras-dml process is running."
                )
            time.sleep(self.poll_interval)

    def release(self):
        """Releases the lock (no-op if not held)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        else:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.remove(self.path)

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc_info):
        self.release()
