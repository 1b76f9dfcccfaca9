"""The chunker's plan of a document (steps 1-5 of `chunking.py`'s docstring): sections, units and
how they are packed into chunks with overlap; `chunk_document` renders and counts the plans."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kb_retrieval.ingestion.chunk_config import ChunkerConfig, TokenCounter, count_all
from kb_retrieval.models import Span, SpanKind
from kb_retrieval.text.sentences import sentence_bounds

OVERLAP_BAND = (0.10, 0.15)
HEADING_PREFIX_MAX_RATIO = 0.25
PARAGRAPH_BONUS_RATIO = 0.20
SENTENCE_BONUS_RATIO = 0.05
TINY_TAIL_RATIO = 0.20
_SEP = "\n\n"
_WORD = re.compile(r"\S+")

PARAGRAPH, SENTENCE, WORD = 2, 1, 0


@dataclass(frozen=True)
class Unit:
    """A piece span.text[start:end] with its token count and the boundary strength before it."""

    span: int
    start: int
    end: int
    tokens: int
    boundary: int


@dataclass(frozen=True)
class _Text:
    """Text that is not at its place in the document (a repeated heading block or a title)."""

    text: str
    tokens: int


_Part = Unit | _Text


@dataclass
class _Section:
    title: str | None
    heads: list[int]
    body: list[int]
    lead: list[Unit] | None = None
    prefix: _Text | None = None
    units: list[Unit] | None = None

    def first_head(self) -> list[_Part]:
        """What opens the section's first chunk (its heading spans, or its title)."""
        if self.lead:
            return list(self.lead)
        return [self.prefix] if self.prefix else []


@dataclass(frozen=True)
class _Plan:
    title: str | None
    parts: tuple[_Part, ...]
    starts_section: bool

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.parts)


def raw_sections(spans: Sequence[Span]) -> list[_Section]:
    sections: list[_Section] = []
    body_key: str | None = None
    for index, span in enumerate(spans):
        if not span.text.strip():
            continue
        current = sections[-1] if sections else None
        if span.kind is SpanKind.HEADING:
            title = " ".join(span.text.split())
            if current is not None and not current.body:
                current.heads.append(index)
                current.title = title
            else:
                sections.append(_Section(title, [index], []))
            body_key = None
            continue
        key = " ".join(span.section_title.split()) if span.section_title else None
        if current is None or (current.body and key is not None and key != body_key):
            sections.append(_Section(key, [], [index]))
        else:
            current.body.append(index)
        if key is not None:
            body_key = key
    return sections


class Planner:
    def __init__(self, spans: Sequence[Span], counter: TokenCounter, config: ChunkerConfig):
        self.spans, self.counter, self.cfg = spans, counter, config
        self.strict = False
        m = config.max_tokens
        self.ov_target = round(m * config.overlap_ratio)
        self.ov_lo = math.ceil(m * min(OVERLAP_BAND[0], config.overlap_ratio))
        self.ov_hi = math.floor(m * max(OVERLAP_BAND[1], config.overlap_ratio))
        self.prefix_cap = math.floor(m * HEADING_PREFIX_MAX_RATIO)
        self.bonus = {
            PARAGRAPH: m * PARAGRAPH_BONUS_RATIO,
            SENTENCE: m * SENTENCE_BONUS_RATIO,
            WORD: 0,
        }
        self.tiny = max(1, round(config.min_tokens * TINY_TAIL_RATIO))
        self.sentences: dict[int, list[tuple[int, int, int]]] = {}

    # -- text ----------------------------------------------------------------------------------

    def render(self, parts: Iterable[_Part]) -> str:
        pieces: list[str] = []
        run: list[int] | None = None
        for part in parts:
            if isinstance(part, Unit) and run and run[0] == part.span and part.start >= run[2]:
                run[2] = part.end
                continue
            if run:
                pieces.append(self.spans[run[0]].text[run[1] : run[2]])
                run = None
            if isinstance(part, _Text):
                pieces.append(part.text)
            else:
                run = [part.span, part.start, part.end]
        if run:
            pieces.append(self.spans[run[0]].text[run[1] : run[2]])
        return _SEP.join(pieces)

    def fits(self, parts: Sequence[_Part]) -> bool:
        """Within max_tokens by the summed unit counts (and by a real count when strict)."""
        if sum(p.tokens for p in parts) > self.cfg.max_tokens:
            return False
        return not self.strict or self.counter.count(self.render(parts)) <= self.cfg.max_tokens

    # -- units ---------------------------------------------------------------------------------

    def prepare(self, sections: Sequence[_Section]) -> None:
        """Count all sentences in one batch, then build each section's prefix and units."""
        keys: list[tuple[int, int, int]] = []
        for index in sorted({i for s in sections for i in (*s.heads, *s.body)}):
            keys.extend((index, a, b) for a, b in sentence_bounds(self.spans[index].text))
        counts = count_all(self.counter, [self.spans[i].text[a:b] for i, a, b in keys])
        for (index, a, b), n in zip(keys, counts, strict=True):
            self.sentences.setdefault(index, []).append((a, b, n))
        for section in sections:
            self._prepare_section(section)

    def _prepare_section(self, section: _Section) -> None:
        body = list(section.body)
        section.lead, section.prefix = [], None
        if section.heads:
            lead = self._units(section.heads, self.cfg.max_tokens)
            if sum(u.tokens for u in lead) <= self.prefix_cap:
                section.lead = lead
                section.prefix = _Text(self.render(lead), sum(u.tokens for u in lead))
            else:
                body = section.heads + body
        elif section.title is not None:
            tokens = self.counter.count(section.title)
            if tokens <= self.prefix_cap:
                section.prefix = _Text(section.title, tokens)
        prefix_tokens = section.prefix.tokens if section.prefix else 0
        section.units = self._units(body, self.cfg.max_tokens - prefix_tokens - self.ov_hi)

    def _units(self, span_ids: Sequence[int], cap: int) -> list[Unit]:
        units: list[Unit] = []
        for index in span_ids:
            for k, (a, b, n) in enumerate(self.sentences.get(index, [])):
                boundary = PARAGRAPH if k == 0 else SENTENCE
                if n <= cap:
                    units.append(Unit(index, a, b, n, boundary))
                else:
                    units.extend(self._split_long(index, a, b, cap, boundary))
        return units

    def _split_long(self, index: int, a: int, b: int, cap: int, boundary: int) -> list[Unit]:
        """Cut an over-long sentence into balanced word groups of at most cap tokens."""
        text = self.spans[index].text
        words = [(m.start() + a, m.end() + a) for m in _WORD.finditer(text[a:b])]
        counts = count_all(self.counter, [text[s:e] for s, e in words])
        pieces: list[tuple[int, int, int]] = []
        for (s, e), n in zip(words, counts, strict=True):
            pieces.extend([(s, e, n)] if n <= cap else self._split_word(text, s, e, cap))
        total = sum(n for _, _, n in pieces)
        target = total / max(1, math.ceil(total / cap))
        units: list[Unit] = []
        start, end, acc = -1, -1, 0
        for s, e, n in pieces:
            if start >= 0 and (acc + n > cap or acc >= target):
                units.append(Unit(index, start, end, acc, WORD if units else boundary))
                start, acc = -1, 0
            start = s if start < 0 else start
            end, acc = e, acc + n
        units.append(Unit(index, start, end, acc, WORD if units else boundary))
        return units

    def _split_word(self, text: str, s: int, e: int, cap: int) -> list[tuple[int, int, int]]:
        """Cut a whitespace-free run into the longest character ranges of at most cap tokens."""
        pieces: list[tuple[int, int, int]] = []
        while s < e:
            lo, hi = s + 1, e
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.counter.count(text[s:mid]) <= cap:
                    lo = mid
                else:
                    hi = mid - 1
            pieces.append((s, lo, self.counter.count(text[s:lo])))
            s = lo
        return pieces

    # -- packing -------------------------------------------------------------------------------

    def plan(self, sections: Sequence[_Section]) -> list[_Plan]:
        whole: list[_Part] = []
        for section in sections:
            whole += section.first_head() + list(section.units or [])
        if self.fits(whole):
            return [_Plan(sections[0].title, tuple(whole), True)]
        plans: list[_Plan] = []
        for section in sections:
            own = self._pack(section)
            if len(own) == 1 and plans and plans[-1].tokens < self.cfg.min_tokens:
                joined = plans[-1].parts + own[0].parts
                if self.fits(joined):
                    plans[-1] = _Plan(plans[-1].title, joined, plans[-1].starts_section)
                    continue
            plans.extend(own)
        if len(plans) > 1 and plans[-1].starts_section and plans[-1].tokens < self.tiny:
            joined = plans[-2].parts + plans[-1].parts
            if self.fits(joined):
                plans[-2:] = [_Plan(plans[-2].title, joined, plans[-2].starts_section)]
        return plans

    def _pack(self, section: _Section) -> list[_Plan]:
        units = section.units or []
        head_first = section.first_head()
        head_next: list[_Part] = [section.prefix] if section.prefix else []
        if not units:
            return [_Plan(section.title, tuple(head_first), True)] if head_first else []
        plans: list[_Plan] = []
        pos = 0
        overlap: list[Unit] = []
        while pos < len(units):
            base: list[_Part] = (head_next if plans else head_first) + overlap
            end = self._choose_end(units, pos, base, section)
            while not self.fits(base + units[pos:end]):
                if end - pos > 1:
                    end -= 1
                elif overlap:
                    overlap, base = [], base[: len(base) - len(overlap)]
                else:
                    raise ValueError("token counter disagrees with itself: a unit exceeds max")
            plans.append(_Plan(section.title, tuple(base + units[pos:end]), not plans))
            overlap = self._overlap(units[pos:end]) if end < len(units) else []
            pos = end
        return plans

    def _choose_end(
        self, units: Sequence[Unit], pos: int, base: Sequence[_Part], section: _Section
    ) -> int:
        """End (exclusive) of the chunk starting at units[pos] after base (heading, overlap)."""
        m = self.cfg.max_tokens
        used = sum(p.tokens for p in base)
        remaining = sum(u.tokens for u in units[pos:])
        if used + remaining <= m:
            return len(units)
        head = section.prefix.tokens if section.prefix else 0
        per_next = max(1, m - head - self.ov_target)
        n = 1 + math.ceil((used + remaining - m) / per_next)
        balanced = (used + remaining + (n - 1) * (head + self.ov_target)) / n
        floor = min(self.cfg.min_tokens, balanced)
        best, best_key = pos + 1, (False, -math.inf)
        fill = used
        for end in range(pos + 1, len(units) + 1):
            fill += units[end - 1].tokens
            if fill > m:
                break
            boundary = units[end].boundary if end < len(units) else PARAGRAPH
            key = (fill >= floor, self.bonus[boundary] - abs(fill - balanced))
            if key > best_key:
                best, best_key = end, key
        return best

    def _overlap(self, previous: Sequence[Unit]) -> list[Unit]:
        """The last sentences of the previous chunk's new text, 10-15% of max_tokens."""
        if self.ov_target <= 0:
            return []
        total, j = 0, len(previous)
        best_j, best_gap = -1, math.inf
        while j > 0 and total + previous[j - 1].tokens <= self.ov_hi:
            j -= 1
            total += previous[j].tokens
            gap = abs(total - self.ov_target)
            if total >= self.ov_lo and gap < best_gap:
                best_j, best_gap = j, gap
        if best_j >= 0:
            return list(previous[best_j:])
        if j == 0:
            return list(previous)
        part = self._word_suffix(
            previous[j - 1], self.ov_lo - total, self.ov_hi - total, self.ov_target - total
        )
        return ([part] if part else []) + list(previous[j:])

    def _word_suffix(self, unit: Unit, lo: int, hi: int, target: int) -> Unit | None:
        """The run of last words of unit with a token count in [lo, hi], closest to target."""
        text = self.spans[unit.span].text
        starts = [m.start() + unit.start for m in _WORD.finditer(text[unit.start : unit.end])][1:]
        counts: dict[int, int] = {}

        def count(i: int) -> int:
            if i not in counts:
                counts[i] = self.counter.count(text[starts[i] : unit.end])
            return counts[i]

        lo_i, hi_i = 0, len(starts)
        while lo_i < hi_i:
            mid = (lo_i + hi_i) // 2
            if count(mid) <= target:
                hi_i = mid
            else:
                lo_i = mid + 1
        candidates = [i for i in (lo_i - 1, lo_i) if 0 <= i < len(starts) and 0 < count(i) <= hi]
        if not candidates:
            return None
        best = min(candidates, key=lambda i: (count(i) < lo, abs(count(i) - target), i))
        return Unit(unit.span, starts[best], unit.end, count(best), WORD)
