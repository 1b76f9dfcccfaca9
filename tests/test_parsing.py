"""Parsers on small real files built here: PDF, DOCX, TXT, Markdown, HTML, structured entries."""

from __future__ import annotations

import io
import os
import pickle
import signal
import threading
from pathlib import Path

import docx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pypdf import PdfReader, PdfWriter

from kb_retrieval.models import IngestReason, LifecycleState, ParsedDocument, SpanKind
from kb_retrieval.parsing import PARSER_VERSION, ParseError, guard, parse_entries, parse_file
from kb_retrieval.parsing.guard import parse_file_guarded
from kb_retrieval.parsing.normalize import join_wrapped_lines, normalize_inline, normalize_text
from kb_retrieval.parsing.text import guess_heading_level

PAGE_ONE = [
    "Alpine Treks Terms",
    "1. Booking and Payment",
    "A deposit of twenty percent is due at booking and the balance is due sixty days",
    "before departure. Payments are accepted by bank transfer or by card, and receipts",
    "are sent by email within two working days.",
    "3. Cancellations and Refunds",
    "Cancellations made more than sixty days before departure receive a full refund of",
    "all payments except the deposit. Any later cancel-",
    "lation is non-refundable unless the place on the trip is resold to someone else.",
]
PAGE_TWO = [
    "3.1 Force Majeure",
    "If we cancel because of events beyond our control you may choose a full refund or",
    "a transfer to another departure of the same trip in the same or the next season.",
    "\u2022 Travel insurance is required for every traveller.",
    "\u2022 Passports must be valid for six months after return.",
]


def make_pdf(pages: list[list[str]], image_pages: frozenset[int] = frozenset()) -> bytes:
    """A minimal PDF: one Helvetica text line per entry; pages in `image_pages` hold an image."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream",
    ]
    kids = []
    for index, lines in enumerate(pages):
        commands = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            commands.append(f"({escaped}) Tj T*")
        commands.append("ET")
        if index in image_pages:
            commands.append("q 200 0 0 200 100 400 cm /Im0 Do Q")
        stream = "\n".join(commands).encode("cp1252")
        page_number, content_number = len(objects) + 1, len(objects) + 2
        kids.append(f"{page_number} 0 R")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources "
            b"<< /Font << /F1 3 0 R >> /XObject << /Im0 4 0 R >> >> /Contents %d 0 R >>"
            % content_number
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypt_pdf(data: bytes, user_password: str, owner_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, owner_password, algorithm="AES-256")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def texts(doc: ParsedDocument, kind: SpanKind) -> list[str]:
    return [span.text for span in doc.spans if span.kind == kind]


def reason_of(path: Path) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_file(path)
    return caught.value


# --- PDF ---------------------------------------------------------------------------------


def test_pdf_pages_headings_sections_and_dehyphenation(tmp_path: Path) -> None:
    doc = parse_file(write(tmp_path, "terms.pdf", make_pdf([PAGE_ONE, PAGE_TWO])))
    assert doc.page_count == 2
    assert doc.parser_version == PARSER_VERSION
    headings = [(s.text, s.heading_level, s.page) for s in doc.spans if s.kind == SpanKind.HEADING]
    assert headings == [
        ("Alpine Treks Terms", 1, 1),
        ("1. Booking and Payment", 1, 1),
        ("3. Cancellations and Refunds", 1, 1),
        ("3.1 Force Majeure", 2, 2),
    ]
    refund = next(s for s in doc.spans if "full refund of all payments" in s.text)
    assert refund.page == 1
    assert refund.section_title == "3. Cancellations and Refunds"
    assert "Any later cancellation is non-refundable" in refund.text
    deposit = next(s for s in doc.spans if s.text.startswith("A deposit"))
    assert deposit.text.endswith("within two working days.")
    assert deposit.section_title == "1. Booking and Payment"
    assert texts(doc, SpanKind.LIST_ITEM) == [
        "Travel insurance is required for every traveller.",
        "Passports must be valid for six months after return.",
    ]
    assert all(s.page == 2 for s in doc.spans if s.text.startswith(("Travel", "Passports")))
    assert all(s.section_title == "3.1 Force Majeure" for s in doc.spans if s.page == 2)
    assert all(s.page in (1, 2) for s in doc.spans)


def test_pdf_is_deterministic_and_independent_of_path(tmp_path: Path) -> None:
    data = make_pdf([PAGE_ONE, PAGE_TWO])
    first = parse_file(write(tmp_path, "a.pdf", data))
    assert parse_file(write(tmp_path, "b.pdf", data)) == first
    assert parse_file(tmp_path / "a.pdf") == first


def test_pdf_without_text_layer_needs_attention(tmp_path: Path) -> None:
    error = reason_of(write(tmp_path, "scan.pdf", make_pdf([[], []], frozenset({0, 1}))))
    assert error.reason == IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED
    assert error.state == LifecycleState.NEEDS_ATTENTION
    assert "scan.pdf" in str(error)
    labelled = make_pdf([["Scan 1"], ["Scan 2"]], frozenset({0, 1}))
    assert reason_of(write(tmp_path, "label.pdf", labelled)).reason == (
        IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED
    )


def test_pdf_with_one_image_page_keeps_text_and_warns(tmp_path: Path) -> None:
    doc = parse_file(write(tmp_path, "mixed.pdf", make_pdf([PAGE_ONE, []], frozenset({1}))))
    assert doc.page_count == 2
    assert "pages without a text layer: 2" in doc.warnings
    assert "Hello" in parse_file(write(tmp_path, "short.pdf", make_pdf([["Hello"]]))).text


def test_pdf_encryption(tmp_path: Path) -> None:
    plain = make_pdf([PAGE_ONE])
    locked = write(tmp_path, "locked.pdf", encrypt_pdf(plain, "secret", "owner"))
    error = reason_of(locked)
    assert (error.reason, error.state) == (IngestReason.PARSE_ENCRYPTED, LifecycleState.FAILED)
    assert "locked.pdf" in error.message
    open_pdf = write(tmp_path, "open.pdf", encrypt_pdf(plain, "", "owner"))
    doc = parse_file(open_pdf)
    assert "3. Cancellations and Refunds" in texts(doc, SpanKind.HEADING)
    assert any("empty password" in warning for warning in doc.warnings)


@pytest.mark.parametrize(
    "content",
    [
        b"<html>not a pdf</html>",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
        b"%PDF-1.7\n" + bytes(300),
    ],
)
def test_pdf_corrupt_fails_with_reason(tmp_path: Path, content: bytes) -> None:
    error = reason_of(write(tmp_path, "broken.pdf", content))
    assert (error.reason, error.state) == (IngestReason.PARSE_CORRUPT_FILE, LifecycleState.FAILED)
    assert "broken.pdf" in error.message


# --- DOCX --------------------------------------------------------------------------------


def make_docx(path: Path) -> Path:
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "CONFIDENTIAL PAGE HEADER"
    document.add_heading("Booking Terms", level=1)
    document.add_paragraph("These terms apply to every trip.")
    document.add_heading("Payments", level=2)
    document.add_paragraph("Deposit due at booking", style="List Bullet")
    document.add_paragraph("Balance due 60 days before departure", style="List Bullet")
    document.add_paragraph("Sign the booking form", style="List Number")
    document.add_paragraph("Pay the deposit", style="List Number")
    table = document.add_table(rows=2, cols=2)
    for (row, col), value in {
        (0, 0): "Days before departure",
        (0, 1): "Refund",
        (1, 0): "More than 60",
        (1, 1): "Full refund",
    }.items():
        table.cell(row, col).text = value
    document.add_heading("Cancellations", level=1)
    paragraph = document.add_paragraph("Line one")
    paragraph.add_run().add_break()
    paragraph.add_run("line\ttwo \ufb01nal")
    document.save(path)
    return path


def test_docx_headings_lists_tables(tmp_path: Path) -> None:
    doc = parse_file(make_docx(tmp_path / "terms.docx"))
    assert [(s.text, s.heading_level) for s in doc.spans if s.kind == SpanKind.HEADING] == [
        ("Booking Terms", 1),
        ("Payments", 2),
        ("Cancellations", 1),
    ]
    assert texts(doc, SpanKind.LIST_ITEM) == [
        "Deposit due at booking",
        "Balance due 60 days before departure",
        "1. Sign the booking form",
        "2. Pay the deposit",
    ]
    table = next(s for s in doc.spans if s.kind == SpanKind.TABLE)
    assert table.text == "Days before departure | Refund\nMore than 60 | Full refund"
    assert table.section_title == "Payments"
    last = doc.spans[-1]
    assert last.text == "Line one\nline two final"
    assert last.section_title == "Cancellations"
    assert all(span.page is None for span in doc.spans)
    assert "CONFIDENTIAL" not in doc.text
    assert doc.spans[0].section_title == "Booking Terms"


def test_docx_without_text_and_broken_packages(tmp_path: Path) -> None:
    empty = tmp_path / "empty.docx"
    docx.Document().save(empty)
    error = reason_of(empty)
    assert (error.reason, error.state) == (
        IngestReason.PARSE_EMPTY_DOCUMENT,
        LifecycleState.NEEDS_ATTENTION,
    )
    truncated = make_docx(tmp_path / "full.docx").read_bytes()[:2000]
    assert reason_of(write(tmp_path, "cut.docx", truncated)).reason == (
        IngestReason.PARSE_CORRUPT_FILE
    )
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600)
    assert reason_of(write(tmp_path, "old.docx", ole)).reason == (
        IngestReason.PARSE_UNSUPPORTED_FORMAT
    )
    encrypted = ole + "EncryptedPackage".encode("utf-16-le")
    assert reason_of(write(tmp_path, "secret.docx", encrypted)).reason == (
        IngestReason.PARSE_ENCRYPTED
    )


# --- TXT and Markdown --------------------------------------------------------------------


def test_markdown_headings_lists_tables_and_markup(tmp_path: Path) -> None:
    source = (
        "---\ntitle: Front matter is skipped\n---\n"
        "# Packing List\n\nBring **warm** layers and a [rain jacket](https://x.example/j).\n"
        "Wrapped line.\n\nFootwear\n--------\n\n- Boots\n- Head torch\n  with batteries\n"
        "1. First\n2. Second\n\n| Item | Qty |\n|---|---|\n| Socks | 4 |\n\n"
        "```\n# not a heading\n```\n\n## Day 2 ##\n\n> Quoted *note*.\n"
    )
    doc = parse_file(write(tmp_path, "packing.md", source))
    assert [(s.text, s.heading_level) for s in doc.spans if s.kind == SpanKind.HEADING] == [
        ("Packing List", 1),
        ("Footwear", 2),
        ("Day 2", 2),
    ]
    assert "Bring warm layers and a rain jacket. Wrapped line." in texts(doc, SpanKind.PARAGRAPH)
    assert texts(doc, SpanKind.LIST_ITEM) == [
        "Boots",
        "Head torch with batteries",
        "1. First",
        "2. Second",
    ]
    assert texts(doc, SpanKind.TABLE) == ["Item | Qty\nSocks | 4"]
    assert "# not a heading" in texts(doc, SpanKind.PARAGRAPH)
    assert doc.spans[-1].text == "Quoted note."
    assert doc.spans[-1].section_title == "Day 2"
    assert "Front matter" not in doc.text


def test_txt_blocks_headings_lists_and_encodings(tmp_path: Path) -> None:
    source = "\ufeffREFUND POLICY\r\n\r\nCancellations within 7 days are\r\nnon-refundable.\r\n\r\n"
    source += "3. Exceptions\r\n\r\n- Medical emergencies\r\n- Severe weather\r\n"
    doc = parse_file(write(tmp_path, "refunds.txt", source))
    assert [s.kind for s in doc.spans] == [
        SpanKind.HEADING,
        SpanKind.PARAGRAPH,
        SpanKind.HEADING,
        SpanKind.LIST_ITEM,
        SpanKind.LIST_ITEM,
    ]
    assert doc.spans[1].text == "Cancellations within 7 days are non-refundable."
    assert doc.spans[1].section_title == "REFUND POLICY"
    assert doc.spans[-1].section_title == "3. Exceptions"
    legacy = parse_file(write(tmp_path, "legacy.txt", "Caf\xe9 cr\xe8me".encode("cp1252")))
    assert legacy.text == "Café crème"
    assert legacy.warnings == ("not valid UTF-8; decoded as Windows-1252",)
    binary = write(tmp_path, "binary.txt", b"\x00\xff\x00\xfe" * 10)
    assert reason_of(binary).reason == IngestReason.PARSE_CORRUPT_FILE


# --- HTML --------------------------------------------------------------------------------

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Site title</title>
<style>p { color: red }</style><script>var secret = "SCRIPT";</script></head>
<body><header><a href="/">Alpine Treks</a> SITE HEADER</header>
<nav><ul><li>NAV Home</li><li>NAV Contact</li></ul></nav>
<article><header><h1>Refund&nbsp;Policy</h1></header>
<p>Cancellations within <b>7</b> calendar days are <em>non-refund</em>able.<br>Call us.</p>
<h2>Exceptions</h2>
<ol start="3"><li>Medical emergencies</li><li>Force majeure</li></ol>
<table><tr><th>Days</th><th>Refund</th></tr><tr><td>60+</td><td>Full</td></tr></table>
<noscript>NOSCRIPT</noscript><aside>ASIDE</aside><div hidden>HIDDEN</div>
<div>Loose <span>inline</span> text</div></article>
<footer>SITE FOOTER &copy; 2026</footer></body></html>"""


def test_html_main_text_without_boilerplate(tmp_path: Path) -> None:
    doc = parse_file(write(tmp_path, "refunds.html", PAGE))
    for dropped in ("SCRIPT", "color", "SITE HEADER", "NAV", "SITE FOOTER", "ASIDE", "HIDDEN"):
        assert dropped not in doc.text
    assert "NOSCRIPT" not in doc.text and "Site title" not in doc.text
    assert [(s.text, s.heading_level) for s in doc.spans if s.kind == SpanKind.HEADING] == [
        ("Refund Policy", 1),
        ("Exceptions", 2),
    ]
    paragraph = doc.spans[1]
    assert paragraph.text == "Cancellations within 7 calendar days are non-refundable.\nCall us."
    assert paragraph.section_title == "Refund Policy"
    assert texts(doc, SpanKind.LIST_ITEM) == ["3. Medical emergencies", "4. Force majeure"]
    assert texts(doc, SpanKind.TABLE) == ["Days | Refund\n60+ | Full"]
    assert doc.spans[-1].text == "Loose inline text"
    assert doc.spans[-1].section_title == "Exceptions"
    main_only = "<body><p>OUTSIDE</p><main><p>Inside main.</p></main></body>"
    assert parse_file(write(tmp_path, "main.htm", main_only)).text == "Inside main."
    empty = write(tmp_path, "empty.html", "<html><body><nav>only nav</nav></body></html>")
    assert reason_of(empty).reason == IngestReason.PARSE_EMPTY_DOCUMENT


# --- structured entries, dispatch, errors ------------------------------------------------


def test_parse_entries() -> None:
    doc = parse_entries(
        [
            {
                "section": "Refund Window",
                "text": "Cancellations within 7 calendar days of departure are non-refundable.",
            },
            {"section": "Deposits", "text": "Deposits  are\u00a0non-refundable."},
        ]
    )
    assert [(s.kind, s.text, s.section_title) for s in doc.spans] == [
        (SpanKind.HEADING, "Refund Window", "Refund Window"),
        (
            SpanKind.PARAGRAPH,
            "Cancellations within 7 calendar days of departure are non-refundable.",
            "Refund Window",
        ),
        (SpanKind.HEADING, "Deposits", "Deposits"),
        (SpanKind.PARAGRAPH, "Deposits are non-refundable.", "Deposits"),
    ]
    assert doc.page_count is None and doc.parser_version == PARSER_VERSION
    with pytest.raises(ParseError) as empty:
        parse_entries([])
    assert empty.value.reason == IngestReason.PARSE_EMPTY_DOCUMENT
    with pytest.raises(ParseError) as bad:
        parse_entries([{"section": "X", "text": 3}])  # type: ignore[dict-item]
    assert bad.value.reason == IngestReason.PARSE_CORRUPT_FILE


@pytest.mark.parametrize("name", ["old.doc", "sheet.xlsx", "notes.rtf", "README"])
def test_unsupported_extensions(tmp_path: Path, name: str) -> None:
    error = reason_of(write(tmp_path, name, b"some bytes"))
    assert (error.reason, error.state) == (
        IngestReason.PARSE_UNSUPPORTED_FORMAT,
        LifecycleState.FAILED,
    )
    assert name in error.message


@pytest.mark.parametrize("name", ["a.pdf", "a.docx", "a.txt", "a.md", "a.html"])
def test_empty_files_need_attention(tmp_path: Path, name: str) -> None:
    error = reason_of(write(tmp_path, name, b""))
    assert (error.reason, error.state) == (
        IngestReason.PARSE_EMPTY_DOCUMENT,
        LifecycleState.NEEDS_ATTENTION,
    )


def test_missing_file_fails(tmp_path: Path) -> None:
    assert reason_of(tmp_path / "gone.pdf").reason == IngestReason.PARSE_CORRUPT_FILE


def test_parse_error_pickles_unchanged() -> None:
    error = ParseError.for_file(IngestReason.PARSE_ENCRYPTED, "x/terms.pdf", "needs a password")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.reason, copy.state, copy.message, str(copy)) == (
        IngestReason.PARSE_ENCRYPTED,
        LifecycleState.FAILED,
        "x/terms.pdf: needs a password",
        "x/terms.pdf: needs a password",
    )
    with pytest.raises(ValueError):
        ParseError(IngestReason.PARSE_ENCRYPTED, "m", LifecycleState.INDEXED)


# --- normalisation -----------------------------------------------------------------------


def test_normalisation_rules() -> None:
    raw = "  \ufb01rst\u00a0\u00a0line\t end \r\n\r\n\r\n\u200bzero\u200ewidth\x07 \uff21\uff22 "
    assert normalize_text(raw) == "first line end\n\nzerowidth AB"
    assert normalize_text("refund\u00ad\nable") == "refundable"
    assert normalize_text("\uf0b7 item") == "\u2022 item"
    assert normalize_inline("a\nb\n\nc") == "a b c"
    assert join_wrapped_lines(["non-refund-", "able", "well-", "Known"]) == (
        "non-refundable well- Known"
    )


@given(st.text())
def test_normalisation_is_idempotent_and_clean(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert normalize_inline(once) == normalize_inline(text)
    assert "\n\n\n" not in once and "\r" not in once and "\t" not in once
    assert once == once.strip("\n")
    assert all(line == line.strip() for line in once.split("\n"))


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("3. Cancellations and Refunds", 1),
        ("3.2 Refund Window", 2),
        ("REFUND POLICY", 1),
        ("Terms and Conditions", 1),
        ("3 people joined the trip", None),
        ("Payments are due in full.", None),
        ("On March 10, 2019, a Boeing Model", None),
        ("12 Apr 2026", None),
        ("the refund window", None),
        ("Page 3 of 10", None),
    ],
)
def test_heading_heuristic(line: str, level: int | None) -> None:
    assert guess_heading_level(line) == level


# --- guard -------------------------------------------------------------------------------


def test_guard_reuses_worker_and_passes_results_and_errors(tmp_path: Path) -> None:
    pdf = write(tmp_path, "terms.pdf", make_pdf([PAGE_ONE, PAGE_TWO]))
    assert parse_file_guarded(pdf) == parse_file(pdf)
    assert guard._worker is not None
    pid = guard._worker.process.pid
    scan = write(tmp_path, "scan.pdf", make_pdf([[]], frozenset({0})))
    with pytest.raises(ParseError) as caught:
        parse_file_guarded(scan)
    assert caught.value.reason == IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED
    assert caught.value.state == LifecycleState.NEEDS_ATTENTION
    assert caught.value.message == reason_of(scan).message
    assert parse_file_guarded(pdf).page_count == 2
    assert guard._worker.process.pid == pid


@pytest.fixture(scope="module")
def big_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.txt"
    path.write_text(("Refund policy line with some words in it.\n" * 3 + "\n") * 200_000)
    return path


def test_guard_timeout_replaces_worker(tmp_path: Path, big_text: Path) -> None:
    with pytest.raises(ParseError) as caught:
        parse_file_guarded(big_text, timeout_s=0.2)
    assert (caught.value.reason, caught.value.state) == (
        IngestReason.PARSE_TIMEOUT,
        LifecycleState.FAILED,
    )
    assert "big.txt" in caught.value.message
    assert guard._worker is None
    small = write(tmp_path, "small.txt", "Still works.")
    assert parse_file_guarded(small, timeout_s=30).text == "Still works."


def test_guard_memory_limit(tmp_path: Path, big_text: Path) -> None:
    with pytest.raises(ParseError) as caught:
        parse_file_guarded(big_text, max_memory_mb=160)
    assert caught.value.reason == IngestReason.PARSE_TOO_LARGE
    small = write(tmp_path, "small.txt", "Fits easily.")
    assert parse_file_guarded(small, max_memory_mb=160).text == "Fits easily."


def test_guard_killed_worker_is_too_large_and_replaced(tmp_path: Path, big_text: Path) -> None:
    parse_file_guarded(write(tmp_path, "warm.txt", "warm up"))
    assert guard._worker is not None
    pid = guard._worker.process.pid
    killer = threading.Timer(0.3, os.kill, args=(pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(ParseError) as caught:
        parse_file_guarded(big_text)
    killer.join()
    assert caught.value.reason == IngestReason.PARSE_TOO_LARGE
    assert parse_file_guarded(write(tmp_path, "after.txt", "Next one.")).text == "Next one."
    assert guard._worker is not None and guard._worker.process.pid != pid
