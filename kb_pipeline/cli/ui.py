"""`kb ui`: the Dagster webserver and daemon on the storage of `kb`, stopped together.

Both run as child processes, each in its own process group, from DAGSTER_HOME (so Dagster reads
the instance's own `dagster.yaml`, not the template beside the code). SIGTERM or SIGINT to `kb ui`,
or either service exiting, stops both groups: SIGTERM first, SIGKILL after `STOP_SECONDS`; the code
servers they spawned are in the same groups and end with them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import typer

STOP_SECONDS = 20.0
POLL_SECONDS = 0.5


def service_commands(workspace: Path, host: str, port: int) -> list[list[str]]:
    """The webserver and daemon command lines (the venv's own console scripts)."""
    bin_dir = Path(sys.executable).parent
    return [
        [str(bin_dir / "dagster-webserver"), "-w", str(workspace), "-h", host, "-p", str(port)],
        [str(bin_dir / "dagster-daemon"), "run", "-w", str(workspace)],
    ]


class Services:
    """Child processes started together and always stopped together."""

    def __init__(self, commands: Sequence[Sequence[str]], cwd: Path) -> None:
        self.commands = [list(c) for c in commands]
        self.cwd = cwd
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        for command in self.commands:
            self.processes.append(subprocess.Popen(command, cwd=self.cwd, start_new_session=True))

    def wait(self) -> int:
        """Block until one service exits; its exit code."""
        while True:
            for process in self.processes:
                code = process.poll()
                if code is not None:
                    return code
            time.sleep(POLL_SECONDS)

    def stop(self) -> None:
        """SIGTERM every group, wait, then SIGKILL what is left (grandchildren included)."""
        self._signal_groups(signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(deadline - time.monotonic(), 0.1))
        self._signal_groups(signal.SIGKILL)
        for process in self.processes:
            process.wait()

    def _signal_groups(self, sig: signal.Signals) -> None:
        for process in self.processes:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                continue


def _raise_exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def run_ui(host: str, port: int) -> None:
    """Start webserver + daemon, block until a signal or a service exit, then stop both."""
    from kb_pipeline.instance import REPO_ROOT, prepare_environment

    prepare_environment()
    home = Path(os.environ["DAGSTER_HOME"])
    typer.echo(f"Dagster UI: http://{host}:{port}  (DAGSTER_HOME={home})")
    services = Services(service_commands(REPO_ROOT / "workspace.yaml", host, port), cwd=home)
    previous = {sig: signal.signal(sig, _raise_exit) for sig in (signal.SIGTERM, signal.SIGINT)}
    code = 0
    try:
        services.start()
        code = services.wait()
    except SystemExit as stop:
        code = int(stop.code or 0)
    finally:
        services.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    raise typer.Exit(code)
