"""bench/ingest_digest.py: the digest of one ingest is reproducible and sees a changed document."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.ingest_digest import TABLES, digest
from kb_retrieval.db import Database
from tests.test_releases import fresh_database

# Two fresh operators: the first goes through the assets' path, the second through `run_all`.
MANIFESTS = {
    "fjord-pedal": """tenant_id: fjord-pedal
documents:
  - {doc_id: bikes, doc_version_id: bikes_v1, title: Bike Hire, category: faq, source: bikes.md}
  - doc_id: terms
    doc_version_id: terms_v2
    title: Booking Terms
    category: structured_policy
    effective_date: 2026-03-01
    entries:
      - section: Deposit
        text: A deposit of 20% secures a place on any cycling week.
      - section: Balance
        text: The rest of the price is payable six weeks ahead of the first riding day.
""",
    "salt-marsh-walks": """tenant_id: salt-marsh-walks
documents:
  - {doc_id: tides, doc_version_id: tides_v1, title: Tide Walks, category: faq, source: tides.md}
""",
}
DOCUMENTS = {
    "fjord-pedal/bikes.md": (
        "# Bike hire\n\nEvery rider gets a hybrid bike with panniers and a lock.\n\n"
        "## E-bikes\n\nE-bikes cost 90 EUR extra per week and must be booked 14 days ahead.\n"
    ),
    "salt-marsh-walks/tides.md": (
        "# Tide walks\n\nGuided crossings start two hours before low water.\n\n"
        "Children under 10 walk with a parent; dogs stay on a short lead.\n"
    ),
}


@pytest.fixture
def tenants(tmp_path: Path) -> Path:
    root = tmp_path / "tenants"
    for tenant, manifest in MANIFESTS.items():
        (root / tenant).mkdir(parents=True)
        (root / tenant / "kb.yaml").write_text(manifest, "utf-8")
    for name, text in DOCUMENTS.items():
        (root / name).write_text(text, "utf-8")
    return root


def _digest(database_url: str, name: str, tenants: Path) -> dict:
    db = Database(fresh_database(database_url, name))
    db.migrate()
    return digest(db, "fake-hash", tenants)


def test_same_input_gives_the_same_digest_and_a_changed_document_another(
    database_url: str, tenants: Path
) -> None:
    first = _digest(database_url, "kb_test_digest_a", tenants)
    second = _digest(database_url, "kb_test_digest_b", tenants)
    assert first == second
    assert set(first) == {"tenants", "embedder", "reports", *TABLES}
    assert first["chunks"][0] == 3 and first["window_vectors"][0] >= 3
    assert first["builds"][0] == 3 and first["reports"][0] > 3

    bikes = tenants / "fjord-pedal" / "bikes.md"
    bikes.write_text(bikes.read_text("utf-8").replace("90 EUR", "110 EUR"), "utf-8")
    changed = _digest(database_url, "kb_test_digest_c", tenants)
    assert changed["tenants"] == first["tenants"]
    assert changed["chunks"][0] == first["chunks"][0]
    for name in ("chunks", "window_vectors", "embedding_cache", "reports"):
        assert changed[name][1] != first[name][1], name
