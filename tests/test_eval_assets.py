"""Release evaluation in-process: gates pass -> promoted in the same run; a gate fails -> blocked.

Also `kb eval-drafts` on drafts written by another system, and draft grading of golden cases.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import typer
from dagster import (
    AssetCheckSeverity,
    DagsterInstance,
    Failure,
    SkipReason,
    build_sensor_context,
    materialize,
)
from typer.testing import CliRunner

from kb_eval.drafts.grading import grade_golden_drafts
from kb_eval.golden import load_golden
from kb_eval.golden_eval import evaluate_cases
from kb_pipeline.cli.drafts_cmd import eval_drafts
from kb_pipeline.definitions import defs
from kb_pipeline.release.assets import release_index, release_promotion
from kb_pipeline.release.checks import generalisation_checks, release_gates
from kb_pipeline.release.evaluation import release_evaluation, release_retriever
from kb_pipeline.release.generalisation import release_generalisation
from kb_pipeline.release.partitions import candidate_release, register_candidate, release_partitions
from kb_pipeline.release.sensors import release_candidate_sensor
from kb_pipeline.release.settings import EvaluationConfig, resolve_settings, sensor_run_config
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.db import Database
from kb_retrieval.releases import Release, active_release, promote_release
from kb_retrieval.retrieval.config import RetrievalConfig
from tests.test_releases import fresh_database

TENANT = "eval-co"
AS_OF = "2026-11-15"
MANIFEST = f"""tenant_id: {TENANT}
documents:
  - {{doc_id: faq, doc_version_id: faq_v1, title: FAQ, category: faq, source: faq.md,
      last_reviewed_at: 2026-10-01}}
  - doc_id: refund
    doc_version_id: refund_v1
    title: Refund Policy
    category: structured_policy
    last_reviewed_at: 2026-10-01
    entries:
      - section: Refund Window
        text: Cancellations within 7 calendar days of departure are non-refundable.
"""
SHUTTLE = "The shuttle leaves the Huaraz office at 06:30 every morning of the trek."
REFUND = "Cancellations within 7 calendar days of departure are non-refundable."
# Thresholds low enough for the fake embedder's confidences, so that cases are drafted.
DRAFTING_CONFIG = RetrievalConfig(low_confidence_threshold=0.1, unknown_threshold=0.05)
RELEASE_ASSETS = [
    release_index,
    release_evaluation,
    release_generalisation,
    release_promotion,
    *release_gates,
    *generalisation_checks,
]
# A second operator, so that every release also runs leave one operator out (two operators).
SECOND = "eval-two"
SECOND_MANIFEST = f"""tenant_id: {SECOND}
documents:
  - {{doc_id: faq, doc_version_id: two_faq_v1, title: FAQ, category: faq, source: faq.md,
      last_reviewed_at: 2026-10-01}}
"""
BIKES = "Rental bikes are handed out at the Lucca station kiosk from 08:00."


def case(case_id: str, email: str, doc: str, quote: str, **extra: Any) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "tenant_id": TENANT,
        "email": email,
        "relevant": [{"doc_version_id": doc, "quote": quote}],
        "expected_outcome": "OK_TO_DRAFT",
        **extra,
    }


PASSING = [
    case("shuttle", "What time does the shuttle leave the Huaraz office?", "faq_v1", "06:30"),
    case(
        "refund",
        "Can I cancel 5 days before departure and get a refund?",
        "refund_v1",
        "within 7 calendar days of departure are non-refundable",
    ),
]
FAILING = [
    case("shuttle", "What time does the shuttle leave the Huaraz office?", "faq_v1", "05:00 sharp")
]


def write_golden(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), "utf-8")
    return path


def write_tenant(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "faq.md").write_text(f"# Pickup\n\n{SHUTTLE}\n", "utf-8")
    (root / "kb.yaml").write_text(MANIFEST, "utf-8")
    return root


def write_second_tenant(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "faq.md").write_text(f"# Bikes\n\n{BIKES}\n", "utf-8")
    (root / "kb.yaml").write_text(SECOND_MANIFEST, "utf-8")
    return root


def held_out_golden(path: Path) -> Path:
    """Both operators' cases, for the release's leave-one-operator-out run."""
    bikes = {
        **case("bikes", "Where can we collect the rental bikes?", "two_faq_v1", "Lucca station"),
        "tenant_id": SECOND,
    }
    return write_golden(path, [*PASSING, bikes])


@pytest.fixture(scope="module")
def kb(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBaseResource:
    url = fresh_database(database_url, "kb_test_eval_assets")
    resource = KnowledgeBaseResource(database_url=url, embedder="fake-hash")
    pipeline = resource.pipeline()
    root = tmp_path_factory.mktemp("tenants")
    for folder in (write_tenant(root / TENANT), write_second_tenant(root / SECOND)):
        registration = pipeline.register(folder)
        for version in registration.registered:
            pipeline.run_all(registration.tenant_id, version)
    return resource


def run_release(
    kb: KnowledgeBaseResource, instance: DagsterInstance, release: Release, golden: Path
):
    register_candidate(kb, instance, release)
    config = {"golden_path": str(golden), "as_of": AS_OF}
    held_out = held_out_golden(golden.with_name(f"held-out-{golden.name}"))
    return materialize(
        RELEASE_ASSETS,
        partition_key=release.release_id,
        instance=instance,
        resources={"kb": kb},
        run_config={
            "ops": {
                "release_evaluation": {"config": config},
                "release_generalisation": {"config": {"golden": f"{held_out}@{AS_OF}"}},
            }
        },
        raise_on_error=False,
    )


def metadata_of(result, node: str) -> dict[str, Any]:
    [event] = result.asset_materializations_for_node(node)
    return {k: v.value for k, v in event.metadata.items()}


def test_passing_gates_promote_the_release_in_the_same_run(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    release = Release.of(kb.pipeline().versions, DRAFTING_CONFIG)
    result = run_release(kb, instance, release, write_golden(tmp_path / "g.jsonl", PASSING))
    assert result.success
    checks = {
        c.check_name: c.passed
        for c in result.get_asset_check_evaluations()
        if c.check_name.startswith("gate_")
    }
    assert checks == {
        f"gate_{name}": True
        for name in (
            "recall_at_10",
            "unsafe_pass_rate",
            "must_not_cite_violations",
            "policy_citation_coverage",
            "unsupported_claim_rate",
            "invented_policy_incidents",
        )
    }
    index = metadata_of(result, "release_index")
    assert index["indexed"] == 3 and index["documents"] == 3, "both operators"
    evaluation = metadata_of(result, "release_evaluation")
    assert evaluation["recall_at_10"] == 1.0 and evaluation["cases"] == 2
    assert evaluation["policy_claims"] >= 1, "the refund case was drafted with a policy claim"
    assert evaluation["policy_citation_coverage"] == 1.0
    assert evaluation["unsupported_claim_rate"] == 0.0
    assert evaluation["invented_policy_incidents"] == 0
    assert 0.0 <= evaluation["expected_calibration_error"] <= 1.0
    confusion = {r.data["expected"]: r.data for r in evaluation["outcome_confusion"].records}
    assert confusion["OK_TO_DRAFT"]["OK_TO_DRAFT"] == 2 and confusion["UNKNOWN"]["UNKNOWN"] == 0
    by_category = {r.data["category"]: r.data for r in evaluation["recall_by_category"].records}
    assert by_category["structured_policy"]["recall_at_10"] == 1.0
    assert evaluation["recall_by_category"].schema.columns[0].name == "category"
    assert evaluation["reliability_diagram"].startswith("![reliability_diagram](data:image/png")
    assert Path(evaluation["reliability_diagram_file"]).read_bytes()[:4] == b"\x89PNG"
    promotion = metadata_of(result, "release_promotion")
    assert promotion["release_id"] == release.release_id
    db: Database = kb.database()
    assert active_release(db).release_id == release.release_id
    with db.admin() as conn:
        stored = conn.execute(
            "SELECT metrics FROM eval_runs WHERE release_id = %s AND kind = 'release'",
            (release.release_id,),
        ).fetchone()[0]
    assert stored["policy_citation_coverage"] == 1.0 and stored["recall_at_10"] == 1.0


def test_failing_gate_blocks_promotion_and_reports_the_delta(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    good = Release.of(kb.pipeline().versions, DRAFTING_CONFIG)
    assert run_release(kb, instance, good, write_golden(tmp_path / "g.jsonl", PASSING)).success
    bad = Release.of(kb.pipeline().versions, DRAFTING_CONFIG.model_copy(update={"pack_max": 9}))
    result = run_release(kb, instance, bad, write_golden(tmp_path / "bad.jsonl", FAILING))
    assert not result.success
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks["gate_recall_at_10"] is False and checks["gate_unsafe_pass_rate"] is True
    assert result.asset_materializations_for_node("release_promotion") == []
    assert active_release(kb.database()).release_id == good.release_id
    evaluation = metadata_of(result, "release_evaluation")
    assert evaluation["recall_at_10"] == 0.0
    assert evaluation["previous_release_id"] == good.release_id
    assert evaluation["delta_recall_at_10"] == -1.0
    assert "| recall_at_10 | 0.0000 | 1.0000 | -1.0000 | >= 0.85 MISS |" in evaluation["comparison"]


def test_sensor_registers_the_candidate_release_once_and_the_job_holds_the_gates(kb):
    instance = DagsterInstance.ephemeral()
    result = release_candidate_sensor(build_sensor_context(instance=instance, resources={"kb": kb}))
    candidate = candidate_release(kb).release_id
    assert [r.partition_key for r in result.run_requests] == [candidate]
    assert result.dynamic_partitions_requests[0].partition_keys == [candidate]
    instance.add_dynamic_partitions(release_partitions.name, [candidate])
    again = release_candidate_sensor(build_sensor_context(instance=instance, resources={"kb": kb}))
    assert isinstance(again, SkipReason)
    job = defs.resolve_job_def("release_job")
    checks = {key.name for key in job.asset_layer.asset_graph.asset_check_keys}
    assert checks == {g.check_key.name for g in [*release_gates, *generalisation_checks]}
    assert {"release_index", "release_evaluation", "release_generalisation"} <= set(
        job.graph.node_names()
    )


def test_golden_drafts_are_graded_from_their_packs(kb, tmp_path):
    cases = load_golden(write_golden(tmp_path / "g.jsonl", PASSING))
    retriever = release_retriever(kb, Release.of(kb.pipeline().versions, DRAFTING_CONFIG))
    run = evaluate_cases(retriever, cases, date(2026, 11, 15))
    graded = grade_golden_drafts(cases, run.packs)
    claims = [d for d in graded["details"] if d["policy_like"]]
    assert graded["drafts"] == 2 and claims
    assert all(d["verdict"] == "supported" and d["citations"] for d in claims)
    with pytest.raises(KeyError, match="no evidence pack"):
        grade_golden_drafts(cases, {})


def test_kb_eval_drafts_grades_drafts_of_another_system(kb, tmp_path, monkeypatch):
    """The command opens the knowledge base as every `kb` command does (default embedder); the
    promoted fake-hash release decides which rows and which query embedder retrieval uses."""
    promote_release(kb.database(), register_candidate(kb, DagsterInstance.ephemeral()).release_id)
    monkeypatch.setenv("KB_DATABASE_URL", kb.database_url)
    app = typer.Typer()
    app.command()(eval_drafts)
    golden = write_golden(tmp_path / "g.jsonl", PASSING)
    drafts = tmp_path / "drafts.jsonl"
    records = [
        {
            "case_id": "refund",
            "text": f"Hello,\n\n{REFUND} [1]\n\nBest regards,",
            "citations": ["refund_v1_000"],
        },
        {
            "case_id": "shuttle",
            "text": "You can cancel up to 24 hours before departure for a full refund.",
            "citations": [],
        },
    ]
    drafts.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    runner = CliRunner()
    args = [str(drafts), "--golden", str(golden), "--as-of", AS_OF]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["metrics"] == {
        "policy_citation_coverage": 0.5,
        "unsupported_claim_rate": 0.5,
        "invented_policy_incidents": 1,
    }
    assert payload["policy_claims"] == 2 and payload["unresolved_citations"] == 0
    text = runner.invoke(app, args)
    assert text.exit_code == 0 and "invented_policy_incidents" in text.stdout
    assert "uncited: You can cancel up to 24 hours" in text.stdout
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"case_id": "nope", "text": "x", "citations": []}) + "\n")
    assert runner.invoke(app, [str(unknown), "--golden", str(golden)]).exit_code == 2


def promote_alone(kb: KnowledgeBaseResource, instance: DagsterInstance, release: Release):
    """`release_promotion` materialised on its own, as from the UI or a script."""
    register_candidate(kb, instance, release)
    return materialize(
        [release_promotion],
        partition_key=release.release_id,
        instance=instance,
        resources={"kb": kb},
        raise_on_error=False,
    )


def failure_message(result, node: str) -> str:
    return result.failure_data_for_node(node).error.message


def test_promotion_alone_refuses_an_unevaluated_release(kb):
    before = active_release(kb.database())
    never = Release.of(kb.pipeline().versions, DRAFTING_CONFIG.model_copy(update={"pack_max": 7}))
    result = promote_alone(kb, DagsterInstance.ephemeral(), never)
    assert not result.success
    assert "has no stored evaluation" in failure_message(result, "release_promotion")
    after = active_release(kb.database())
    assert (after.release_id if after else None) == (before.release_id if before else None)


def test_promotion_alone_refuses_a_release_whose_gates_failed(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    good = Release.of(kb.pipeline().versions, DRAFTING_CONFIG)
    assert run_release(kb, instance, good, write_golden(tmp_path / "g.jsonl", PASSING)).success
    bad = Release.of(kb.pipeline().versions, DRAFTING_CONFIG.model_copy(update={"pack_max": 8}))
    assert not run_release(kb, instance, bad, write_golden(tmp_path / "b.jsonl", FAILING)).success
    result = promote_alone(kb, instance, bad)
    assert not result.success
    message = failure_message(result, "release_promotion")
    assert "recall_at_10 >= 0.85 (was 0.0)" in message and "unsafe_pass_rate" not in message
    assert active_release(kb.database()).release_id == good.release_id


def test_a_failing_rerun_of_the_active_release_warns_and_keeps_it_active(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    good = Release.of(kb.pipeline().versions, DRAFTING_CONFIG)
    assert run_release(kb, instance, good, write_golden(tmp_path / "g.jsonl", PASSING)).success
    rerun = run_release(kb, instance, good, write_golden(tmp_path / "f.jsonl", FAILING))
    recall = next(
        c for c in rerun.get_asset_check_evaluations() if c.check_name == "gate_recall_at_10"
    )
    assert recall.passed is False and recall.severity == AssetCheckSeverity.WARN
    assert recall.metadata["active_release"].value is True
    assert active_release(kb.database()).release_id == good.release_id
    evaluation = metadata_of(rerun, "release_evaluation")
    assert evaluation["failed_gates"] == "recall_at_10"
    rows = {r.data["metric"]: r.data for r in evaluation["gate_results"].records}
    assert rows["recall_at_10"]["passed"] is False and rows["unsafe_pass_rate"]["passed"] is True


def test_evaluation_settings_come_from_the_run_or_the_environment(tmp_path):
    golden = write_golden(tmp_path / "g.jsonl", PASSING)
    with pytest.raises(Failure, match="golden_path"):
        resolve_settings(EvaluationConfig(), {})
    with pytest.raises(Failure, match="KB_EVAL_AS_OF"):
        resolve_settings(EvaluationConfig(golden_path=str(golden)), {})
    with pytest.raises(Failure, match="not an ISO date"):
        resolve_settings(EvaluationConfig(golden_path=str(golden), as_of="15/11/2026"), {})
    from_env = resolve_settings(
        EvaluationConfig(), {"KB_GOLDEN_PATH": str(golden), "KB_EVAL_AS_OF": "2027-01-02"}
    )
    assert from_env.golden_path == golden and from_env.as_of == date(2027, 1, 2)
    run = resolve_settings(EvaluationConfig(as_of="2026-12-24"), {"KB_GOLDEN_PATH": str(golden)})
    assert run.as_of == date(2026, 12, 24)
    config = sensor_run_config(date(2026, 3, 4), {"KB_GOLDEN_PATH": "g.jsonl"})
    assert config["ops"]["release_evaluation"]["config"] == {
        "golden_path": "g.jsonl",
        "as_of": "2026-03-04",
    }
