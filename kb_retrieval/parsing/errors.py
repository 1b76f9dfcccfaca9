"""The one exception of the parsers: a reason code, the lifecycle state it leads to, the file."""

from __future__ import annotations

from pathlib import Path

from kb_retrieval.models import IngestReason, LifecycleState

NEEDS_ATTENTION_REASONS = frozenset(
    {IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED, IngestReason.PARSE_EMPTY_DOCUMENT}
)


def default_state(reason: IngestReason) -> LifecycleState:
    """needs_attention for documents a person must look at (no text), failed for the rest."""
    if reason in NEEDS_ATTENTION_REASONS:
        return LifecycleState.NEEDS_ATTENTION
    return LifecycleState.FAILED


class ParseError(Exception):
    """A document could not be parsed; `reason` and `state` say how its ingestion ends.

    `message` (also `str(error)`) starts with the file it concerns. The exception pickles
    unchanged, so it crosses the process boundary of the guard as it was raised.
    """

    def __init__(
        self,
        reason: IngestReason,
        message: str,
        state: LifecycleState | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = IngestReason(reason)
        self.message = message
        self.state = default_state(self.reason) if state is None else LifecycleState(state)
        if self.state not in (LifecycleState.FAILED, LifecycleState.NEEDS_ATTENTION):
            raise ValueError(f"ParseError state must be failed or needs_attention, not {state}")

    @classmethod
    def for_file(cls, reason: IngestReason, path: Path | str, detail: str) -> ParseError:
        """Build the error with a message of the form '<path>: <detail>'."""
        return cls(reason, f"{path}: {detail}")

    def __reduce__(self) -> tuple[type[ParseError], tuple[IngestReason, str, LifecycleState]]:
        return (type(self), (self.reason, self.message, self.state))

    def __repr__(self) -> str:
        return f"ParseError({self.reason.value}, {self.message!r}, state={self.state.value})"
