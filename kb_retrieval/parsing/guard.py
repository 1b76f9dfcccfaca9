"""Run `parse_file` in a warm worker process with a time limit and an address-space limit.

One worker process (multiprocessing "spawn" context: a fresh interpreter, never a fork of a
parent that may hold torch threads) is kept and reused across calls, so a batch pays the
start-up once. The worker sets RLIMIT_AS to `max_memory_mb` before it takes work.

- the parse takes longer than `timeout_s` -> the worker is killed and replaced,
  ParseError(PARSE_TIMEOUT);
- the worker runs out of memory or dies (killed, crashed) -> it is replaced,
  ParseError(PARSE_TOO_LARGE);
- a ParseError raised in the worker arrives unchanged in the caller.
Worker start-up (about a second) is not counted in `timeout_s`. Calls are serialised by a
lock; a call with a different `max_memory_mb` than the running worker replaces it. Paths
are sent as absolute paths, so messages name the file absolutely.

As with any "spawn" process, the worker re-imports the caller's `__main__` module: a script
that calls this at import time must use the `if __name__ == "__main__":` guard.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import multiprocessing
import os
import pickle
import resource
import signal
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from kb_retrieval.models import IngestReason, ParsedDocument
from kb_retrieval.parsing import parse_file
from kb_retrieval.parsing.errors import ParseError

STARTUP_TIMEOUT_S = 120.0
PR_SET_PDEATHSIG = 1
_READY = "ready"


def _limit_memory(max_memory_mb: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = max_memory_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _handle(request: str) -> tuple[str, Any]:
    try:
        return ("ok", parse_file(Path(request)))
    except ParseError as error:
        return ("error", error)
    except MemoryError:
        return (
            "error",
            ParseError.for_file(IngestReason.PARSE_TOO_LARGE, request, "out of memory"),
        )
    except Exception as exc:
        detail = f"parser crashed ({type(exc).__name__}: {exc})"
        return ("error", ParseError.for_file(IngestReason.PARSE_CORRUPT_FILE, request, detail))


def _die_with_parent(parent_pid: int) -> None:
    """Linux: SIGKILL this worker when its parent dies (even by kill -9), so no orphan is left."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker_main(conn: Connection, max_memory_mb: int, parent_pid: int | None = None) -> None:
    """Worker loop: receive a path, send back ("ok", document) or ("error", ParseError)."""
    if parent_pid is not None:
        _die_with_parent(parent_pid)
    _limit_memory(max_memory_mb)
    conn.send(_READY)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        reply = _handle(request)
        try:
            conn.send(reply)
        except MemoryError:
            return
        except Exception as exc:
            detail = f"result could not be sent ({type(exc).__name__})"
            conn.send(
                ("error", ParseError.for_file(IngestReason.PARSE_CORRUPT_FILE, request, detail))
            )


class _Worker:
    """One parser process and the parent's end of its pipe."""

    def __init__(self, max_memory_mb: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child_conn = context.Pipe()
        self.max_memory_mb = max_memory_mb
        self.process = context.Process(
            target=_worker_main,
            args=(child_conn, max_memory_mb, os.getpid()),
            name="kb-parse-worker",
            daemon=True,
        )
        self.process.start()
        child_conn.close()
        if not self.conn.poll(STARTUP_TIMEOUT_S) or self._recv_ready() != _READY:
            self.stop()
            raise RuntimeError("parser worker process did not start")

    def _recv_ready(self) -> object:
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            return None

    def exit_code(self) -> int | None:
        self.process.join(timeout=5)
        return self.process.exitcode

    def stop(self, graceful: bool = True) -> None:
        if graceful and self.process.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(timeout=1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


_lock = threading.Lock()
_worker: _Worker | None = None


def _get_worker(max_memory_mb: int) -> _Worker:
    global _worker
    if _worker is not None and (
        _worker.max_memory_mb != max_memory_mb or not _worker.process.is_alive()
    ):
        _discard_worker()
    if _worker is None:
        _worker = _Worker(max_memory_mb)
    return _worker


def _discard_worker(graceful: bool = True) -> None:
    global _worker
    if _worker is not None:
        _worker.stop(graceful)
        _worker = None


def shutdown_worker() -> None:
    """Stop the warm worker process (it is started again on the next call)."""
    with _lock:
        _discard_worker()


atexit.register(shutdown_worker)


def parse_file_guarded(
    path: Path, timeout_s: float = 60, max_memory_mb: int = 2048
) -> ParsedDocument:
    """`parse_file` in the warm worker process, bounded in time and memory."""
    with _lock:
        request = str(Path(path).absolute())
        worker = _get_worker(max_memory_mb)
        try:
            worker.conn.send(request)
        except OSError:
            _discard_worker(graceful=False)
            worker = _get_worker(max_memory_mb)
            worker.conn.send(request)
        if not worker.conn.poll(timeout_s):
            _discard_worker(graceful=False)
            raise ParseError.for_file(
                IngestReason.PARSE_TIMEOUT, path, f"parsing took longer than {timeout_s:g} s"
            )
        try:
            status, payload = worker.conn.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            code = worker.exit_code()
            _discard_worker()
            raise ParseError.for_file(
                IngestReason.PARSE_TOO_LARGE,
                path,
                f"parser worker died (exit code {code}); the document is too large to parse",
            ) from None
        if status == "ok":
            return payload
        if payload.reason == IngestReason.PARSE_TOO_LARGE:
            _discard_worker()
        raise payload
