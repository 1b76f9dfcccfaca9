"""How the BEIR runner's long stages report progress, and a hook that reports nothing."""

from __future__ import annotations

from typing import Protocol


class ProgressHook(Protocol):
    """Where long stages report progress (the CLI shows a rich progress bar)."""

    def stage(self, name: str, total: int) -> None: ...

    def advance(self, count: int = 1) -> None: ...


class SilentProgress:
    """The default hook: progress goes nowhere."""

    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None
