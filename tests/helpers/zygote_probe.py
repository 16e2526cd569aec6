"""A stand-in command for the zygote's own tests: ``python -m tests.helpers.zygote_probe WHAT``."""

from __future__ import annotations

import atexit
import io
import json
import os
import signal
import sys
import threading


def after_main() -> None:
    """Write once the main thread is done: the exit waits for this thread, then runs atexit."""
    threading.main_thread().join()
    sys.stdout.write("from a thread\n")


def main(what: str) -> int:
    """Do ``what``; the tests compare the outcome with a new process's."""
    if what == "describe":
        json.dump(
            {
                "argv": sys.argv[1:],
                "cwd": os.getcwd(),
                "path": sys.path,
                "marker": os.environ.get("ZYGOTE_PROBE"),
                "main": sys.modules["__main__"].__name__,
                "pid": os.getpid(),
                "parent": os.getppid(),
                "threads": threading.active_count(),
                "sigint": str(signal.getsignal(signal.SIGINT)),
                "encoding": sys.stdout.encoding,
                "buffering": [
                    (s.line_buffering, s.write_through)
                    for s in (sys.stdout, sys.stderr)
                    if isinstance(s, io.TextIOWrapper)
                ],
                "umask": os.umask(0o022),
            },
            sys.stdout,
        )
        return 0
    if what == "bytes":  # line endings and characters the caller's decoding must keep as-is
        sys.stdout.buffer.write("one\r\ntwo\rthree \u2013 \u2603\n".encode())
        return 0
    if what == "fail":
        sys.stderr.write("probe: failing as asked\n")
        return 3
    if what == "raise":
        raise ValueError("probe: raised as asked")
    if what == "kill":
        os.kill(os.getpid(), signal.SIGTERM)
    if what == "hang":
        sys.stdout.write(f"hanging {os.getpid()}\n")
        sys.stdout.flush()
        signal.pause()
    if what == "late":  # written by an exit handler and a thread the exit waits for
        atexit.register(sys.stdout.write, "at exit\n")
        threading.Thread(target=after_main).start()
        sys.stdout.write("buffered, no newline")
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
