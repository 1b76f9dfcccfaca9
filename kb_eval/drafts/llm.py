"""Optional drafter backed by an OpenAI-compatible chat-completions endpoint.

Off by default: `drafter_from_env()` returns the extractive drafter unless both KB_LLM_BASE_URL
(e.g. https://api.openai.com/v1 or http://localhost:11434/v1) and KB_LLM_MODEL are set;
KB_LLM_API_KEY is sent as a bearer token when set. The model only writes the body of the reply
for OK_TO_DRAFT and NEEDS_REVIEW packs (UNKNOWN and clarifying questions use the fixed
templates of kb_eval.drafts.drafters); it sees the evidence numbered [1]..[n] and must put [n] after
every sentence that states a policy. A draft whose policy-like sentence is uncited or not
supported by its cited chunks (kb_eval.judge.claim_judge) gets status "needs_review". The HTTP call goes
through an injectable transport.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kb_eval.drafts.drafters import (
    Citation,
    Draft,
    Drafter,
    DraftSentence,
    ExtractiveDrafter,
    render,
    verdict_draft,
)
from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.claims import is_policy_like, split_sentences

Transport = Callable[[str, Mapping[str, str], bytes, float], bytes]
EVIDENCE_CHARS = 1500
SYSTEM_PROMPT = (
    "You draft replies to guests of a tour operator. Use only the numbered evidence. "
    "After every sentence that states a policy (refunds, cancellation, deposits, payments, "
    "ages, fitness, medical or safety rules, weather, waivers, liability, inclusions, "
    "exclusions, guarantees, exceptions) put the number of the evidence that states it in "
    "square brackets, e.g. [2]. Never state a policy that the evidence does not state; when "
    "the evidence does not answer, say that the team will confirm. Write only the body of the "
    "reply: no greeting, no sign-off, at most five sentences, plain text."
)
_MARKERS = re.compile(r"\s*\[(\d+(?:\s*,\s*\d+)*)\]")
_MARKERS_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\d+(?:\s*,\s*\d+)*\])+)")


class LLMError(RuntimeError):
    """The endpoint failed or answered something that is not a chat completion."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    max_tokens: int = 600

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMConfig | None:
        """Configuration from KB_LLM_* variables, or None when the adapter is off."""
        env = os.environ if environ is None else environ
        base_url = env.get("KB_LLM_BASE_URL", "").strip()
        model = env.get("KB_LLM_MODEL", "").strip()
        if not base_url or not model:
            return None
        return cls(base_url, model, env.get("KB_LLM_API_KEY", "").strip() or None)


def urllib_transport(url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> bytes:
    """POST body to url with the standard library and return the response body."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bytes(response.read())
    except OSError as error:
        raise LLMError(f"request to {url} failed: {error}") from error


def evidence_prompt(pack: Mapping[str, Any], guest_text: str) -> str:
    """The user message: the guest's email and the evidence numbered from 1."""
    lines = ["Guest email:", guest_text.strip(), "", "Evidence:"]
    for number, item in enumerate(pack.get("evidence") or (), 1):
        title = item.get("doc_title") or item.get("doc_version_id") or "document"
        section = f", section {item['section_title']}" if item.get("section_title") else ""
        text = " ".join(str(item.get("text") or item.get("snippet") or "").split())
        lines.append(
            f"[{number}] {title} ({item.get('category')}{section}): {text[:EVIDENCE_CHARS]}"
        )
    return "\n".join(lines)


def parse_reply(content: str, pack: Mapping[str, Any]) -> tuple[list[DraftSentence], list[str]]:
    """Body sentences with their cited chunk ids; numbers outside the evidence are dropped."""
    evidence = list(pack.get("evidence") or ())
    body = _MARKERS_AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", content.strip())
    sentences: list[DraftSentence] = []
    used: list[str] = []
    for raw in split_sentences(body):
        numbers = [int(n) for group in _MARKERS.findall(raw) for n in group.split(",")]
        chunk_ids: list[str] = []
        for number in numbers:
            if 1 <= number <= len(evidence):
                chunk_id = str(evidence[number - 1]["chunk_id"])
                if chunk_id not in chunk_ids:
                    chunk_ids.append(chunk_id)
        text = " ".join(_MARKERS.sub("", raw).split())
        text = re.sub(r"\s+([.!?,;:])", r"\1", text)
        if not text:
            continue
        sentences.append(DraftSentence(text, is_policy_like(text), tuple(chunk_ids)))
        used.extend(cid for cid in chunk_ids if cid not in used)
    return sentences, used


class OpenAICompatibleDrafter(Drafter):
    """Drafter that asks a chat-completions model for the body of the reply."""

    def __init__(self, config: LLMConfig, transport: Transport = urllib_transport) -> None:
        self.config = config
        self.transport = transport

    def request(
        self, pack: Mapping[str, Any], guest_text: str
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        """URL, headers and JSON payload of the chat-completions call."""
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        payload = {
            "model": self.config.model,
            "temperature": 0,
            "max_tokens": self.config.max_tokens,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": evidence_prompt(pack, guest_text)},
            ],
        }
        return url, headers, payload

    def complete(self, pack: Mapping[str, Any], guest_text: str) -> str:
        """The model's answer text."""
        url, headers, payload = self.request(pack, guest_text)
        raw = self.transport(url, headers, json.dumps(payload).encode("utf-8"), self.config.timeout)
        try:
            answer = json.loads(raw)
            content = answer["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise LLMError(f"unexpected chat-completions answer: {raw[:200]!r}") from error
        if not isinstance(content, str):
            raise LLMError("chat-completions answer has no text content")
        return content

    def draft(self, pack: Mapping[str, Any], guest_text: str, case_id: str | None = None) -> Draft:
        early = verdict_draft(pack, case_id)
        if early is not None:
            return early
        reasons = tuple(str(code) for code in pack.get("reason_codes") or ())
        sentences, used = parse_reply(self.complete(pack, guest_text), pack)
        if not sentences:
            return Draft(case_id, "", [], [], "no_draft", reasons)
        by_id = {str(item["chunk_id"]): item for item in pack.get("evidence") or ()}
        citations = [Citation.from_evidence(by_id[chunk_id]) for chunk_id in used]
        status = "draft" if pack.get("outcome") == "OK_TO_DRAFT" else "needs_review"
        if any(not _grounded(sentence, by_id) for sentence in sentences):
            status = "needs_review"
        text = render([sentence.text for sentence in sentences])
        return Draft(case_id, text, sentences, citations, status, reasons)


def _grounded(sentence: DraftSentence, evidence: Mapping[str, Mapping[str, Any]]) -> bool:
    """A policy-like sentence must be cited and supported by its cited chunks (judge)."""
    if not sentence.policy_like:
        return True
    texts = [str(evidence[cid].get("text") or "") for cid in sentence.citations if cid in evidence]
    return bool(texts) and judge_claim(sentence.text, texts).label == "supported"


def drafter_from_env(
    environ: Mapping[str, str] | None = None, transport: Transport = urllib_transport
) -> Drafter:
    """The LLM drafter when KB_LLM_BASE_URL and KB_LLM_MODEL are set, else the extractive one."""
    config = LLMConfig.from_env(environ)
    if config is None:
        return ExtractiveDrafter()
    return OpenAICompatibleDrafter(config, transport)
