"""Start ``python -m mooring`` processes without paying for their imports each time.

The suite runs the ``mooring`` CLI as a real process hundreds of times, and most of each
command's CPU was importing: SQLAlchemy, the host and its services, the MCP SDK (whose type
models pydantic builds at import). Measured here, ``mooring rules list``: 1.32 CPU-s as a new
process, 0.19 as a fork of a process that has imported them.

So each test worker keeps one *zygote*: a Python process, started once, that imports Mooring's
modules (not Qt) and then waits. :func:`run` asks it for a command; it forks, and the fork
becomes what ``python -m mooring ARGS`` would be: the caller's arguments, environment, working
directory and standard streams (passed over a Unix socket), ``sys.argv`` and ``__main__`` as
``-m`` sets them, and an ordinary interpreter exit (threads joined, ``atexit``, buffers
flushed). The zygote waits for it and reports the exit status, signals included. Each command
is still its own process with its own pid; only the imports are shared.

What a fork cannot be is a process whose *interpreter* started under other settings: a request
whose environment differs from the zygote's in a variable the interpreter or the C library reads
at start (``PYTHON…``, ``LANG``/``LC_…``, ``TZ``) runs as a new process instead, and so does
everything when ``MOORING_TEST_FRESH_PROCESSES=1``. Tests that are about start-up itself (what a
command imports, how long it takes) start their processes themselves. What every fork shares
with the zygote, set when it started: the str hash seed, resource limits and ignored signals,
and every module loaded (so the canary and first-use tests run their commands fresh: a module
a command forgot to import shows there).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import io
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FRESH_VARIABLE = "MOORING_TEST_FRESH_PROCESSES"
RUNTIME_PYTHON_VARIABLES = frozenset({"PYTHON_KEYRING_BACKEND", "PYTHONBREAKPOINT"})
"""``PYTHON…`` variables read while running, not as the interpreter starts."""
MAX_REQUEST = 1 << 18
STATUS_SIZE = 64
SKIPPED = ("mooring.ui", "mooring.storage.migrations.")
"""Not imported ahead: the window (Qt), and Alembic's scripts (run by Alembic, not imported)."""
KEPT = frozenset({"mooring.storage.migrations.head_schema"})


def _starts_interpreter(name: str) -> bool:
    """Whether ``name`` is read as the interpreter (or the C library) starts (``PYTHONPATH``
    is, but a fork can follow it: see :func:`_become`)."""
    if name.startswith("PYTHON"):
        return name not in RUNTIME_PYTHON_VARIABLES and name != "PYTHONPATH"
    return name in {"LANG", "TZ"} or name.startswith("LC_")


def _start_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if _starts_interpreter(k)}


@dataclass
class _Zygote:
    process: subprocess.Popen[bytes]
    control: socket.socket
    settings: dict[str, str]
    lock: threading.Lock


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


def _the_zygote() -> _Zygote:
    """This test process's zygote, started at first use and stopped at exit."""
    global _zygote
    with _zygote_lock:
        if _zygote is not None and _zygote.process.poll() is None:
            return _zygote
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.zygote", str(theirs.fileno())],
            cwd=REPO,
            env=env,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        ready = ours.recv(STATUS_SIZE)  # the imports are done (or failed: an empty read)
        if ready != b"ready":
            ours.close()
            process.wait(timeout=30)
            raise RuntimeError(f"the zygote did not start (exit {process.returncode})")
        _zygote = _Zygote(process, ours, _start_settings(env), threading.Lock())
        atexit.register(_stop, _zygote)
        return _zygote


def pid() -> int | None:
    """The process id of this test process's zygote, if it has one running."""
    zygote = _zygote
    return zygote.process.pid if zygote is not None and zygote.process.poll() is None else None


def _stop(zygote: _Zygote) -> None:
    zygote.control.close()  # its end of file: the zygote exits
    try:
        zygote.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        zygote.process.kill()
        zygote.process.wait()


def run(
    module: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
    stdin_closed: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` to its end, as :func:`subprocess.run` with ``capture_output``
    and ``text``: stdout, stderr and the exit code (``-N`` for signal N); on ``timeout`` the
    process is killed and :class:`subprocess.TimeoutExpired` raised. It runs in ``cwd`` (or
    this process's directory), its stdin this process's, or ``/dev/null`` if ``stdin_closed``."""
    command = [sys.executable, "-m", module, *args]
    where = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    if os.environ.get(FRESH_VARIABLE) == "1" or os.name != "posix":
        return _fresh(command, env, timeout, where, stdin_closed)
    zygote = _the_zygote()
    if _start_settings(env) != zygote.settings:
        return _fresh(command, env, timeout, where, stdin_closed)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin = os.open(os.devnull, os.O_RDONLY) if stdin_closed else os.dup(0)
    status_ours, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mask = os.umask(0)
    os.umask(mask)
    request = json.dumps(
        {"module": module, "args": list(args), "env": dict(env), "cwd": where, "umask": mask}
    )
    try:
        try:
            with zygote.lock:
                socket.send_fds(
                    zygote.control,
                    [request.encode()],
                    [stdin, out_w, err_w, status_theirs.fileno()],
                )
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
            status_theirs.close()
        # Closing the status socket, whatever ends this (a timeout, an error, an interrupt),
        # tells the zygote to kill the command if it still runs.
        return _collect(command, out_r, err_r, status_ours, timeout)
    except _Lost:  # the zygote is gone (the next run starts another): this one runs fresh
        return _fresh(command, env, timeout, where, stdin_closed)
    except OSError as exc:
        if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ECONNREFUSED):
            raise
        return _fresh(command, env, timeout, where, stdin_closed)
    finally:
        os.close(out_r)
        os.close(err_r)
        status_ours.close()


class _Lost(Exception):
    """The zygote ended before it started the command."""


def _fresh(
    command: list[str], env: Mapping[str, str], timeout: float, cwd: str, stdin_closed: bool
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL if stdin_closed else None,
        timeout=timeout,
        check=False,
    )


def _collect(
    command: list[str], out_r: int, err_r: int, status: socket.socket, timeout: float
) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    pid: int | None = None
    code: int | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(out_r, selectors.EVENT_READ)
        selector.register(err_r, selectors.EVENT_READ)
        selector.register(status, selectors.EVENT_READ)
        open_streams = 3
        while open_streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                # As subprocess.run: kill it and wait for it. Only the zygote kills (the pid
                # is its child; once reaped, the number may be another process's).
                if code is None:
                    status.shutdown(socket.SHUT_WR)
                    status.settimeout(30)
                    with contextlib.suppress(OSError):
                        while status.recv(STATUS_SIZE):
                            pass
                raise subprocess.TimeoutExpired(
                    command, timeout, b"".join(chunks[out_r]), b"".join(chunks[err_r])
                )
            for key, _ in selector.select(remaining):
                if key.fileobj is status:
                    message = status.recv(STATUS_SIZE)
                    if not message:
                        selector.unregister(status)
                        open_streams -= 1
                        continue
                    news: dict[str, int] = json.loads(message)
                    pid = news.get("pid", pid)
                    code = news.get("code", code)
                    continue
                fd = key.fd
                data = os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                else:
                    selector.unregister(fd)
                    open_streams -= 1
    if code is None:
        if pid is None:
            raise _Lost(command)
        raise RuntimeError(f"the zygote lost {command!r} (pid {pid})")
    return subprocess.CompletedProcess(
        command, code, _as_text(b"".join(chunks[out_r])), _as_text(b"".join(chunks[err_r]))
    )


def _as_text(data: bytes) -> str:
    """What ``subprocess.run(text=True)`` makes of ``data``: the locale's encoding, strict,
    and universal newlines (a lone carriage return too becomes a newline)."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- the zygote itself ---------------------------------------------------------------------


def _preload() -> None:
    """Import what commands import: every Mooring module but the window's, and the SDKs."""
    import importlib
    import pkgutil

    import mooring

    for info in pkgutil.walk_packages(mooring.__path__, "mooring."):
        name = info.name
        if (name.startswith(SKIPPED) and name not in KEPT) or name.endswith("__main__"):
            continue
        importlib.import_module(name)
    for name in ("mcp.client", "mcp.server", "openai", "anthropic", "keyring"):
        importlib.import_module(name)
    _start_engines_here()
    if threading.active_count() != 1:  # a fork copies only the thread that forks
        raise RuntimeError(f"importing started threads: {threading.enumerate()}")


# --- engines (``mooring agent run``) started by forked commands ------------------------------

_SPAWNS: list[socket.socket] = []
"""The zygote's listening socket for engines its commands start (at most one)."""


def _start_engines_here() -> None:
    """Have the commands forked from here start their engine as a fork of this zygote too.

    A command that finds no engine starts ``mooring agent run`` (``mooring.link.spawn``);
    in a fork of the zygote that start asks the zygote over a socket instead, which forks
    the engine, in a session of its own and not its child (a double fork: it outlives both
    the command and the zygote, as a real engine outlives its starter), with the command's
    pipes for its ``ready`` line. Only the interpreter start is saved; everything after is
    the engine's own code."""
    import tempfile

    import mooring.link.spawn as spawn

    folder = tempfile.mkdtemp(prefix="mooring-zygote-")
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listening.bind(os.path.join(folder, "spawn"))
    listening.listen(16)
    _SPAWNS.append(listening)
    real = spawn._spawn
    address = listening.getsockname()

    def through_zygote(command: Sequence[str]) -> Any:
        if list(command[:3]) != [sys.executable, "-m", "mooring"] or os.getpid() == _ZYGOTE_PID[0]:
            return real(command)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        mask = os.umask(0)
        os.umask(mask)
        request = json.dumps(
            {
                "module": "mooring",
                "args": list(command[3:]),
                "env": {**os.environ, spawn.HANDSHAKE_ENV: "1"},
                "cwd": os.getcwd(),
                "umask": mask,
            }
        )
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as asking:
                asking.connect(address)
                socket.send_fds(asking, [request.encode()], [stdin, out_w, err_w])
                asking.recv(STATUS_SIZE)  # forked (or refused: an empty read)
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        return spawn._Started(None, out_r, err_r)

    spawn._spawn = through_zygote


_ZYGOTE_PID = [0]


def _fork_engine(listening: socket.socket) -> _Job | None:
    """Fork the engine a command asked for, detached (see :func:`_start_engines_here`):
    returns its job in the engine's process, ``None`` in the zygote's."""
    asking, _ = listening.accept()
    with asking:
        message, fds, _, _ = socket.recv_fds(asking, MAX_REQUEST, 3)
        if not message or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return None
        request: dict[str, Any] = json.loads(message)
        job = _Job(
            request["module"],
            request["args"],
            request["env"],
            request["cwd"],
            request["umask"],
            [*fds, -1],
        )
        first = os.fork()
        if first == 0:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)  # the engine's parent ends at once: init adopts the engine
            asking.send(b"forked")
            return job
        for fd in fds:
            os.close(fd)
        os.waitpid(first, 0)
        return None


@dataclass
class _Job:
    module: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    umask: int
    fds: list[int]


def _serve(control: socket.socket) -> _Job:
    """Fork a process per request and report how each ends; returns only in a fork."""
    waiting: dict[int, socket.socket] = {}
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    for listening in _SPAWNS:
        selector.register(listening, selectors.EVENT_READ)

    def forget() -> None:
        """In a fork: close what is the zygote's (a descriptor kept open would keep a caller
        waiting for the end of a stream)."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        selector.close()
        for fd in (wake_r, wake_w):
            os.close(fd)
        control.close()
        for other in waiting.values():
            other.close()
        for kept in _SPAWNS:
            kept.close()

    while True:
        for key, _ in selector.select():
            if key.fd == wake_r:
                os.read(wake_r, 4096)
                continue
            if key.fileobj in _SPAWNS:
                listening = key.fileobj
                assert isinstance(listening, socket.socket)
                try:
                    engine = _fork_engine(listening)
                except OSError as exc:
                    sys.stderr.write(f"zygote: cannot start an engine: {exc}\n")
                    continue
                if engine is not None:  # the engine's process: nothing of the zygote's kept
                    forget()
                    return engine
                continue
            if key.fileobj is not control:  # a caller hung up: its command must not outlive it
                hung_up = key.fileobj
                assert isinstance(hung_up, socket.socket)
                with contextlib.suppress(OSError):
                    hung_up.recv(STATUS_SIZE)
                selector.unregister(hung_up)  # (a reaped command's socket is unregistered)
                os.kill(key.data, signal.SIGKILL)
                continue
            message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 4)
            if not message:  # the test process is gone
                for pid in waiting:
                    os.kill(pid, signal.SIGKILL)
                raise SystemExit(0)
            reply = socket.socket(fileno=fds[3])
            try:
                request: dict[str, Any] = json.loads(message)
                job = _Job(
                    request["module"],
                    request["args"],
                    request["env"],
                    request["cwd"],
                    request["umask"],
                    fds,
                )
                pid = os.fork()
            except Exception as exc:  # noqa: BLE001  # say so; the caller runs it fresh
                sys.stderr.write(f"zygote: cannot start {message[:200]!r}: {exc}\n")
                for fd in fds[:3]:
                    os.close(fd)
                reply.close()
                continue
            if pid == 0:
                forget()
                reply.send(json.dumps({"pid": os.getpid()}).encode())
                reply.close()
                return job
            for fd in fds[:3]:
                os.close(fd)
            waiting[pid] = reply
            selector.register(reply, selectors.EVENT_READ, pid)
        while waiting:  # reap whatever ended (a SIGCHLD may stand for several)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            done = waiting.pop(pid, None)
            if done is not None:
                with contextlib.suppress(KeyError):  # unless its caller hung up already
                    selector.unregister(done)
                with contextlib.suppress(OSError):  # the caller gave up on it (a timeout)
                    done.send(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode())
                done.close()


def _become(job: _Job) -> None:
    """Turn this fork into ``python -m MODULE ARGS`` started by the caller."""
    import runpy
    import types

    stdin, stdout, stderr, _ = job.fds
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    _new_stdio()
    os.chdir(job.cwd)
    os.umask(job.umask)
    # sys.path as a new interpreter builds it: the working directory (-m), PYTHONPATH (an
    # empty entry is the working directory; site makes entries absolute and drops repeats),
    # then the rest (the standard library, site-packages and their .pth entries).
    here = os.getcwd()
    pythonpath = job.env.get("PYTHONPATH", "")
    entries = pythonpath.split(os.pathsep) if pythonpath else []
    extra = list(dict.fromkeys(os.path.abspath(p) if p else here for p in entries))
    sys.path[:] = [here, *extra, *(p for p in _BASE_PATH if p not in extra)]
    os.environ.clear()
    os.environ.update(job.env)
    sys.argv = [job.module, *job.args]
    sys.modules["__main__"] = types.ModuleType("__main__")  # -m runs in a __main__ of its own
    runpy._run_module_as_main(job.module, alter_argv=True)  # type: ignore[attr-defined]


def _new_stdio() -> None:
    """Standard streams as a new interpreter makes them for these descriptors (CPython's
    ``create_stdio``: stdout line buffered only on a terminal, stderr always; with ``-u`` or
    ``PYTHONUNBUFFERED``, unbuffered), nothing of the zygote's buffered in them."""
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, mode, closefd=False)
        unbuffered = mode == "w" and old.write_through  # as the zygote's own: same settings
        buffer: io.RawIOBase | io.BufferedIOBase
        if unbuffered:
            buffer = raw
        elif mode == "r":
            buffer = io.BufferedReader(raw)
        else:
            buffer = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            buffer,
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",
            line_buffering=mode == "w" and not unbuffered and (fd == 2 or raw.isatty()),
            write_through=unbuffered,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


_BASE_PATH: list[str] = []
"""The zygote's ``sys.path`` from the standard library on (what PYTHONPATH does not add)."""


def _base_path() -> list[str]:
    zipped = f"python{sys.version_info[0]}{sys.version_info[1]}.zip"
    start = next(i for i, p in enumerate(sys.path) if p.endswith(zipped))
    return sys.path[start:]


if __name__ == "__main__":
    channel = socket.socket(fileno=int(sys.argv[1]))
    _ZYGOTE_PID[0] = os.getpid()
    _BASE_PATH[:] = _base_path()
    _preload()
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send(b"ready")
    _become(_serve(channel))
