"""Golden-set models, loader errors, and parity between the pydantic model and the JSON Schema."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from kb_eval.golden import (
    EmailThread,
    GoldenCase,
    GoldenFormatError,
    golden_schema,
    load_golden,
)
from kb_retrieval.models import Outcome, ReasonCode

CONTRACT_EXAMPLE: dict[str, Any] = {
    "case_id": "refund-5-days",
    "tenant_id": "alpine-treks",
    "email": "We would cancel 5 days before departure: is a full refund still possible? "
    "Your brochure promises 24-hour cancellation.",
    "trip_context": {
        "trip_id": "patagonia-2026-06-14",
        "trip_date": "2026-06-14",
        "product_name": "Patagonia Trek",
    },
    "sensitivity": ["refund"],
    "relevant": [
        {
            "doc_version_id": "docv_policy_refund_v5",
            "quote": "within 7 calendar days of departure are non-refundable",
        }
    ],
    "must_not_cite": ["docv_terms_2026_v1"],
    "expected_outcome": "NEEDS_REVIEW",
    "expected_flags": {"conflicting_evidence": True},
}
THREAD_EXAMPLE: dict[str, Any] = {
    "case_id": "thread-1",
    "tenant_id": "alpine-treks",
    "email": {
        "subject": "Packing",
        "messages": [
            {"role": "guest", "text": "What boots do I need?"},
            {"role": "operator", "text": "Which trip are you on?"},
            {"role": "guest", "text": "The Patagonia one, in June."},
        ],
    },
    "relevant": [],
    "expected_outcome": "UNKNOWN",
    "split": "holdout",
    "note": "no packing list indexed",
    "expected_reason_codes": ["NO_EVIDENCE"],
    "tags": ["packing"],
}
MINIMAL_EXAMPLE: dict[str, Any] = {
    "case_id": "m",
    "tenant_id": "t1",
    "email": "x",
    "relevant": [],
    "expected_outcome": "OK_TO_DRAFT",
}


def _write(tmp_path: Path, records: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _issues(path: Path) -> list[str]:
    with pytest.raises(GoldenFormatError) as info:
        load_golden(path)
    return [f"{issue.line}|{issue.field}|{issue.message}" for issue in info.value.issues]


def test_contract_example_and_thread_load(tmp_path: Path) -> None:
    path = _write(tmp_path, [CONTRACT_EXAMPLE, "", THREAD_EXAMPLE, MINIMAL_EXAMPLE])
    cases = load_golden(path)
    assert [c.case_id for c in cases] == ["refund-5-days", "thread-1", "m"]
    first, thread, minimal = cases
    assert first.expected_outcome is Outcome.NEEDS_REVIEW
    assert first.relevant[0].quote == "within 7 calendar days of departure are non-refundable"
    assert first.trip_context is not None and first.trip_context.trip_date_value is not None
    assert first.trip_context.trip_date_value.isoformat() == "2026-06-14"
    assert first.expected_flags == {"conflicting_evidence": True}
    assert isinstance(thread.email, EmailThread)
    assert thread.email_text == "The Patagonia one, in June."
    assert thread.split == "holdout"
    assert thread.expected_reason_codes == [ReasonCode.NO_EVIDENCE]
    assert minimal.must_not_cite == [] and minimal.expected_flags == {} and minimal.split is None
    assert minimal.email_text == "x"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"email": 5}, "email", "string or an object"),
        ({"email": {"messages": [{"role": "operator", "text": "hi"}]}}, "email.messages", "guest"),
        ({"email": {"messages": [{"role": "guest", "text": " "}]}}, "email.messages[0].text", ""),
        ({"email": {"messages": [{"role": "host", "text": "a"}]}}, "email.messages[0].role", ""),
        ({"relevant": [{"doc_version_id": "d"}]}, "relevant[0].quote", "required"),
        ({"relevant": [{"doc_version_id": "d", "quote": "q"}, {}]}, "relevant[1].quote", ""),
        ({"expected_outcome": "MAYBE"}, "expected_outcome", ""),
        ({"expected_flags": {"low_confidence": "yes"}}, "expected_flags.low_confidence", ""),
        ({"expected_flags": {"stale": True}}, "expected_flags.stale (key)", ""),
        ({"trip_context": {"trip_date": "2026-02-30"}}, "trip_context.trip_date", "day"),
        ({"trip_context": {"date": "2026-02-03"}}, "trip_context.date", "unknown field"),
        ({"tenant_id": "Alpine Treks"}, "tenant_id", "pattern"),
        ({"sensitivity": ["refund", "refund"]}, "sensitivity", "unique"),
        ({"sensitivity": ["weather"]}, "sensitivity[0]", ""),
        ({"expected_outcom": "UNKNOWN"}, "expected_outcom", "unknown field"),
        ({"split": "train"}, "split", ""),
    ],
)
def test_errors_name_line_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, message: str
) -> None:
    path = _write(tmp_path, [MINIMAL_EXAMPLE | {"case_id": "ok"}, MINIMAL_EXAMPLE | change])
    issues = _issues(path)
    assert any(i.startswith(f"2|{field}|") and message in i for i in issues), issues
    assert all(i.startswith("2|") for i in issues)


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(MINIMAL_EXAMPLE).encode() + b"\r\n")
    assert [c.case_id for c in load_golden(path)] == ["m"]


def test_missing_required_fields_and_non_object(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"case_id": "a"}, [1, 2], "{not json"])
    issues = _issues(path)
    for field in ("tenant_id", "email", "relevant", "expected_outcome"):
        assert f"1|{field}|Field required" in issues
    assert "2|(case)|a case must be a JSON object" in issues
    assert any(i.startswith("3|(line)|invalid JSON") for i in issues)


def test_duplicate_case_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, [MINIMAL_EXAMPLE, "", MINIMAL_EXAMPLE])
    issues = _issues(path)
    assert issues == ["3|case_id|duplicate case_id 'm' (first on line 1)"]
    with pytest.raises(GoldenFormatError, match=r"golden\.jsonl:3: case_id: duplicate"):
        load_golden(path)


def test_relevant_version_also_in_must_not_cite_is_rejected(tmp_path: Path) -> None:
    bad = CONTRACT_EXAMPLE | {"must_not_cite": ["docv_policy_refund_v5"]}
    issues = _issues(_write(tmp_path, [bad]))
    assert issues == [
        "1|relevant[0].doc_version_id|'docv_policy_refund_v5' is also listed in must_not_cite"
    ]


def test_every_issue_of_the_file_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path, [MINIMAL_EXAMPLE | {"email": ""}, MINIMAL_EXAMPLE | {"case_id": ""}])
    issues = _issues(path)
    assert [i.split("|")[:2] for i in issues] == [["1", "email"], ["2", "case_id"]]


def test_tenant_with_trailing_newline_is_rejected() -> None:
    with pytest.raises(ValidationError):
        GoldenCase.model_validate(MINIMAL_EXAMPLE | {"tenant_id": "alpine\n"})


def test_schema_is_valid_and_enums_match_shared_types() -> None:
    schema = golden_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$defs"]["outcome"]["enum"] == [o.value for o in Outcome]
    assert schema["$defs"]["reasonCode"]["enum"] == [r.value for r in ReasonCode]
    assert set(schema["properties"]) == set(GoldenCase.model_fields)
    assert set(schema["required"]) == {
        name for name, info in GoldenCase.model_fields.items() if info.is_required()
    }


VALUE_POOL: list[Any] = [
    None,
    0,
    1.5,
    True,
    "",
    " ",
    "x",
    "alpine-treks",
    "Alpine",
    "OK_TO_DRAFT",
    "NO_EVIDENCE",
    "guest",
    "operator",
    "tune",
    "2026-06-14",
    "2026-02-30",
    "2026-6-14",
    [],
    ["refund"],
    ["refund", "refund"],
    ["NO_EVIDENCE"],
    ["x", "y"],
    {},
    {"low_confidence": True},
    {"bogus": True},
    {"role": "guest", "text": "hi"},
    {"doc_version_id": "d", "quote": "q"},
    [{"doc_version_id": "d", "quote": "q"}],
    [{"role": "operator", "text": "x"}],
    {"messages": [{"role": "guest", "text": "hello"}]},
]


# Near-valid values per key, so that mutations probe each constraint and not only types.
KEY_POOL: dict[str, list[Any]] = {
    "sensitivity": [["refund", "refund"], ["medical", "legal"], ["weather"], [None]],
    "must_not_cite": [["a", "a"], ["a", "b"], [""], [" "]],
    "tags": [["a", "a"], ["a"], [""]],
    "expected_reason_codes": [["NO_EVIDENCE", "NO_EVIDENCE"], ["LOW_CONFIDENCE"], None],
    "messages": [
        [{"role": "operator", "text": "x"}],
        [{"role": "operator", "text": "x"}, {"role": "guest", "text": "y"}],
        [{"role": "guest"}],
        [],
    ],
    "note": [None, "", 3],
    "subject": [None, "", 3],
    "split": [None, "holdout", "train"],
    "trip_date": [None, "2026-06-14", "2026-13-01", "20260614", "2026-06-14T00:00:00"],
    "trip_context": [None, {}, {"trip_id": None}, {"trip_id": ""}],
    "expected_flags": [{}, {"low_confidence": False}, {"low_confidence": None}, {"x": False}],
    "tenant_id": ["ab", "a", "a_b-c", "-ab", "a" * 63, "a" * 64, "ab c"],
    "email": ["\t", {"subject": "s", "messages": [{"role": "guest", "text": "\n"}]}],
    "quote": [" q ", "\u00a0", "q"],
}


def _containers(node: Any, found: list[Any]) -> list[Any]:
    if isinstance(node, dict | list):
        found.append(node)
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            _containers(child, found)
    return found


def _mutate(case: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    case = copy.deepcopy(case)
    for _ in range(rng.randint(1, 2)):
        target = case if rng.random() < 0.4 else rng.choice(_containers(case, []))
        action = rng.random()
        if isinstance(target, dict):
            keys = sorted(target)
            if keys and action < 0.3:
                del target[rng.choice(keys)]
            elif keys and action < 0.85:
                key = rng.choice(keys)
                pool = KEY_POOL[key] if key in KEY_POOL and rng.random() < 0.6 else VALUE_POOL
                target[key] = copy.deepcopy(rng.choice(pool))
            else:
                target[rng.choice(["extra", "low_confidence", "subject", "split"])] = copy.deepcopy(
                    rng.choice(VALUE_POOL)
                )
        elif target and action < 0.5:
            target[rng.randrange(len(target))] = copy.deepcopy(rng.choice(VALUE_POOL))
        elif target and action < 0.7:
            target.pop(rng.randrange(len(target)))
        else:
            target.append(copy.deepcopy(rng.choice(VALUE_POOL)))
    return case


def _pydantic_accepts(data: Any) -> bool:
    try:
        GoldenCase.model_validate(data)
    except ValidationError:
        return False
    return True


def test_model_and_schema_agree_on_mutated_cases() -> None:
    validator = Draft202012Validator(
        golden_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    rng = random.Random(20260614)
    verdicts = {True: 0, False: 0}
    for base in (CONTRACT_EXAMPLE, THREAD_EXAMPLE, MINIMAL_EXAMPLE):
        assert validator.is_valid(base) and _pydantic_accepts(base)
        for _ in range(1000):
            candidate = _mutate(base, rng)
            model_ok = _pydantic_accepts(candidate)
            assert model_ok == validator.is_valid(candidate), json.dumps(candidate)
            verdicts[model_ok] += 1
    assert verdicts[True] > 100 and verdicts[False] > 100


@pytest.mark.parametrize(
    "example",
    [
        MINIMAL_EXAMPLE | {"email": {"messages": [{"role": "guest", "text": "a"}]}},
        MINIMAL_EXAMPLE
        | {"email": {"subject": None, "messages": [{"role": "guest", "text": "a"}]}},
        MINIMAL_EXAMPLE | {"trip_context": None, "split": None, "expected_reason_codes": None},
        MINIMAL_EXAMPLE | {"trip_context": {}},
        MINIMAL_EXAMPLE | {"note": None, "tags": ["a", "b"]},
        MINIMAL_EXAMPLE
        | {"expected_flags": {"low_confidence": False, "stale_only_evidence": True}},
    ],
)
def test_model_and_schema_accept_the_same_valid_examples(example: dict[str, Any]) -> None:
    validator = Draft202012Validator(
        golden_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    assert validator.is_valid(example)
    assert _pydantic_accepts(example)


@pytest.mark.parametrize(
    "example",
    [
        MINIMAL_EXAMPLE | {"email": {"messages": []}},
        MINIMAL_EXAMPLE | {"email": {"subject": "s"}},
        MINIMAL_EXAMPLE | {"email": None},
        MINIMAL_EXAMPLE | {"relevant": None},
        MINIMAL_EXAMPLE | {"sensitivity": None},
        MINIMAL_EXAMPLE | {"must_not_cite": ["a", "a"]},
        MINIMAL_EXAMPLE | {"sensitivity": ["refund", "refund"]},
        MINIMAL_EXAMPLE | {"expected_reason_codes": ["NO_EVIDENCE", "NO_EVIDENCE"]},
        MINIMAL_EXAMPLE | {"email": {"messages": [{"role": "operator", "text": "a"}]}},
        MINIMAL_EXAMPLE | {"expected_flags": {"low_confidence": 1}},
        MINIMAL_EXAMPLE | {"trip_context": {"trip_date": "14/06/2026"}},
        MINIMAL_EXAMPLE | {"trip_context": {"trip_id": ""}},
        MINIMAL_EXAMPLE | {"expected_reason_codes": ["NOT_A_CODE"]},
        MINIMAL_EXAMPLE | {"tenant_id": "a"},
        MINIMAL_EXAMPLE | {"case_id": 7},
    ],
)
def test_model_and_schema_reject_the_same_invalid_examples(example: dict[str, Any]) -> None:
    validator = Draft202012Validator(
        golden_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    assert not validator.is_valid(example)
    assert not _pydantic_accepts(example)
