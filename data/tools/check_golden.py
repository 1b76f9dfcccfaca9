"""Check the golden set against the demo tenants' documents.

Usage: .venv/bin/python data/tools/check_golden.py [GOLDEN.jsonl] [--as-of 2026-11-15]

Verifies, for every case: the contract section 2 format (plus the optional "split" and
"expected_reason_codes" fields), that every relevant doc_version_id exists in the tenant's
manifest and is live on the as-of date, that every quote (5-15 words) occurs after
normalisation (NFKC, casefold, whitespace collapse) inside one text unit of that version
(a PDF page, a DOCX paragraph or cell, an HTML block, a Markdown/TXT paragraph, a structured
entry) and, for generated files, inside one paragraph of the hand-written source; that
must_not_cite ids exist; and that outcomes, reason codes and staleness labels agree with the
labelling rules. Prints coverage counts; exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from kbtext import (
    TENANTS,
    Manifest,
    load_manifests,
    manifest_problems,
    normalise,
    source_units,
    version_units,
)

GOLDEN = TENANTS.parent / "golden" / "golden.jsonl"
OUTCOMES = ("OK_TO_DRAFT", "NEEDS_REVIEW", "UNKNOWN", "ASK_CLARIFYING_QUESTION")
REASON_CODES = (
    "NO_EVIDENCE",
    "LOW_CONFIDENCE",
    "STALE_ONLY_EVIDENCE",
    "CONFLICT_DETECTED",
    "MISSING_REQUIRED_PRECEDENCE",
    "MARKETING_ONLY_EVIDENCE",
    "EXCEPTION_REQUEST",
    "SENSITIVE_TOPIC",
    "QUERY_TOO_VAGUE",
    "AMBIGUOUS_CONTEXT",
)
REQUIRED = ("case_id", "tenant_id", "email", "relevant", "expected_outcome")
OPTIONAL = (
    "trip_context",
    "sensitivity",
    "must_not_cite",
    "expected_flags",
    "split",
    "expected_reason_codes",
)
FLAGS = ("stale_only_evidence", "conflicting_evidence", "low_confidence")
SENSITIVITIES = ("refund", "safety", "medical", "legal", "exceptions")


def _check_email(email: Any) -> list[str]:
    if isinstance(email, str):
        return [] if email.strip() else ["email is empty"]
    if not isinstance(email, dict) or set(email) != {"subject", "messages"}:
        return ["email must be a string or {subject, messages}"]
    messages = email["messages"]
    if not isinstance(messages, list) or not messages:
        return ["email.messages must be a non-empty list"]
    problems = [
        "each message needs role guest|operator and a text"
        for message in messages
        if message.get("role") not in ("guest", "operator") or not message.get("text")
    ]
    if not any(message.get("role") == "guest" for message in messages):
        problems.append("a thread needs at least one guest message")
    return problems


def _check_format(case: dict[str, Any]) -> list[str]:
    problems = [f"missing field {key}" for key in REQUIRED if key not in case]
    problems += [f"unknown field {key}" for key in case if key not in REQUIRED + OPTIONAL]
    problems += _check_email(case.get("email"))
    if case.get("expected_outcome") not in OUTCOMES:
        problems.append(f"bad expected_outcome {case.get('expected_outcome')!r}")
    for code in case.get("expected_reason_codes", []):
        if code not in REASON_CODES:
            problems.append(f"unknown reason code {code}")
    if case.get("split") not in ("tune", "holdout"):
        problems.append("split must be tune or holdout")
    for flag in case.get("expected_flags", {}):
        if flag not in FLAGS:
            problems.append(f"unknown flag {flag}")
    for topic in case.get("sensitivity", []):
        if topic not in SENSITIVITIES:
            problems.append(f"unknown sensitivity {topic}")
    return problems


def _check_relevant(case: dict[str, Any], manifest: Manifest, as_of: date) -> list[str]:
    problems: list[str] = []
    for item in case.get("relevant", []):
        version_id, quote = item.get("doc_version_id"), item.get("quote", "")
        version = manifest.versions.get(version_id)
        if version is None:
            problems.append(f"{version_id} is not in the {manifest.tenant_id} manifest")
            continue
        if not version.live(as_of, manifest):
            problems.append(f"{version_id} is not retrievable on {as_of}")
        words = len(quote.split())
        if not 5 <= words <= 15:
            problems.append(f"quote has {words} words (5-15): {quote!r}")
        needle = normalise(quote)
        if not any(needle in normalise(unit) for unit in version_units(version)):
            problems.append(f"quote not found in one text unit of {version_id}: {quote!r}")
        source = source_units(version)
        if source is not None and not any(needle in normalise(unit) for unit in source):
            problems.append(f"quote crosses a paragraph of the source of {version_id}: {quote!r}")
        if version_id in case.get("must_not_cite", []):
            problems.append(f"{version_id} is both relevant and must_not_cite")
    return problems


def _check_labels(case: dict[str, Any], manifest: Manifest, as_of: date) -> list[str]:
    outcome = case["expected_outcome"]
    reasons = set(case.get("expected_reason_codes", []))
    relevant = case.get("relevant", [])
    versions = [manifest.versions.get(item["doc_version_id"]) for item in relevant]
    stale = [version.stale(as_of) for version in versions if version is not None]
    problems: list[str] = []
    if outcome == "UNKNOWN" and (relevant or "NO_EVIDENCE" not in reasons):
        problems.append("UNKNOWN needs NO_EVIDENCE and no relevant items")
    if outcome == "ASK_CLARIFYING_QUESTION" and not reasons & {
        "QUERY_TOO_VAGUE",
        "AMBIGUOUS_CONTEXT",
    }:
        problems.append("ASK_CLARIFYING_QUESTION needs QUERY_TOO_VAGUE or AMBIGUOUS_CONTEXT")
    if outcome == "OK_TO_DRAFT" and reasons - {"STALE_ONLY_EVIDENCE"}:
        problems.append("OK_TO_DRAFT may only carry STALE_ONLY_EVIDENCE")
    if outcome in ("OK_TO_DRAFT", "NEEDS_REVIEW") and not relevant:
        problems.append(f"{outcome} needs relevant items")
    stale_label = "STALE_ONLY_EVIDENCE" in reasons
    if stale_label != case.get("expected_flags", {}).get("stale_only_evidence", stale_label):
        problems.append("stale flag and reason code disagree")
    if stale_label and not all(stale):
        problems.append("STALE_ONLY_EVIDENCE but a relevant version is fresh")
    if outcome == "OK_TO_DRAFT" and not stale_label and stale and all(stale):
        problems.append("OK_TO_DRAFT on stale evidence needs STALE_ONLY_EVIDENCE")
    conflict = "CONFLICT_DETECTED" in reasons
    if conflict != case.get("expected_flags", {}).get("conflicting_evidence", conflict):
        problems.append("conflict flag and reason code disagree")
    return problems


def check(golden: Path, as_of: date) -> tuple[list[str], list[dict[str, Any]]]:
    """Return (problems, cases)."""
    manifests = load_manifests()
    all_version_ids = {vid for m in manifests.values() for vid in m.versions}
    problems = [problem for m in manifests.values() for problem in manifest_problems(m)]
    cases: list[dict[str, Any]] = []
    for number, line in enumerate(golden.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        case = json.loads(line)
        cases.append(case)
        label = f"line {number} ({case.get('case_id')})"
        case_problems = _check_format(case)
        manifest = manifests.get(case.get("tenant_id", ""))
        if manifest is None:
            case_problems.append(f"unknown tenant {case.get('tenant_id')!r}")
        elif not case_problems:
            case_problems += _check_relevant(case, manifest, as_of)
            case_problems += _check_labels(case, manifest, as_of)
        for version_id in case.get("must_not_cite", []):
            if version_id not in all_version_ids:
                case_problems.append(f"must_not_cite {version_id} is in no manifest")
        problems += [f"{label}: {problem}" for problem in case_problems]
    ids = Counter(case.get("case_id") for case in cases)
    problems += [f"duplicate case_id {cid}" for cid, count in ids.items() if count > 1]
    reasons_seen = {code for case in cases for code in case.get("expected_reason_codes", [])}
    problems += [
        f"no case covers reason code {code}" for code in REASON_CODES if code not in reasons_seen
    ]
    outcomes_seen = {case.get("expected_outcome") for case in cases}
    problems += [
        f"no case expects {outcome}" for outcome in OUTCOMES if outcome not in outcomes_seen
    ]
    return problems, cases


def not_live(as_of: date) -> list[str]:
    """Versions that retrieval must not return on as_of, with the reason."""
    lines = []
    for manifest in load_manifests().values():
        for version in manifest.versions.values():
            if version.live(as_of, manifest):
                continue
            if not version.effective(as_of):
                why = f"effective only from {version.effective_date}"
            elif not any(unit.strip() for unit in version_units(version)):
                why = "no text layer (scan)"
            else:
                why = "superseded"
            lines.append(f"  not retrievable on {as_of}: {version.doc_version_id} ({why})")
    return lines


def summary(cases: list[dict[str, Any]]) -> str:
    """Coverage counts per tenant, outcome, reason code and split."""
    lines = [f"{len(cases)} cases"]
    for title, key in (
        ("tenant", "tenant_id"),
        ("outcome", "expected_outcome"),
        ("split", "split"),
    ):
        counts = Counter(case.get(key) for case in cases)
        lines.append(f"  by {title}: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    split_outcome = Counter((case["expected_outcome"], case.get("split")) for case in cases)
    lines.append(
        "  split by outcome: "
        + ", ".join(
            f"{o}={split_outcome[(o, 'tune')]}/{split_outcome[(o, 'holdout')]}" for o in OUTCOMES
        )
    )
    reasons = Counter(code for case in cases for code in case.get("expected_reason_codes", []))
    lines.append("  by reason code: " + ", ".join(f"{c}={reasons[c]}" for c in REASON_CODES))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="?", type=Path, default=GOLDEN)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2026, 11, 15))
    args = parser.parse_args(argv)
    problems, cases = check(args.golden, args.as_of)
    print(summary(cases))
    print("\n".join(not_live(args.as_of)))
    for problem in problems:
        print(f"PROBLEM {problem}")
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
