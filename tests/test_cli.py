"""`kb ask` and `kb eval` as the contract (section 5) describes them, on the real server and model."""

from __future__ import annotations

import json

from kb_eval.metrics import METRIC_NAMES
from kb_retrieval.retrieval.pack import validate_pack
from tests.conftest import EVAL_AS_OF, GOLDEN

REFUND = (
    "We would cancel 5 days before departure: is a full refund still possible? "
    "Your brochure promises 24-hour cancellation."
)


def test_kb_ask_json_is_a_valid_evidence_pack(kb_cli):
    result = kb_cli("ask", "--tenant", "alpine-treks", "--json", "--as-of", EVAL_AS_OF, REFUND)
    assert result.exit_code == 0, result.output
    pack = json.loads(result.stdout)
    validate_pack(pack)
    assert pack["tenant_id"] == "alpine-treks" and pack["as_of"] == EVAL_AS_OF
    assert pack["outcome"] == "NEEDS_REVIEW"
    assert pack["evidence"][0]["category"] == "structured_policy"


def test_kb_ask_reads_standard_input_and_prints_a_table(kb_cli):
    result = kb_cli(
        "ask", "--tenant", "alpine-treks", "--as-of", EVAL_AS_OF, "-", input=REFUND + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "NEEDS_REVIEW" in result.stdout and "CONFLICT_DETECTED" in result.stdout
    assert "docv_policy_refund_v5" in result.stdout


def test_kb_ask_usage_errors_exit_2_with_a_message(kb_cli):
    unknown = kb_cli("ask", "--tenant", "no-such-tenant", REFUND)
    assert unknown.exit_code == 2 and "no-such-tenant" in unknown.output
    assert "kb ingest" in unknown.output
    bad_date = kb_cli("ask", "--tenant", "alpine-treks", "--as-of", "15/11/2026", REFUND)
    assert bad_date.exit_code == 2 and "--as-of" in bad_date.output
    assert kb_cli("ask", "--tenant", "alpine-treks", "  ").exit_code == 2


def test_kb_eval_json_has_exactly_the_contract_metrics(kb_cli, tmp_path):
    lines = [line for line in GOLDEN.read_text().splitlines() if line.strip()][:6]
    golden = tmp_path / "small.jsonl"
    golden.write_text("\n".join(lines) + "\n")
    result = kb_cli("eval", str(golden), "--json", "--as-of", EVAL_AS_OF)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload["metrics"]) == set(METRIC_NAMES)
    assert payload["cases"] == 6 and payload["as_of"] == EVAL_AS_OF
    assert all(0.0 <= payload["metrics"][k] <= 1.0 for k in METRIC_NAMES if k.endswith("10"))


def test_kb_eval_rejects_a_tenant_that_was_never_ingested(kb_cli, tmp_path):
    case = json.loads(GOLDEN.read_text().splitlines()[0])
    case["tenant_id"] = "never-ingested"
    golden = tmp_path / "other.jsonl"
    golden.write_text(json.dumps(case) + "\n")
    result = kb_cli("eval", str(golden), "--json")
    assert result.exit_code == 2 and "never-ingested" in result.output
    assert kb_cli("eval", str(tmp_path / "missing.jsonl")).exit_code == 2
