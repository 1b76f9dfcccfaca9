"""Every real file of ../shared/data/parser-corpus ends in a defined state with a reason code.

Each file goes through the guarded parser (worker process, time and memory bound). Where
MANIFEST.tsv makes the outcome clear, the exact reason is asserted; files that pypdf 7.1
could read with text (or could decrypt with the empty password) must parse with text.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from kb_retrieval.models import IngestReason, LifecycleState
from kb_retrieval.parsing import ParseError
from kb_retrieval.parsing.errors import default_state
from kb_retrieval.parsing.guard import parse_file_guarded

CORPUS = Path(__file__).parents[1] / ".." / "shared" / "data" / "parser-corpus"
FILES = sorted(
    path.relative_to(CORPUS).as_posix()
    for folder in ("pdf", "docx")
    if (CORPUS / folder).is_dir()
    for path in (CORPUS / folder).iterdir()
    if path.is_file()
)
PER_FILE_TIMEOUT_S = 60.0
MEMORY_MB = 1024


def _manifest() -> dict[str, dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        return {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}


MANIFEST = _manifest() if (CORPUS / "MANIFEST.tsv").is_file() else {}
OBSERVED = "observed_with_pypdf_7.1.0_or_python-docx_1.2.0"


def expected_reason(row: dict[str, str]) -> IngestReason | None:
    """The reason a file must end with when the manifest makes it clear, else None."""
    awkward, observed = row["what_is_awkward"], row[OBSERVED]
    if "decrypt('')=0" in observed or awkward.startswith("ENCRYPTED DOCX"):
        return IngestReason.PARSE_ENCRYPTED
    if awkward.startswith(("IMAGE-ONLY", "IMAGE:")):
        return IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED
    if awkward.startswith(("EMPTY FILE", "EMPTY document")):
        return IngestReason.PARSE_EMPTY_DOCUMENT
    if awkward.startswith("LEGACY"):
        return IngestReason.PARSE_UNSUPPORTED_FORMAT
    return None


def must_have_text(row: dict[str, str]) -> bool:
    """pypdf observed at least 100 characters (after decrypting with '' if needed)."""
    observed = row[OBSERVED]
    if "text_chars(first<=50pp)=" not in observed:
        return False
    return int(observed.rsplit("=", 1)[1]) >= 100


def test_corpus_is_present_and_listed() -> None:
    assert len(FILES) >= 50
    assert set(FILES) == set(MANIFEST)


@pytest.mark.parametrize("name", FILES)
def test_corpus_file_ends_in_defined_state(name: str) -> None:
    row = MANIFEST[name]
    expected = expected_reason(row)
    started = time.monotonic()
    try:
        doc = parse_file_guarded(CORPUS / name, PER_FILE_TIMEOUT_S, MEMORY_MB)
    except ParseError as error:
        assert isinstance(error.reason, IngestReason) and error.reason.value.startswith("PARSE_")
        assert error.state == default_state(error.reason)
        assert error.state in (LifecycleState.FAILED, LifecycleState.NEEDS_ATTENTION)
        assert Path(name).name in error.message
        assert expected == error.reason or (expected is None and not must_have_text(row)), (
            f"{name}: ended {error.reason} ({error.message}), expected {expected or 'text'}"
        )
    else:
        assert expected is None, f"{name}: parsed, expected {expected}"
        assert doc.text.strip()
        assert all(span.text == span.text.strip() and span.text for span in doc.spans)
        pages = doc.page_count
        if name.endswith(".pdf"):
            assert pages is not None and all(1 <= (span.page or 0) <= pages for span in doc.spans)
        else:
            assert pages is None and all(span.page is None for span in doc.spans)
    assert time.monotonic() - started < PER_FILE_TIMEOUT_S + 10


def test_empty_password_pdfs_are_parsed() -> None:
    for name in ("pdf/pypdf__r6-owner-password.pdf", "pdf/pdfminer__issue-625-identity-cmap.pdf"):
        doc = parse_file_guarded(CORPUS / name, PER_FILE_TIMEOUT_S, MEMORY_MB)
        assert any("empty password" in warning for warning in doc.warnings)
    polish = parse_file_guarded(CORPUS / "pdf/pdfminer__issue-625-identity-cmap.pdf")
    assert "Termin płatności" in polish.text


def test_recovered_and_structural_docx_content() -> None:
    strict = parse_file_guarded(CORPUS / "docx/mammoth__strict-format.docx")
    assert strict.text == "Test"
    box = parse_file_guarded(CORPUS / "docx/mammoth__text-box.docx")
    assert box.text == "Datum plane"
    notes = parse_file_guarded(CORPUS / "docx/mammoth__footnotes.docx")
    assert "A tachyon walks into a bar." in notes.text
    tables = parse_file_guarded(CORPUS / "docx/mammoth__tables.docx")
    assert "Top left | Top right\nBottom left | Bottom right" in tables.text
    evil = parse_file_guarded(CORPUS / "pdf/pdfminer__issue-1113-evil-xobjects.pdf")
    assert "Hello world" in evil.text
