"""Every release measures held-out operators: `release_generalisation` runs leave one operator
out through the same call as `kb eval ... --cv tenant`, stores the figures with the release, and
its safety checks block promotion while the quality targets only warn."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetCheckSeverity, DagsterInstance, Failure, materialize
from typer.testing import CliRunner

from kb_eval.gates import GENERALISATION_GATES, failed_generalisation_gates
from kb_pipeline.cli import app
from kb_pipeline.release.assets import release_index, release_promotion
from kb_pipeline.release.checks import generalisation_checks, release_gates
from kb_pipeline.release.evaluation import release_evaluation
from kb_pipeline.release.generalisation import release_generalisation
from kb_pipeline.release.partitions import register_candidate
from kb_pipeline.release.settings import GeneralisationConfig, resolve_cv_specs, sensor_run_config
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.releases import Release, active_release, promote_release
from kb_retrieval.retrieval.config import RetrievalConfig
from tests.test_releases import fresh_database

# Three small operators written for this test (fresh wording).
OPERATORS = {
    "gen-fjord": (
        "Kayaks launch from the Balestrand jetty at 09:15 each morning.",
        "Deposits are refundable until 21 days before the paddle week starts.",
    ),
    "gen-desert": (
        "Camel caravans leave the Merzouga camp at 16:40 to reach the dunes by sunset.",
        "A booking cancelled 10 days or more ahead gets half of the deposit back.",
    ),
    "gen-island": (
        "The ferry to Vis sails from Split harbour at 07:50 on weekdays.",
        "Guests may change their sailing date once without a fee up to 14 days before.",
    ),
}
QUESTIONS = {
    "gen-fjord": ("When do the kayaks launch from the jetty?", "Is my deposit refundable?"),
    "gen-desert": ("What time does the camel caravan leave camp?", "Do I get my deposit back?"),
    "gen-island": ("When does the ferry to Vis sail?", "Can we move our sailing date?"),
}
FIRST, SECOND = "2026-11-15", "2026-11-22"
# Low enough for the fake embedder's confidences, so that cases are drafted.
DRAFTING = RetrievalConfig(low_confidence_threshold=0.1, unknown_threshold=0.05)


def manifest(tenant: str) -> str:
    return f"""tenant_id: {tenant}
documents:
  - {{doc_id: faq, doc_version_id: {tenant}_faq_v1, title: FAQ, category: faq, source: faq.md,
      last_reviewed_at: 2026-10-01}}
  - doc_id: terms
    doc_version_id: {tenant}_terms_v1
    title: Booking Terms
    category: structured_policy
    last_reviewed_at: 2026-10-01
    entries:
      - section: Deposits
        text: {OPERATORS[tenant][1]}
"""


def cases(tenant: str, *, unsafe: bool = False) -> list[dict[str, Any]]:
    fact, policy = OPERATORS[tenant]
    ask_fact, ask_policy = QUESTIONS[tenant]
    return [
        {
            "case_id": f"{tenant}-fact",
            "tenant_id": tenant,
            "email": ask_fact,
            "relevant": [{"doc_version_id": f"{tenant}_faq_v1", "quote": fact[:30]}],
            # A human reviewer's label in the unsafe variant: the drafted answer is an unsafe pass.
            "expected_outcome": "NEEDS_REVIEW" if unsafe else "OK_TO_DRAFT",
        },
        {
            "case_id": f"{tenant}-policy",
            "tenant_id": tenant,
            "email": ask_policy,
            "relevant": [{"doc_version_id": f"{tenant}_terms_v1", "quote": policy[:30]}],
            "expected_outcome": "OK_TO_DRAFT",
        },
    ]


def write_golden(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture(scope="module")
def kb(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBaseResource:
    url = fresh_database(database_url, "kb_test_release_generalisation")
    resource = KnowledgeBaseResource(database_url=url, embedder="fake-hash")
    pipeline = resource.pipeline()
    root = tmp_path_factory.mktemp("operators")
    for tenant, (fact, _) in OPERATORS.items():
        folder = root / tenant
        folder.mkdir()
        (folder / "faq.md").write_text(f"# Departures\n\n{fact}\n", "utf-8")
        (folder / "kb.yaml").write_text(manifest(tenant), "utf-8")
        pipeline.register(folder)
    return resource


def held_out_spec(tmp_path: Path, *, unsafe: str = "", extra: str = "") -> str:
    """Two golden files with their own dates: fjord + desert, then island (+ `extra`)."""
    first = write_golden(
        tmp_path / "first.jsonl",
        cases("gen-fjord", unsafe=unsafe == "gen-fjord") + cases("gen-desert"),
    )
    second_rows = cases("gen-island", unsafe=unsafe == "gen-island")
    if extra:
        second_rows += [
            {**c, "tenant_id": extra, "case_id": f"{extra}-{i}"}
            for i, c in enumerate(cases("gen-island"))
        ]
    second = write_golden(tmp_path / "second.jsonl", second_rows)
    return f"{first}@{FIRST},{second}@{SECOND}"


def run(kb, instance, release, assets, spec: str, golden: Path | None = None):
    register_candidate(kb, instance, release)
    ops: dict[str, Any] = {}
    if spec:
        ops["release_generalisation"] = {"config": {"golden": spec}}
    if golden is not None:
        ops["release_evaluation"] = {"config": {"golden_path": str(golden), "as_of": FIRST}}
    return materialize(
        assets,
        partition_key=release.release_id,
        instance=instance,
        resources={"kb": kb},
        run_config={"ops": ops},
        raise_on_error=False,
    )


def metadata_of(result, node: str) -> dict[str, Any]:
    [event] = result.asset_materializations_for_node(node)
    return {k: v.value for k, v in event.metadata.items()}


def test_held_out_figures_are_stored_shown_and_the_same_as_kb_eval_cv(kb, tmp_path, monkeypatch):
    instance = DagsterInstance.ephemeral()
    release = Release.of(kb.pipeline().versions, RetrievalConfig())
    spec = held_out_spec(tmp_path)
    assets = [release_index, release_generalisation, *generalisation_checks]
    result = run(kb, instance, release, assets, spec)
    assert result.success
    shown = metadata_of(result, "release_generalisation")
    assert shown["operators"] == 3 and shown["pooled_cases"] == 6
    rows = {r.data["operator"]: r.data for r in shown["per_operator"].records}
    assert set(rows) == {"gen-fjord", "gen-desert", "gen-island", "pooled"}
    assert rows["pooled"]["cases"] == 6 and rows["gen-island"]["cases"] == 2
    assert "| gen-desert | 2 |" in shown["per_operator_md"]
    with kb.database().admin() as conn:
        stored = conn.execute(
            "SELECT r.metrics, r.golden_path, o.tenant_id, o.as_of, o.figures, o.model "
            "FROM eval_runs r JOIN eval_operator_results o USING (run_id) "
            "WHERE r.release_id = %s AND r.kind = 'release_generalisation' ORDER BY o.tenant_id",
            (release.release_id,),
        ).fetchall()
        case_rows = conn.execute(
            "SELECT count(*) FROM eval_case_results WHERE run_id = %s", (shown["run_id"],)
        ).fetchone()[0]
    assert [(row[2], row[3].isoformat()) for row in stored] == [
        ("gen-desert", FIRST),
        ("gen-fjord", FIRST),
        ("gen-island", SECOND),
    ]
    assert case_rows == 6
    assert stored[0][0]["outcome_accuracy"] == shown["pooled_outcome_accuracy"]
    assert all("all but" in row[5]["fitted_on"] for row in stored), "each fold's own model"
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert set(checks) == set(GENERALISATION_GATES)
    assert checks["loo_unsafe_passes"].passed and checks["loo_must_not_cite"].passed
    for name, check in checks.items():
        blocking = GENERALISATION_GATES[name].blocking
        assert check.severity == (AssetCheckSeverity.ERROR if blocking else AssetCheckSeverity.WARN)
    pooled_recall = checks["loo_pooled_recall_at_10"]
    assert pooled_recall.passed == (shown["pooled_recall_at_10"] >= 0.90)
    assert pooled_recall.metadata["value"].value == pytest.approx(shown["pooled_recall_at_10"])
    # The same command a data engineer runs: identical per-operator and pooled figures.
    promote_release(kb.database(), release.release_id)
    monkeypatch.setenv("KB_DATABASE_URL", kb.database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    cli = CliRunner().invoke(app, ["eval", *spec.split(","), "--cv", "tenant", "--json"])
    assert cli.exit_code == 0, cli.output
    report = json.loads(cli.stdout)
    assert report["pooled"] == json.loads(json.dumps(stored[0][0]))
    assert {t: report["per_operator"][t] for t in report["per_operator"]} == {
        row[2]: row[4] for row in stored
    }


def test_an_unsafe_held_out_operator_blocks_promotion(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    release = Release.of(kb.pipeline().versions, DRAFTING.model_copy(update={"pack_max": 9}))
    own = write_golden(tmp_path / "own.jsonl", cases("gen-fjord") + cases("gen-desert"))
    assets = [
        release_index,
        release_evaluation,
        release_generalisation,
        release_promotion,
        *release_gates,
        *generalisation_checks,
    ]
    spec = held_out_spec(tmp_path, unsafe="gen-island")
    result = run(kb, instance, release, assets, spec, golden=own)
    assert not result.success
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    unsafe = checks["loo_unsafe_passes"]
    assert unsafe.passed is False and unsafe.severity == AssetCheckSeverity.ERROR
    assert unsafe.metadata["missed_by"].value == "gen-island"
    assert all(checks[f"gate_{g}"].passed for g in ("recall_at_10", "unsafe_pass_rate"))
    assert result.asset_materializations_for_node("release_promotion") == []
    active = active_release(kb.database())
    assert active is None or active.release_id != release.release_id
    alone = materialize(
        [release_promotion],
        partition_key=release.release_id,
        instance=instance,
        resources={"kb": kb},
        raise_on_error=False,
    )
    message = alone.failure_data_for_node("release_promotion").error.message
    assert "failed held-out safety" in message and "missed by gen-island" in message


def test_promotion_alone_refuses_a_release_without_a_held_out_run(kb, tmp_path):
    instance = DagsterInstance.ephemeral()
    release = Release.of(kb.pipeline().versions, DRAFTING.model_copy(update={"pack_max": 7}))
    own = write_golden(tmp_path / "own.jsonl", cases("gen-fjord") + cases("gen-desert"))
    evaluated = run(
        kb, instance, release, [release_index, release_evaluation, *release_gates], "", own
    )
    assert evaluated.success, "the six gates passed"
    alone = materialize(
        [release_promotion],
        partition_key=release.release_id,
        instance=instance,
        resources={"kb": kb},
        raise_on_error=False,
    )
    message = alone.failure_data_for_node("release_promotion").error.message
    assert "has no stored leave-one-operator-out run" in message
    active = active_release(kb.database())
    assert active is None or active.release_id != release.release_id


def test_a_missing_operator_fails_the_run_and_names_it(kb, tmp_path):
    release = Release.of(kb.pipeline().versions, RetrievalConfig(pack_max=8))
    spec = held_out_spec(tmp_path, extra="gen-nowhere")
    result = run(kb, DagsterInstance.ephemeral(), release, [release_generalisation], spec)
    assert not result.success
    message = result.failure_data_for_node("release_generalisation").error.message
    assert "'gen-nowhere'" in message and "second.jsonl" in message and "not ingested" in message
    with kb.database().admin() as conn:
        runs = conn.execute(
            "SELECT count(*) FROM eval_runs WHERE release_id = %s", (release.release_id,)
        ).fetchone()[0]
    assert runs == 0, "nothing is stored for a run that could not measure every operator"


def test_held_out_files_come_from_the_run_or_the_environment(tmp_path):
    golden = write_golden(tmp_path / "g.jsonl", cases("gen-fjord"))
    with pytest.raises(Failure, match="KB_RELEASE_CV_GOLDEN"):
        resolve_cv_specs(GeneralisationConfig(), {})
    with pytest.raises(Failure, match="no date"):
        resolve_cv_specs(GeneralisationConfig(golden=str(golden)), {})
    with pytest.raises(Failure, match="must be an ISO date"):
        resolve_cv_specs(GeneralisationConfig(golden=f"{golden}@15/11/2026"), {})
    with pytest.raises(Failure, match="not found"):
        resolve_cv_specs(GeneralisationConfig(golden=f"{tmp_path}/none.jsonl@{FIRST}"), {})
    env = {"KB_RELEASE_CV_GOLDEN": f"{golden}@{FIRST}, {golden}", "KB_EVAL_AS_OF": SECOND}
    assert resolve_cv_specs(GeneralisationConfig(), env) == [
        (golden, date(2026, 11, 15)),
        (golden, date(2026, 11, 22)),
    ]
    relative = resolve_cv_specs(GeneralisationConfig(golden="data/golden/golden.jsonl@2026-11-15"))
    assert relative[0][0].is_absolute() and relative[0][0].is_file()
    config = sensor_run_config(date(2026, 3, 4), {"KB_RELEASE_CV_GOLDEN": "a.jsonl@2026-01-01"})
    assert config["ops"]["release_generalisation"]["config"] == {
        "golden": "a.jsonl@2026-01-01",
        "as_of": "2026-03-04",
    }


def test_only_safety_targets_block():
    safe = {"unsafe_passes": 0, "must_not_cite_violations": 0, "outcome_accuracy": 0.5}
    per_operator = {"a": dict(safe), "b": {**safe, "unsafe_passes": 2}}
    pooled = {**safe, "unsafe_passes": 2, "recall_at_10": 0.5}
    [missed] = failed_generalisation_gates(pooled, per_operator)
    assert missed.gate.name == "loo_unsafe_passes" and missed.missed_by == ("b",)
    assert missed.value == 2.0
    warnings = {
        r.gate.name for r in failed_generalisation_gates(pooled, per_operator, blocking=False)
    }
    assert {"loo_pooled_outcome_accuracy", "loo_operator_outcome_accuracy"} <= warnings
    assert {"loo_operator_ece", "loo_operator_ece_top"} <= warnings, "a missing figure fails"
    assert failed_generalisation_gates(pooled, {})[0].missed_by == ()
