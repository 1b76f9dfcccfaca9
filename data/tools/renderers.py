"""Deterministic renderers of mdlite blocks to PDF, DOCX, HTML, TXT and Markdown."""

from __future__ import annotations

import html
import io
import random
import textwrap
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

from docx import Document
from docx.shared import Pt
from fpdf import FPDF
from mdlite import PAGEBREAK, Block, title_of
from PIL import Image, ImageDraw, ImageFilter, ImageFont

_FIXED_ZIP_TIME = (2026, 1, 1, 0, 0, 0)
_PRODUCER = "demo-docs-builder 1"


def _stamp(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 9, 0, 0, tzinfo=UTC)


class _DemoPDF(FPDF):
    """FPDF with a running header and a page-numbered footer."""

    def __init__(self, header_text: str, footer_text: str) -> None:
        super().__init__(format="A4")
        self.header_text = header_text
        self.footer_text = footer_text

    def header(self) -> None:
        self.set_font("Helvetica", "I", 8)
        self.set_text_color(120)
        self.cell(0, 5, self.header_text, align="R", new_x="LMARGIN", new_y="NEXT")
        self.ln(4)
        self.set_text_color(0)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", "", 8)
        self.set_text_color(120)
        self.cell(0, 10, f"{self.footer_text} | Page {self.page_no()} of {{nb}}", align="C")
        self.set_text_color(0)


def _pdf_setup(pdf: FPDF, title: str, org: str, subject: str, created: date) -> None:
    pdf.set_title(title)
    pdf.set_author(org)
    pdf.set_subject(subject)
    pdf.set_creator(org)
    pdf.set_producer(_PRODUCER)
    pdf.set_lang("en")
    pdf.set_creation_date(_stamp(created))
    pdf.set_auto_page_break(True, margin=20)
    pdf.set_margins(20, 15, 20)


def render_pdf(blocks: list[Block], out: Path, org: str, subject: str, created: date) -> None:
    """Render blocks to a PDF with a real text layer, headings and page breaks."""
    title = title_of(blocks)
    pdf = _DemoPDF(f"{org} - {title}", org)
    _pdf_setup(pdf, title, org, subject, created)
    pdf.add_page()
    sizes = {1: 18, 2: 14, 3: 12}
    for block in blocks:
        if block.kind == "pagebreak":
            pdf.add_page()
        elif block.kind == "heading":
            if block.level > 1 and pdf.get_y() > pdf.h - 55:
                pdf.add_page()
            pdf.ln(3 if block.level > 1 else 0)
            pdf.set_font("Helvetica", "B", sizes[block.level])
            pdf.multi_cell(
                0, sizes[block.level] * 0.5, block.text, align="L", new_x="LMARGIN", new_y="NEXT"
            )
            pdf.ln(2)
        elif block.kind == "paragraph":
            pdf.set_font("Helvetica", "", 10.5)
            pdf.multi_cell(0, 5.5, block.text, align="L", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2.5)
        elif block.kind in ("bullets", "numbered"):
            pdf.set_font("Helvetica", "", 10.5)
            for number, item in enumerate(block.items, start=1):
                marker = "-" if block.kind == "bullets" else f"{number}."
                pdf.set_x(pdf.l_margin + 4)
                pdf.cell(6, 5.5, marker)
                pdf.multi_cell(pdf.epw - 10, 5.5, item, align="L", new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1)
            pdf.ln(1.5)
        elif block.kind == "table":
            pdf.set_font("Helvetica", "", 9.5)
            with pdf.table(text_align="LEFT", first_row_as_headings=True) as table:
                for row in block.rows:
                    table_row = table.row()
                    for cell in row:
                        table_row.cell(cell)
            pdf.ln(3)
    pdf.output(str(out))


def render_scan_pdf(text: str, out: Path, org: str, created: date) -> None:
    """Render text into a noisy greyscale image and embed it: a PDF with no text layer."""
    width, height = 1240, 1754
    image = Image.new("L", (width, height), 246)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=26)
    y = 150
    for line in text.splitlines():
        draw.text((140, y), line, fill=35, font=font)
        y += 40
    rng = random.Random(20260902)
    for _ in range(9000):
        draw.point((rng.randrange(width), rng.randrange(height)), fill=rng.randrange(150, 230))
    image = image.rotate(0.7, resample=Image.Resampling.BICUBIC, fillcolor=246)
    image = image.filter(ImageFilter.GaussianBlur(0.6))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    pdf = FPDF(format="A4")
    pdf.set_producer("ScanStation 4.2")
    pdf.set_creator("ScanStation 4.2")
    pdf.set_creation_date(_stamp(created))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.image(buffer, x=0, y=0, w=pdf.w, h=pdf.h)
    pdf.output(str(out))


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite a zip archive with fixed timestamps so that rebuilding gives the same bytes."""
    source = zipfile.ZipFile(io.BytesIO(data))
    target_buffer = io.BytesIO()
    with zipfile.ZipFile(target_buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=_FIXED_ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, source.read(info.filename))
    return target_buffer.getvalue()


def render_docx(blocks: list[Block], out: Path, org: str, subject: str, created: date) -> None:
    """Render blocks to DOCX with Heading styles, list styles and a grid table."""
    title = title_of(blocks)
    doc = Document()
    props = doc.core_properties
    props.title = title
    props.author = org
    props.last_modified_by = org
    props.subject = subject
    props.created = _stamp(created).replace(tzinfo=None)
    props.modified = _stamp(created).replace(tzinfo=None)
    props.revision = 1
    doc.styles["Normal"].font.name = "Calibri"
    doc.styles["Normal"].font.size = Pt(11)
    doc.sections[0].footer.paragraphs[0].text = f"{org} - {title}"
    for block in blocks:
        if block.kind == "pagebreak":
            doc.add_page_break()
        elif block.kind == "heading":
            doc.add_heading(block.text, level=block.level)
        elif block.kind == "paragraph":
            doc.add_paragraph(block.text)
        elif block.kind in ("bullets", "numbered"):
            style = "List Bullet" if block.kind == "bullets" else "List Number"
            for item in block.items:
                doc.add_paragraph(item, style=style)
        elif block.kind == "table":
            table = doc.add_table(rows=len(block.rows), cols=len(block.rows[0]))
            table.style = "Table Grid"
            for row_index, row in enumerate(block.rows):
                for col_index, value in enumerate(row):
                    cell = table.cell(row_index, col_index)
                    cell.text = value
                    if row_index == 0:
                        for run in cell.paragraphs[0].runs:
                            run.bold = True
    buffer = io.BytesIO()
    doc.save(buffer)
    out.write_bytes(_normalise_zip(buffer.getvalue()))


_HTML_STYLE = (
    "body{font-family:Georgia,serif;max-width:46rem;margin:0 auto;padding:1rem;color:#222}"
    "header nav a{margin-right:1rem}h1{color:#0b4f6c}.faq-item{margin-bottom:1rem}"
    "footer{font-size:.8rem;color:#777;border-top:1px solid #ddd;margin-top:2rem}"
)


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def render_html(blocks: list[Block], out: Path, org: str, site: str) -> None:
    """Render blocks to a web page with site navigation, a script and a footer around it."""
    title = title_of(blocks)
    body: list[str] = []
    for block in blocks:
        if block.kind == "heading":
            body.append(f"<h{block.level}>{_esc(block.text)}</h{block.level}>")
        elif block.kind == "paragraph":
            body.append(f"<p>{_esc(block.text)}</p>")
        elif block.kind in ("bullets", "numbered"):
            tag = "ul" if block.kind == "bullets" else "ol"
            items = "".join(f"\n  <li>{_esc(item)}</li>" for item in block.items)
            body.append(f"<{tag}>{items}\n</{tag}>")
        elif block.kind == "table":
            head = "".join(f"<th>{_esc(cell)}</th>" for cell in block.rows[0])
            rows = "".join(
                "\n  <tr>" + "".join(f"<td>{_esc(cell)}</td>" for cell in row) + "</tr>"
                for row in block.rows[1:]
            )
            body.append(f"<table>\n  <tr>{head}</tr>{rows}\n</table>")
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_esc(title)} | {_esc(org)}</title>\n"
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<style>{_HTML_STYLE}</style>\n"
        "<script>window.dataLayer = window.dataLayer || [];</script>\n</head>\n<body>\n"
        f'<header><nav><a href="https://{site}/">Home</a><a href="https://{site}/trips">Trips</a>'
        f'<a href="https://{site}/faq">FAQ</a><a href="https://{site}/contact">Contact</a>'
        "</nav></header>\n<main>\n<article>\n" + "\n".join(body) + "\n</article>\n</main>\n"
        f"<footer><p>Copyright 2026 {_esc(org)}. All rights reserved.</p></footer>\n"
        "</body>\n</html>\n"
    )
    out.write_text(page, encoding="utf-8")


def render_txt(blocks: list[Block], out: Path) -> None:
    """Render blocks to plain text wrapped at 78 columns (never breaking on hyphens)."""
    wrap = textwrap.TextWrapper(width=78, break_long_words=False, break_on_hyphens=False)
    lines: list[str] = []
    underline = {1: "=", 2: "-"}
    for block in blocks:
        if block.kind == "heading":
            heading = block.text.upper() if block.level == 1 else block.text
            lines.append(heading)
            if block.level in underline:
                lines.append(underline[block.level] * len(heading))
        elif block.kind == "paragraph":
            lines.extend(wrap.wrap(block.text))
        elif block.kind in ("bullets", "numbered"):
            for number, item in enumerate(block.items, start=1):
                marker = "* " if block.kind == "bullets" else f"{number}. "
                item_wrap = textwrap.TextWrapper(
                    width=78,
                    initial_indent=marker,
                    subsequent_indent=" " * len(marker),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
                lines.extend(item_wrap.wrap(item))
        elif block.kind == "table":
            for row in block.rows:
                lines.append(" | ".join(row))
        else:
            continue
        lines.append("")
    out.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


def render_md(source_text: str, out: Path) -> None:
    """Copy Markdown source, dropping page-break markers."""
    kept = [line for line in source_text.splitlines() if line.strip() != PAGEBREAK]
    text = "\n".join(kept)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    out.write_text(text.strip() + "\n", encoding="utf-8")
