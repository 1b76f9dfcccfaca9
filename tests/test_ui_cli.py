"""What `kb` prints: the answering sentence, conflict lines naming both sources, whole ids."""

from __future__ import annotations

from typer.testing import CliRunner

from kb_pipeline.cli.ask_display import (
    best_sentence,
    conflict_lines,
    near_answer_line,
    query_terms,
)

DEPOSIT = (
    "Booking Terms\n"
    "We welcome families and groups of up to twelve walkers. "
    "A deposit of 30% secures your place and is due within five days of booking. "
    "Balances are settled in Lima."
)


def test_the_snippet_is_the_sentence_that_answers_not_the_first_one():
    terms = query_terms("What share of the trip price reserves our spot up front as a deposit?", [])
    sentence = best_sentence(DEPOSIT, terms, "Booking Terms")
    assert sentence == "A deposit of 30% secures your place and is due within five days of booking."


def test_ties_keep_the_first_sentence_and_the_heading_is_not_chosen():
    assert best_sentence(DEPOSIT, set(), "Booking Terms").startswith("We welcome families")
    assert best_sentence("Single line", {"other"}) == "Single line"


def test_a_conflict_line_names_both_sources_and_the_value_each_states():
    pack = {
        "evidence": [
            {
                "chunk_id": "terms_v2_000",
                "doc_title": "Terms 2027",
                "source_locator": "docv:terms_v2#chunk:000|p:-|sec:Cancellation",
                "text": "Cancel up to 14 days before departure for a full refund.",
            },
            {
                "chunk_id": "faq_v1_003",
                "doc_title": "Guest FAQ",
                "source_locator": "docv:faq_v1#chunk:003|p:-|sec:Refunds",
                "text": "You may cancel until 48 hours before the start and get your money back.",
            },
        ],
        "conflicts": [
            {
                "kind": "numeric_window",
                "values": ["48 hours", "14 days"],
                "chunk_ids": ["terms_v2_000", "faq_v1_003", "gone_v1_000"],
            }
        ],
    }
    [line] = conflict_lines(pack)
    assert line == (
        "conflict numeric_window: "
        "Terms 2027 [docv:terms_v2#chunk:000|p:-|sec:Cancellation] says 14 days; "
        "Guest FAQ [docv:faq_v1#chunk:003|p:-|sec:Refunds] says 48 hours; "
        "gone_v1_000 (not in the evidence shown)"
    )


def test_the_nearest_sentence_is_shown_only_when_the_pack_names_one():
    pack = {
        "near_answer": {
            "chunk_id": "faq_v1_002",
            "doc_version_id": "faq_v1",
            "sentence": "Towels are provided in every cabin.",
            "cosine": 0.6712,
        }
    }
    assert near_answer_line(pack) == (
        "nearest sentence (0.67, faq_v1_002): Towels are provided in every cabin."
    )
    assert near_answer_line({"evidence": []}) is None


def test_kb_ingest_table_shows_whole_ids_on_a_narrow_terminal(tmp_path, database_url, monkeypatch):
    from kb_pipeline.cli import app

    folder = tmp_path / "narrow-co"
    folder.mkdir()
    long_id = "pickup_and_transfer_schedule_2027_v12"
    (folder / "pickup.md").write_text("# Pickup\n\nThe bus leaves the square at 07:15.\n", "utf-8")
    (folder / "kb.yaml").write_text(
        "tenant_id: narrow-co\ndocuments:\n"
        f"  - {{doc_id: pickup, doc_version_id: {long_id}, title: Pickup, category: faq,"
        " source: pickup.md}\n",
        "utf-8",
    )
    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "60")
    result = CliRunner().invoke(app, ["ingest", str(folder)])
    assert result.exit_code == 0, result.output
    assert long_id in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 60
