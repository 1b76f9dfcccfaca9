"""Bounded, strict manifests: every bad kb.yaml is a clear error, never a traceback or a hang."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kb_retrieval.ingestion.manifest import (
    MAX_MANIFEST_BYTES,
    ManifestError,
    check_tenant,
    load_manifest,
)
from kb_retrieval.models import IngestReason

GOOD_DOC = "  - {doc_id: ok, doc_version_id: ok_v1, title: OK, category: faq, source: ok.md}\n"


def folder_with(tmp_path: Path, manifest: str | bytes, tenant: str = "bound-co") -> Path:
    folder = tmp_path / tenant
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ok.md").write_text("# Ferry\n\nThe ferry to the island leaves at nine.\n", "utf-8")
    data = manifest.encode("utf-8") if isinstance(manifest, str) else manifest
    (folder / "kb.yaml").write_bytes(data)
    return folder


def test_alias_bomb_is_refused_at_once(tmp_path):
    rows = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    rows += [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
        for i in range(8)
    ]
    folder = folder_with(tmp_path, "tenant_id: bound-co\n" + "\n".join(rows) + "\ndocuments: []\n")
    started = time.perf_counter()
    with pytest.raises(ManifestError, match="anchors and aliases"):
        load_manifest(folder)
    assert time.perf_counter() - started < 2


def test_duplicate_keys_are_an_error(tmp_path):
    top = folder_with(tmp_path / "a", "tenant_id: bound-co\ntenant_id: other-co\ndocuments: []\n")
    with pytest.raises(ManifestError, match="duplicate"):
        load_manifest(top)
    inner = folder_with(
        tmp_path / "b",
        "tenant_id: bound-co\ndocuments:\n"
        "  - {doc_id: x, doc_version_id: x_v1, doc_version_id: x_v2, title: X, category: faq,"
        " source: ok.md}\n",
    )
    with pytest.raises(ManifestError, match="duplicate or unhashable key 'doc_version_id'"):
        load_manifest(inner)


def test_manifest_size_is_capped(tmp_path):
    filler = "# " + "x" * 100 + "\n"
    body = "tenant_id: bound-co\ndocuments:\n" + GOOD_DOC
    folder = folder_with(tmp_path, body + filler * (MAX_MANIFEST_BYTES // len(filler) + 1))
    with pytest.raises(ManifestError, match="byte limit"):
        load_manifest(folder)


def test_oversized_file_is_refused_before_it_is_read(tmp_path):
    folder = folder_with(
        tmp_path,
        "tenant_id: bound-co\ndocuments:\n"
        + GOOD_DOC
        + "  - {doc_id: big, doc_version_id: big_v1, title: Big, category: faq, source: big.txt}\n",
    )
    with (folder / "big.txt").open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: reading it would take seconds
    started = time.perf_counter()
    manifest = load_manifest(folder)
    assert time.perf_counter() - started < 2
    assert [d.doc_version_id for d in manifest.documents] == ["ok_v1"]
    [problem] = manifest.problems
    assert problem.reason == IngestReason.PARSE_TOO_LARGE and "big.txt" in problem.message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            "{doc_id: w, doc_version_id: {a: 1}, title: W, category: faq, source: ok.md}",
            "doc_version_id is required",
        ),
        (
            '{doc_id: w, doc_version_id: "w\\0v1", title: W, category: faq, source: ok.md}',
            "NUL byte",
        ),
        (
            '{doc_id: w, doc_version_id: "w/../v1", title: W, category: faq, source: ok.md}',
            "printable characters",
        ),
        (
            "{doc_id: w, doc_version_id: w_v1, title: W, category: faq, priority: [1], source: ok.md}",
            "not an integer",
        ),
        (
            '{doc_id: w, doc_version_id: w_v1, title: W, category: faq, entries: [{text: "a\\0b"}]}',
            "NUL byte",
        ),
        (
            "{doc_id: w, doc_version_id: w_v1, title: W, category: faq, [1, 2]: x, source: ok.md}",
            None,
        ),
        ("[just, a, list]", "expected a mapping"),
    ],
)
def test_bad_document_is_a_problem_and_the_valid_one_still_loads(tmp_path, entry, expected):
    text = f"tenant_id: bound-co\ndocuments:\n{GOOD_DOC}  - {entry}\n"
    try:
        manifest = load_manifest(folder_with(tmp_path, text))
    except ManifestError as error:
        assert expected is None, error  # an unhashable key is refused by the loader itself
        assert "unhashable" in str(error)
        return
    assert [d.doc_version_id for d in manifest.documents] == ["ok_v1"]
    [problem] = manifest.problems
    assert problem.reason == IngestReason.MANIFEST_INVALID
    assert expected in problem.message and "documents[1]" in problem.message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"tenant_id: bound-co\ndocuments: []\n# caf\xe9\n", "not UTF-8"),
        ('tenant_id: "bound-co\\n"\ndocuments: []\n', "must match"),
        ("tenant_id: [bound-co]\ndocuments: []\n", "must match"),
        ("tenant_id: bound-co\ndocuments: {a: 1}\n", "documents must be a list"),
        ("tenant_id: bound-co\ndocuments: [\n", "not valid YAML"),
    ],
)
def test_unusable_manifest_is_a_manifest_error(tmp_path, data, expected):
    with pytest.raises(ManifestError, match=expected):
        load_manifest(folder_with(tmp_path, data))


def test_folder_is_bound_to_its_tenant(tmp_path):
    folder = folder_with(tmp_path, "tenant_id: bound-co\ndocuments:\n" + GOOD_DOC)
    check_tenant(folder, "bound-co")
    with pytest.raises(ManifestError, match="differs from --tenant 'other-co'"):
        check_tenant(folder, "other-co")


def cli(*args: str, stdin: bytes | None = None):
    from kb_pipeline.cli.app import app

    return CliRunner().invoke(app, list(args), input=stdin)


def test_cli_usage_errors_exit_2_without_traceback(tmp_path):
    folder = folder_with(tmp_path, "tenant_id: bound-co\ndocuments:\n" + GOOD_DOC)
    other = cli("ingest", str(folder), "--tenant", "other-co")
    assert other.exit_code == 2 and "differs from --tenant" in other.output
    assert "Traceback" not in other.output
    latin = folder_with(tmp_path / "latin", b"tenant_id: bound-co\ndocuments: []\n# \xff\n")
    os.environ.pop("KB_DATABASE_URL", None)
    bad = cli("ingest", str(latin), "--tenant", "bound-co")
    assert bad.exit_code == 2 and "not UTF-8" in bad.output and "Traceback" not in bad.output
    stdin = cli("ask", "--tenant", "bound-co", "-", stdin=b"Hello \xff\xfe refund?")
    assert stdin.exit_code == 2 and "not UTF-8" in stdin.output
    assert stdin.exception is None or isinstance(stdin.exception, SystemExit)


def test_lost_database_is_found_inside_dagster_wrapping():
    import psycopg

    from kb_pipeline.cli.ingest_cmd import database_error

    lost = psycopg.OperationalError("server closed the connection unexpectedly")

    class StepError(Exception):
        user_exception = lost

    try:
        raise RuntimeError("run failed") from StepError("step failed")
    except RuntimeError as wrapped:
        assert database_error(wrapped) is lost
    assert database_error(ValueError("other")) is None


def test_deep_nesting_is_an_error_not_a_crash(tmp_path):
    depth = 200_000  # libyaml's composer would overflow the C stack on this
    folder = folder_with(tmp_path, "tenant_id: bound-co\nx: " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ManifestError, match="nested too deeply"):
        load_manifest(folder)
    shallow = "tenant_id: bound-co\nx: " + "[" * 60 + "]" * 60 + "\ndocuments:\n" + GOOD_DOC
    assert load_manifest(folder_with(tmp_path / "ok", shallow)).documents
