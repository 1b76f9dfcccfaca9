"""Draft metrics (001 item 8) on hand-made drafts with known answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb_eval.drafts.metrics import (
    DraftFormatError,
    DraftRecord,
    attribute_citations,
    grade_drafts,
    load_draft_records,
)

EVIDENCE = {
    "A": {
        "a1": "Cancellations within 7 calendar days of departure are non-refundable.",
        "a2": "Bookings are confirmed on receipt of a 20% deposit.",
        "a3": "Helmets are mandatory on the via ferrata.",
    },
    "B": {
        "b1": "Check-out from the lodge is at 12:00.",
        "b2": "Solo travellers pay a single supplement of USD 350.",
    },
}

DRAFTS = [
    DraftRecord(
        "A",
        "Hi Anna,\n\nCancellations within 7 days of departure are non-refundable [1]. "
        "A 20% deposit confirms your booking [1]. Helmets are mandatory on the via ferrata. "
        "The lodge has a lake view.\n\nBest regards,\nMaria",
        ("a1", "a2"),
    ),
    DraftRecord(
        "A",
        "Cancellations within 7 days of departure are fully refundable. "
        "Children under 5 travel free of charge.",
        ("a1",),
    ),
    DraftRecord(
        "B",
        "The deposit is non-refundable. Solo travellers pay a single supplement of $350.",
        (
            {"chunk_id": "b2", "claim": "Solo travellers pay a single supplement of $350."},
            {"chunk_id": "zz_missing", "claim": "The deposit is non-refundable."},
        ),
    ),
]


def lookup(case_id: str, chunk_id: str) -> str | None:
    return EVIDENCE.get(case_id, {}).get(chunk_id)


def case_evidence(case_id: str) -> list[str]:
    return list(EVIDENCE[case_id].values())


def test_metric_arithmetic() -> None:
    result = grade_drafts(DRAFTS, lookup, case_evidence)
    assert result["drafts"] == 3
    assert result["policy_claims"] == 7
    assert result["cited_policy_claims"] == 6
    assert result["policy_citation_coverage"] == pytest.approx(6 / 7)
    assert result["unsupported_policy_claims"] == 5
    assert result["unsupported_claim_rate"] == pytest.approx(5 / 7)
    assert result["invented_policy_incidents"] == 3
    assert result["unresolved_citations"] == 1
    invented = sorted(d["claim"] for d in result["details"] if d.get("invented"))
    assert invented == [
        "Cancellations within 7 days of departure are fully refundable.",
        "Children under 5 travel free of charge.",
        "The deposit is non-refundable.",
    ]
    not_policy = [d["claim"] for d in result["details"] if not d["policy_like"]]
    assert not_policy == ["The lodge has a lake view."]


def test_invented_falls_back_to_cited_evidence() -> None:
    result = grade_drafts(DRAFTS, lookup)
    assert result["invented_policy_incidents"] == 5
    assert result["unsupported_policy_claims"] == 5


def test_no_policy_claims_is_vacuously_clean() -> None:
    result = grade_drafts([DraftRecord("B", "Hello,\n\nThe lodge has a lake view.", ())], lookup)
    assert result["policy_claims"] == 0
    assert result["policy_citation_coverage"] == 1.0
    assert result["unsupported_claim_rate"] == 0.0
    assert result["invented_policy_incidents"] == 0


def test_citation_attribution_modes() -> None:
    markers = attribute_citations(DRAFTS[0])
    assert markers == [
        ("Cancellations within 7 days of departure are non-refundable.", ["a1"]),
        ("A 20% deposit confirms your booking.", ["a1"]),
        ("Helmets are mandatory on the via ferrata.", []),
        ("The lodge has a lake view.", []),
    ]
    by_id = attribute_citations(DraftRecord("A", "Deposits are 20% [a2]. See [note].", ("a2",)))
    assert by_id == [("Deposits are 20%.", ["a2"]), ("See [note].", [])]
    after_stop = attribute_citations(DraftRecord("A", "Deposits are 20%. [1] Bye now.", ("a2",)))
    assert after_stop == [("Deposits are 20%.", ["a2"]), ("Bye now.", [])]
    plain = attribute_citations(DRAFTS[1])
    assert [cited for _, cited in plain] == [["a1"], ["a1"]]
    claimed = attribute_citations(DRAFTS[2])
    assert [cited for _, cited in claimed] == [["zz_missing"], ["b2"]]


def test_load_draft_records(tmp_path: Path) -> None:
    path = tmp_path / "drafts.jsonl"
    rows = [
        {"case_id": "A", "text": "Hi.", "citations": ["a1", {"chunk_id": "a2", "claim": "x"}]},
        {"case_id": "B", "text": "", "citations": []},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    records = load_draft_records(path)
    assert [r.case_id for r in records] == ["A", "B"]
    assert records[0].citations == ("a1", {"chunk_id": "a2", "claim": "x"})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"text": "x", "citations": []}', "field 'case_id'"),
        ('{"case_id": "A", "citations": []}', "field 'text'"),
        ('{"case_id": "A", "text": "x"}', "field 'citations'"),
        (
            '{"case_id": "A", "text": "x", "citations": ["a1", {"claim": "y"}]}',
            "field 'citations[1]'",
        ),
    ],
)
def test_load_errors_name_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"case_id": "A", "text": "x", "citations": []})
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(DraftFormatError) as error:
        load_draft_records(path)
    assert f"{path}:2:" in str(error.value)
    assert message in str(error.value)
