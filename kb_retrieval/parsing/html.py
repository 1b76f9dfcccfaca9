"""HTML parser (selectolax/lexbor): the main text of a page, headings kept.

Dropped: script, style, noscript, template, svg, canvas, iframe, object, embed, form
controls, nav, aside, footer, a header that is not inside main/article/section, elements
with role navigation/banner/contentinfo/search/complementary, `hidden` and
`aria-hidden="true"` elements, comments. The text root is <main> (or role=main) when
present, else <body>. h1-h6 become headings; li become list items (ordinals of <ol> kept);
a table without nested tables or headings becomes one TABLE span (rows on lines, cells
joined by " | "), other tables are read as ordinary content; <pre> keeps its lines; <br>
breaks a line; every other block element ends a paragraph.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from kb_retrieval.models import SpanKind
from kb_retrieval.parsing.normalize import SpanCollector
from kb_retrieval.parsing.text import decode_bytes

_DROP = (
    "script, style, noscript, template, svg, canvas, iframe, object, embed, button, select, "
    "textarea, input, nav, aside, footer, dialog, [hidden], [aria-hidden=true], "
    "[role=navigation], [role=banner], [role=contentinfo], [role=search], "
    "[role=complementary]"
)
_BLOCKS = frozenset(
    {"address", "article", "blockquote", "body", "caption", "center", "dd", "details", "div"}
    | {"dl", "dt", "fieldset", "figcaption", "figure", "form", "hr", "legend", "main", "menu"}
    | {"ol", "p", "section", "summary", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"}
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_SPACE = re.compile(r"\s+")


def _strip_boilerplate(root: Any) -> None:
    for node in root.css(_DROP):
        node.decompose()
    for node in root.css("header"):
        if not any(p.tag in ("main", "article", "section") for p in _ancestors(node)):
            node.decompose()


def _ancestors(node: Any) -> list[Any]:
    found = []
    parent = node.parent
    while parent is not None:
        found.append(parent)
        parent = parent.parent
    return found


def _inline_text(node: Any) -> str:
    """Text of a subtree on one line: inline elements glue, block elements and <br> space."""
    parts = []
    for child in node.traverse(include_text=True):
        if child.tag == "-text":
            parts.append(child.text(deep=False))
        elif child.tag in _BLOCKS or child.tag in _HEADINGS or child.tag in ("br", "li"):
            parts.append(" ")
    return _SPACE.sub(" ", "".join(parts))


def _is_data_table(table: Any) -> bool:
    """A table without nested tables or headings (otherwise it is a layout table)."""
    inner = table.css("table, h1, h2, h3, h4, h5, h6")
    return all(node.mem_id == table.mem_id for node in inner)


def _table_text(table: Any) -> str:
    rows = []
    for row in table.css("tr"):
        cells = [_inline_text(cell).strip() for cell in row.iter() if cell.tag in ("td", "th")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


class _Emitter:
    def __init__(self, out: SpanCollector) -> None:
        self.out = out
        self.buffer: list[str] = []
        self.kind = SpanKind.PARAGRAPH
        self.prefix = ""

    def flush(self) -> None:
        text = "".join(self.buffer)
        if text.strip():
            self.out.block(f"{self.prefix}{text}", self.kind, keep_lines=True)
            self.prefix = ""
        self.buffer = []


def _number_items(ordered_list: Any, ordinals: dict[int, str]) -> None:
    start = ordered_list.attributes.get("start") or "1"
    number = int(start) if start.lstrip("-").isdigit() else 1
    for child in ordered_list.iter():
        if child.tag == "li":
            ordinals[child.mem_id] = f"{number}. "
            number += 1


def _walk(root: Any, out: SpanCollector) -> None:
    emit = _Emitter(out)
    stack: list[tuple[Any, bool]] = [(root, False)]
    kinds: list[SpanKind] = [SpanKind.PARAGRAPH]
    ordinals: dict[int, str] = {}
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            emit.flush()
            if tag == "li":
                kinds.pop()
            emit.kind = kinds[-1]
            continue
        if tag == "-text":
            emit.buffer.append(_SPACE.sub(" ", node.text(deep=False)))
        elif tag == "br":
            emit.buffer.append("\n")
        elif tag in _HEADINGS:
            emit.flush()
            out.heading(_inline_text(node), _HEADINGS[tag])
        elif tag == "pre":
            emit.flush()
            out.block(node.text(deep=True), emit.kind, keep_lines=True)
        elif tag == "table" and _is_data_table(node):
            emit.flush()
            out.block(_table_text(node), SpanKind.TABLE, keep_lines=True)
        elif tag == "img":
            pass
        elif isinstance(tag, str) and not tag.startswith("-"):
            if tag in _BLOCKS or tag == "li" or tag == "table":
                emit.flush()
                stack.append((node, True))
            if tag == "li":
                kinds.append(SpanKind.LIST_ITEM)
                emit.kind = SpanKind.LIST_ITEM
                emit.prefix = ordinals.get(node.mem_id, "")
            if tag == "ol":
                _number_items(node, ordinals)
            stack.extend((child, False) for child in reversed(list(node.iter(include_text=True))))
    emit.flush()


def parse_html(data: bytes, path: Path) -> SpanCollector:
    """Parse an HTML file (see the module docstring)."""
    declared = _META_CHARSET.search(data[:4096])
    text, warnings = decode_bytes(
        data, path, declared.group(1).decode("ascii") if declared else None
    )
    tree = LexborHTMLParser(text)
    out = SpanCollector()
    out.warnings.extend(warnings)
    root = tree.css_first("main") or tree.css_first("[role=main]") or tree.body or tree.root
    if root is None:
        return out
    _strip_boilerplate(root)
    _walk(root, out)
    return out
