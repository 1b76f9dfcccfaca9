"""No test copies a golden e-mail (issue 12): tests are written in fresh wording.

A test file may share a run of seven words (numbers read as one token) with a golden e-mail only
when that run is the specification's own text: seed 000 section 8's worked examples fix the
query plans of three e-mails, and those tests must quote them.
"""

from __future__ import annotations

import json
import re

from tests.conftest import GOLDEN, REPO, SHARED

RUN = 7
GOLDEN_SETS = (GOLDEN, SHARED / "data" / "devset" / "golden.jsonl")
SPEC_TEXTS = (*sorted((SHARED / "seeds").glob("*.txt")), SHARED / "spec" / "contracts.md")


def words(text: str) -> list[str]:
    """Lower-case words with every number read as N, so "5 days" and "7 days" match."""
    return [re.sub(r"[0-9]+", "N", word) for word in re.findall(r"[a-z0-9']+", text.lower())]


def runs(text: str) -> set[tuple[str, ...]]:
    found = words(text)
    return {tuple(found[i : i + RUN]) for i in range(len(found) - RUN + 1)}


def email_text(email: str | dict) -> str:
    """Every message and the subject of the raw JSON (`GoldenCase.email_text` is only the latest
    guest message, and a test could copy any of them)."""
    if isinstance(email, str):
        return email
    messages = " ".join(message.get("text", "") for message in email.get("messages", []))
    return f"{messages} {email.get('subject', '')}"


def golden_runs() -> dict[tuple[str, ...], str]:
    owner: dict[tuple[str, ...], str] = {}
    for path in GOLDEN_SETS:
        for line in path.read_text().splitlines():
            if line.strip():
                case = json.loads(line)
                for run in runs(email_text(case["email"])):
                    owner.setdefault(run, case["case_id"])
    return owner


def test_the_check_finds_a_copied_email_and_spares_fresh_wording() -> None:
    owner = golden_runs()
    copied = email_text(json.loads(GOLDEN.read_text().splitlines()[0])["email"])
    assert runs(copied) & owner.keys()
    assert not runs("Could a guest bring a folding bicycle on the ferry crossing next spring?") & (
        owner.keys()
    )


def test_no_test_file_quotes_a_golden_email() -> None:
    owner = golden_runs()
    spec = set().union(*(runs(path.read_text()) for path in SPEC_TEXTS))
    quoted = {
        (path.name, owner[run], " ".join(run))
        for path in sorted((REPO / "tests").rglob("*.py"))
        for run in runs(path.read_text()) & owner.keys()
        if run not in spec
    }
    assert not quoted, sorted(quoted)
