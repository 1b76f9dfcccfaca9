"""`kb eval-beir` end to end on a tiny BEIR folder: real pipeline, real model, session database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kb_eval.beir.comparison import (
    RUN_LABELS,
    BeirReport,
    doc_version_id_for,
    ingest,
    ir_config,
    run_beir,
    select,
    tenant_id_for,
    write_tenant_folder,
)
from kb_eval.beir.dataset import BeirDataset, load_beir
from kb_pipeline.cli.beir_cmd import eval_beir

TOPICS = [
    ("Vitamin D supplementation and bone density", "Daily vitamin D supplements raised bone mineral density in postmenopausal women over two years."),
    ("Melatonin and sleep onset", "Melatonin taken before bedtime shortened sleep onset latency in adults with insomnia."),
    ("Statins lower LDL cholesterol", "Statin therapy reduced low-density lipoprotein cholesterol and cardiovascular events."),
    ("Helicobacter pylori and gastric ulcers", "Infection with Helicobacter pylori bacteria causes most peptic ulcers of the stomach."),
    ("Aspirin and colorectal cancer", "Long-term low-dose aspirin use lowered the incidence of colorectal adenocarcinoma."),
    ("Coral bleaching and ocean temperature", "Marine heatwaves bleach reef-building corals by expelling their symbiotic algae."),
    ("Honeybee decline and neonicotinoids", "Neonicotinoid pesticides impair foraging and homing of honeybee colonies."),
    ("Telomere shortening in ageing", "Telomeres of lymphocytes shorten with chronological age and cellular senescence."),
    ("CRISPR editing of sickle cell disease", "Gene editing with CRISPR restored fetal haemoglobin in sickle cell patients."),
    ("Gut microbiome and obesity", "Intestinal bacteria from obese mice transferred weight gain to germ-free mice."),
    ("Malaria transmission by Anopheles mosquitoes", "Plasmodium parasites are carried by female Anopheles mosquitoes between hosts."),
    ("Lithium treatment of bipolar disorder", "Lithium salts prevented manic relapse and reduced suicide in bipolar disorder."),
    ("Exercise and hippocampal volume", "Aerobic walking enlarged the hippocampus and improved spatial memory in older adults."),
    ("Insulin resistance in type 2 diabetes", "Skeletal muscle insulin resistance precedes hyperglycaemia in type 2 diabetes."),
    ("Measles vaccination coverage", "Two doses of measles vaccine give lasting immunity and prevent outbreaks."),
    ("Caffeine and alertness", "Coffee caffeine blocks adenosine receptors and increases vigilance after sleep loss."),
    ("Antibiotic resistance in Staphylococcus", "Methicillin-resistant Staphylococcus aureus spreads in hospitals through contact."),
    ("Zika virus and microcephaly", "Prenatal Zika virus infection was linked to microcephaly in newborn infants."),
    ("Photosynthesis efficiency of C4 plants", "Maize and sugarcane use C4 carbon fixation to limit photorespiration."),
    ("Permafrost thaw releases methane", "Thawing Arctic permafrost emits methane from decomposing frozen organic soil."),
    ("Smoking and lung adenocarcinoma", "Tobacco smoke mutagens drive KRAS mutations in lung adenocarcinoma."),
    ("Iron deficiency anaemia in children", "Iron fortified cereals reduced anaemia among preschool children."),
    ("Dopamine loss in Parkinson disease", "Degeneration of dopaminergic neurons in the substantia nigra causes Parkinson tremor."),
    ("Omega-3 fatty acids and triglycerides", "Fish oil omega-3 fatty acids lowered plasma triglyceride concentrations."),
    ("Noise exposure and hearing loss", "Chronic loud noise damages cochlear hair cells and causes hearing loss."),
    ("Salt intake and blood pressure", "Reducing dietary sodium lowered systolic blood pressure in hypertensive adults."),
    ("Tuberculosis treatment adherence", "Directly observed therapy improved completion of tuberculosis drug regimens."),
    ("Myopia and outdoor time", "Children spending more time outdoors in daylight developed less myopia."),
    ("Air pollution particulate matter and asthma", "Fine particulate matter from traffic exhaust aggravated childhood asthma."),
    ("Rabies post-exposure prophylaxis", "Prompt rabies vaccination after animal bites prevents fatal encephalitis."),
]  # fmt: skip
QUERIES = {
    "q1": ("Vitamin D supplements increase bone density in women after menopause.", "d00"),
    "q2": ("Melatonin sleep", "d01"),
    "q3": ("Helicobacter pylori infection causes stomach ulcers.", "d03"),
    "q4": ("Neonicotinoid pesticides harm honeybee colonies.", "d06"),
    "q5": ("Permafrost thawing in the Arctic releases methane.", "d19"),
}


def make_beir_folder(root: Path, name: str = "tinybeir") -> Path:
    folder = root / name
    (folder / "qrels").mkdir(parents=True)
    docs = [
        json.dumps({"_id": f"d{i:02d}", "title": title, "text": text})
        for i, (title, text) in enumerate(TOPICS)
    ]
    (folder / "corpus.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    queries = [json.dumps({"_id": qid, "text": text}) for qid, (text, _doc) in QUERIES.items()]
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    qrels = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, (_t, d) in QUERIES.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> BeirDataset:
    return load_beir(make_beir_folder(tmp_path_factory.mktemp("beir")))


@pytest.fixture(scope="module")
def reports(db, minilm, tiny, tmp_path_factory) -> tuple[BeirReport, BeirReport]:
    """The tiny dataset run twice on the session database: the second must re-embed nothing."""
    root = tmp_path_factory.mktemp("beir_root")
    return run_beir(db, minilm, tiny, root=root), run_beir(db, minilm, tiny, root=root)


def test_every_run_reports_the_three_metrics(reports) -> None:
    first, _second = reports
    assert list(first.runs) == list(RUN_LABELS)
    for metrics in first.runs.values():
        assert set(metrics) == {"ndcg_at_10", "recall_at_10", "recall_at_100"}
        assert all(0.0 <= value <= 1.0 for value in metrics.values())
    assert (first.documents, first.queries, first.dataset) == (30, 5, "tinybeir")
    assert first.published == {}
    assert first.ingestion.indexed == 30 and not first.ingestion.problems
    assert set(first.seconds) >= {"ingest", "total", *RUN_LABELS}


def test_easy_queries_find_their_document_first(reports) -> None:
    first, _second = reports
    for name in ("kb_hybrid", "kb_hybrid_first_window", "bm25s_kb_analyzer", "dense_best_window"):
        assert first.runs[name] == {"ndcg_at_10": 1.0, "recall_at_10": 1.0, "recall_at_100": 1.0}
    assert first.runs["kb_lexical"]["recall_at_10"] == 1.0


def test_short_query_passes_the_gate_in_ir_mode(reports) -> None:
    first, _second = reports
    assert first.query_plans["gated_at_min_content_tokens_3"] == 1
    assert first.query_plans["gated_at_min_content_tokens_1"] == 0
    assert ir_config().min_content_tokens == 1


def test_second_run_embeds_nothing_and_gives_the_same_figures(reports) -> None:
    first, second = reports
    assert first.tenant_id == second.tenant_id
    assert second.ingestion.embedded_windows == 0
    assert second.ingestion.already_indexed == 30 and second.ingestion.indexed == 30
    assert second.runs == first.runs


def test_fresh_ingestion_embeds_every_window(db, minilm, tiny, tmp_path) -> None:
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    subset = select(tiny, limit_docs=7, limit_queries=1)
    folder = write_tenant_folder(subset, tenant_id_for(subset), tmp_path)
    pipeline = IngestionPipeline(db, minilm)
    summary = ingest(pipeline, folder)
    assert (summary.indexed, summary.already_indexed) == (7, 0)
    assert summary.embedded_windows == 7
    again = ingest(pipeline, folder)
    assert (again.indexed, again.already_indexed, again.embedded_windows) == (7, 7, 0)


def test_ir_config_keeps_every_direct_hit() -> None:
    config = ir_config()
    assert (config.k_vector, config.k_lexical) == (100, 100)
    assert config.candidate_cap >= 200 + 3 * (
        config.expansion_quota_vector + config.expansion_quota_lexical
    )
    assert config.cache_ttl_seconds == 0


def test_select_keeps_judged_documents_and_fills_up(tiny) -> None:
    subset = select(tiny, limit_docs=4, limit_queries=2)
    assert list(subset.queries) == ["q1", "q2"]
    assert set(subset.qrels) == {"q1", "q2"}
    assert list(subset.corpus) == ["d00", "d01", "d02", "d03"]
    judged_only = select(tiny, limit_docs=1, limit_queries=2)
    assert set(judged_only.corpus) == {"d00", "d01"}
    assert select(tiny).corpus == tiny.corpus
    assert tenant_id_for(subset) != tenant_id_for(tiny)
    assert tenant_id_for(tiny) == tenant_id_for(select(tiny, limit_queries=1))


def test_doc_version_ids_are_safe_deterministic_and_unique() -> None:
    weird = ["a/b c", "a_b_c", "../etc", "ünï", "x" * 300, "31715818", ""]
    ids = [doc_version_id_for(doc_id) for doc_id in weird]
    assert len(set(ids)) == len(ids)
    assert ids == [doc_version_id_for(doc_id) for doc_id in weird]
    for version in ids:
        assert version.replace("-", "").replace("_", "").replace(".", "").isalnum()
        assert not version.startswith(".") and len(version) <= 69
    assert ids[5].startswith("31715818-")


def test_tenant_folder_names_documents_as_faq(tiny, tmp_path) -> None:
    import yaml

    tenant = tenant_id_for(tiny)
    folder = write_tenant_folder(tiny, tenant, tmp_path)
    manifest = yaml.safe_load((folder / "kb.yaml").read_text(encoding="utf-8"))
    assert manifest["tenant_id"] == tenant and tenant.startswith("beir-tinybeir-")
    first = manifest["documents"][0]
    assert first["doc_id"] == "d00" and first["category"] == "faq"
    text = (folder / first["source"]).read_text(encoding="utf-8")
    assert text.startswith("Vitamin D supplementation and bone density\n\nDaily vitamin D")


def _cli() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command()(eval_beir)
    return app


def test_cli_json_with_limits(database_url, minilm, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    folder = make_beir_folder(tmp_path)
    args = [str(folder), "--json", "--limit-docs", "12", "--limit-queries", "2"]
    result = CliRunner().invoke(_cli(), args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["dataset"], payload["documents"], payload["queries"]) == ("tinybeir", 12, 2)
    assert set(payload["runs"]) == set(RUN_LABELS)
    assert payload["runs"]["kb_hybrid"]["ndcg_at_10"] == 1.0
    assert payload["published"] == {}
    assert payload["ingestion"]["indexed"] == 12
    assert (tmp_path / "home" / "beir" / payload["tenant_id"] / "kb.yaml").is_file()


def test_cli_table_and_usage_errors(database_url, minilm, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    folder = make_beir_folder(tmp_path)
    result = CliRunner().invoke(_cli(), [str(folder), "--limit-queries", "1"])
    assert result.exit_code == 0, result.output
    assert "kb hybrid (every window)" in result.stdout and "bm25s" in result.stdout
    assert "nDCG@10" in result.stdout
    assert CliRunner().invoke(_cli(), [str(tmp_path / "missing")]).exit_code == 2
    (folder / "qrels" / "test.tsv").write_text("bad header\n", encoding="utf-8")
    assert CliRunner().invoke(_cli(), [str(folder)]).exit_code == 2
    assert CliRunner().invoke(_cli(), [str(folder), "--limit-docs", "0"]).exit_code == 2
