"""Request bodies of the service (pydantic): what `ask` accepts, checked before retrieval."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Sensitivity = Literal["refund", "safety", "medical", "legal", "exceptions"]


def _utf8_text(value: str, what: str) -> str:
    """Non-blank text that encodes as UTF-8 (a JSON string may carry lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{what} is not valid UTF-8 text") from error
    if not value.strip():
        raise ValueError(f"{what} is empty")
    return value


class Message(BaseModel):
    """One message of a thread, oldest first."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["guest", "operator"]
    text: str

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        return _utf8_text(value, "message text")


class EmailThread(BaseModel):
    """A thread: optional subject and its messages, at least one from the guest."""

    model_config = ConfigDict(extra="forbid")
    subject: str | None = None
    messages: list[Message] = Field(min_length=1, max_length=50)

    @field_validator("messages")
    @classmethod
    def _has_guest(cls, value: list[Message]) -> list[Message]:
        if not any(m.role == "guest" for m in value):
            raise ValueError("a thread needs at least one guest message")
        return value


class TripContext(BaseModel):
    """What the assistant already knows about the guest's trip."""

    model_config = ConfigDict(extra="forbid")
    trip_date: date | None = None
    trip_id: str | None = Field(None, max_length=200)
    product_name: str | None = Field(None, max_length=200)

    def as_dict(self) -> dict[str, Any] | None:
        out = {k: (v.isoformat() if isinstance(v, date) else v) for k, v in self if v is not None}
        return out or None


class AskRequest(BaseModel):
    """Body of `POST /v1/tenants/{tenant}/ask` and arguments of the MCP `ask` tool."""

    model_config = ConfigDict(extra="forbid")
    email: str | EmailThread = Field(
        description="The guest email as text, or a thread {subject, messages: [{role, text}]}."
    )
    trip_context: TripContext | None = None
    as_of: date | None = Field(
        None, description="ISO date staleness and effective dates are judged at (default: today)."
    )
    sensitivity: list[Sensitivity] | None = Field(
        None, description="Sensitive topics the caller already knows about."
    )
    audit: bool = Field(False, description="Include superseded versions, marked.")

    @field_validator("email")
    @classmethod
    def _email(cls, value: str | EmailThread) -> str | EmailThread:
        return _utf8_text(value, "email") if isinstance(value, str) else value

    def email_value(self) -> str | dict[str, Any]:
        """The email as `Retriever.retrieve` takes it."""
        if isinstance(self.email, str):
            return self.email
        return self.email.model_dump(exclude_none=True)
