"""Running ``mooring`` as a real process."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tests.helpers import zygote


def run_mooring(
    *args: str, data_dir: Path, env: dict[str, str | None] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mooring ARGS`` with its own data folder (``env`` None values unset): a
    process forked from a zygote that has done the imports (:mod:`tests.helpers.zygote`)."""
    full_env = dict(os.environ)
    full_env["MOORING_DATA_DIR"] = str(data_dir)
    full_env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return zygote.run("mooring", args, env=full_env, timeout=timeout)


class Lines:
    """A child process's pipe read line by line, every wait bounded by a deadline."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self._fd = stream.fileno()
        self._buffer = b""
        self._eof = False
        self.seen: list[str] = []

    def _more(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no such line in time; seen: {self.seen!r}")
        with selectors.DefaultSelector() as selector:
            selector.register(self._fd, selectors.EVENT_READ)
            if not selector.select(remaining):
                raise TimeoutError(f"no such line in time; seen: {self.seen!r}")
        chunk = os.read(self._fd, 65536)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _take(self) -> str | None:
        if b"\n" not in self._buffer:
            return None
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode(errors="replace")
        self.seen.append(text)
        return text

    def until(self, predicate: Callable[[str], bool], timeout: float = 60) -> str:
        """The first (next) line for which ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._take()
            if line is not None:
                if predicate(line):
                    return line
                continue
            if self._eof or not self._more(deadline):
                raise EOFError(f"the stream ended; seen: {self.seen!r}")

    def rest(self, timeout: float = 60) -> list[str]:
        """Every remaining line, until the child closes the pipe."""
        deadline = time.monotonic() + timeout
        start = len(self.seen)
        while not self._eof:
            while self._take() is not None:
                pass
            self._more(deadline)
        while self._take() is not None:
            pass
        if self._buffer:
            self.seen.append(self._buffer.decode(errors="replace"))
            self._buffer = b""
        return self.seen[start:]


def appended_line(path: Path, predicate: Callable[[str], bool], timeout: float = 60) -> str:
    """The first line of ``path``, as it is now or as it grows, for which ``predicate``
    holds (``tail -F`` follows it: no polling, a bounded wait)."""
    with subprocess.Popen(
        ["tail", "-n", "+1", "-F", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as tail:
        try:
            return Lines(tail.stdout).until(predicate, timeout=timeout)
        finally:
            tail.kill()


def engine_pid(data_dir: Path) -> int | None:
    """The pid of the engine that holds ``data_dir``'s engine lock (``None``: none does)."""
    import fcntl

    lock = data_dir / "engine.lock"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            owner = lock.read_text(encoding="utf-8").strip()
            return int(owner.split(":")[1])
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def stop_engine(data_dir: Path, timeout: float = 30) -> bool:
    """End the engine of ``data_dir`` as ``mooring agent stop`` would (SIGTERM; SIGKILL if it
    does not end in ``timeout`` s). Whether one ran."""
    import signal

    pid = engine_pid(data_dir)
    if pid is None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not _lock_released(data_dir / "engine.lock", timeout):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _lock_released(data_dir / "engine.lock", timeout)
    return True


def _lock_released(lock: Path, timeout: float) -> bool:
    """Wait (at most ``timeout`` s) until the engine's exclusive lock on ``lock`` goes: a
    blocking shared ``flock`` in a daemon thread, granted the moment the engine's process ends."""
    import fcntl
    import threading

    released = threading.Event()

    def wait() -> None:
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            released.set()  # no lock file: nothing holds it
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        released.set()

    threading.Thread(target=wait, name="engine-lock-wait", daemon=True).start()
    return released.wait(timeout)


def stop_engines_under(folder: Path) -> list[Path]:
    """End every engine whose data folder lies under ``folder`` (a test's tmp_path)."""
    stopped = []
    for lock in folder.rglob("engine.lock"):
        if stop_engine(lock.parent):
            stopped.append(lock.parent)
    return stopped
