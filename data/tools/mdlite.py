"""A tiny Markdown subset used by the demo document sources.

Supported blocks: `#`/`##`/`###` headings, paragraphs (consecutive lines), `- ` bullet
lists, `1. ` numbered lists, pipe tables (header row, `---` separator row, body rows) and
the page-break marker `<!-- pagebreak -->`. No inline markup is used in the sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PAGEBREAK = "<!-- pagebreak -->"
_BULLET = re.compile(r"^- (.*)$")
_NUMBERED = re.compile(r"^\d+\. (.*)$")
_HEADING = re.compile(r"^(#{1,3}) (.*)$")


@dataclass
class Block:
    """One block of a source document."""

    kind: str  # heading | paragraph | bullets | numbered | table | pagebreak
    text: str = ""
    level: int = 0
    items: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def _table_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse(text: str) -> list[Block]:
    """Parse source text into blocks."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
            continue
        if line == PAGEBREAK:
            blocks.append(Block("pagebreak"))
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            blocks.append(Block("heading", heading.group(2).strip(), level=len(heading.group(1))))
            i += 1
            continue
        if line.startswith("|"):
            rows: list[list[str]] = []
            while i < len(lines) and lines[i].startswith("|"):
                row = _table_row(lines[i])
                if not all(set(cell) <= {"-", ":"} for cell in row):
                    rows.append(row)
                i += 1
            blocks.append(Block("table", rows=rows))
            continue
        for kind, pattern in (("bullets", _BULLET), ("numbered", _NUMBERED)):
            if pattern.match(line):
                items: list[str] = []
                while i < len(lines):
                    match = pattern.match(lines[i].rstrip())
                    if not match:
                        break
                    items.append(match.group(1).strip())
                    i += 1
                blocks.append(Block(kind, items=items))
                break
        else:
            para: list[str] = []
            while i < len(lines):
                current = lines[i].rstrip()
                if (
                    not current
                    or current == PAGEBREAK
                    or _HEADING.match(current)
                    or current.startswith("|")
                    or _BULLET.match(current)
                    or _NUMBERED.match(current)
                ):
                    break
                para.append(current.strip())
                i += 1
            blocks.append(Block("paragraph", " ".join(para)))
    return blocks


def parse_file(path: Path) -> list[Block]:
    return parse(path.read_text(encoding="utf-8"))


def title_of(blocks: list[Block]) -> str:
    """The text of the first level-1 heading."""
    for block in blocks:
        if block.kind == "heading" and block.level == 1:
            return block.text
    raise ValueError("source has no level-1 heading")


def text_units(blocks: list[Block]) -> list[str]:
    """Every atomic piece of text (heading, paragraph, list item, table cell)."""
    units: list[str] = []
    for block in blocks:
        if block.kind in ("heading", "paragraph"):
            units.append(block.text)
        elif block.kind in ("bullets", "numbered"):
            units.extend(block.items)
        elif block.kind == "table":
            units.extend(cell for row in block.rows for cell in row)
    return units
