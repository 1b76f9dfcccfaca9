"""The deterministic chunker, its locators and the policy-likeness hint."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb_retrieval.ingestion.chunking import (
    CHUNKER_VERSION,
    ChunkerConfig,
    WordPieceCounter,
    chunk_document,
    format_source_locator,
    parse_source_locator,
    sentence_bounds,
    slugify_section,
)
from kb_retrieval.ingestion.policy_hint import policy_likeness_hint
from kb_retrieval.model_files import load_fast_tokenizer
from kb_retrieval.models import Chunk, ParsedDocument, PolicyLikeness, Span, SpanKind

DEFAULT = ChunkerConfig()
VOCAB = re.findall(
    r"\S+",
    "the guest trip refund day camp river guide must deposit walk lunch hotel bus price paid "
    "within seven calendar days before departure glacier valley ridge summit weather safety "
    "boots jacket water snack permit transfer Patagonia 06:00 non-refundable 25% $200 café",
)


@pytest.fixture(scope="module")
def counter() -> WordPieceCounter:
    return WordPieceCounter(load_fast_tokenizer())


def _paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(6, 20))]
        out.append(words[0].capitalize() + " " + " ".join(words[1:]) + rng.choice(".!?"))
    return " ".join(out)


def _section(title: str, paragraphs: int, rng: random.Random, pages: list[int]) -> list[Span]:
    """A heading and its paragraphs; a new page starts every third paragraph."""
    spans = [Span(title, SpanKind.HEADING, pages[0], heading_level=2)]
    for i in range(paragraphs):
        if i and i % 3 == 0:
            pages[0] += 1
        spans.append(Span(_paragraph(rng, rng.randint(2, 5)), SpanKind.PARAGRAPH, pages[0]))
    return spans


def _multi_section_doc() -> ParsedDocument:
    rng, pages = random.Random(20260401), [1]
    spans: list[Span] = []
    for title, paragraphs in [
        ("Cancellations and Refunds", 40),
        ("Day 1: Arrival", 20),
        ("Packing", 2),
        ("Medical Clearance", 25),
    ]:
        spans += _section(title, paragraphs, rng, pages)
    return ParsedDocument(tuple(spans), "test-parser", pages[0])


def _body(chunk: Chunk) -> str:
    prefix = f"{chunk.section_title}\n\n"
    assert chunk.text.startswith(prefix), chunk.text[:80]
    return chunk.text[len(prefix) :]


def _overlap_text(previous: Chunk, chunk: Chunk) -> str:
    body = _body(chunk)
    lengths = [k for k in range(1, len(body) + 1) if previous.text.endswith(body[:k])]
    return body[: max(lengths, default=0)]


def _covered(text: str, chunk_texts: Sequence[str]) -> bool:
    """The span's words are covered, in order, by runs that each appear in some chunk."""
    haystack = "\x00".join(chunk_texts)
    words = [m.span() for m in re.finditer(r"\S+", text)]
    i = 0
    while i < len(words):
        # a run that appears in a chunk stays in it when shortened: binary search its longest end
        lo, hi = i, len(words)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if text[words[i][0] : words[mid - 1][1]] in haystack:
                lo = mid
            else:
                hi = mid - 1
        if lo == i:
            return False
        i = lo
    return True


def _check_invariants(
    doc: ParsedDocument, chunks: list[Chunk], counter: WordPieceCounter, config: ChunkerConfig
) -> None:
    texts = [c.text for c in chunks]
    for i, chunk in enumerate(chunks):
        assert chunk.chunk_index == i
        assert chunk.chunk_id == f"docv_t_{i:03d}"
        assert chunk.token_count == counter.count(chunk.text) <= config.max_tokens
        parsed = parse_source_locator(chunk.source_locator)
        assert parsed["chunk_index"] == i
        assert (parsed["page_start"], parsed["page_end"]) == (chunk.page_start, chunk.page_end)
        assert (
            format_source_locator(
                "docv_t", i, chunk.page_start, chunk.page_end, chunk.section_title
            )
            == chunk.source_locator
        )
    for span in doc.spans:
        assert _covered(span.text, texts), span.text[:80]


# ---- locators ----------------------------------------------------------------------------------


def test_slugify_examples() -> None:
    assert slugify_section("Cancellations and Refunds") == "Cancellations-and-Refunds"
    assert slugify_section("Day 1: Arrival") == "Day-1-Arrival"
    assert slugify_section("  --Refund Window!! ") == "Refund-Window"
    assert slugify_section("Café & Ski_Rules") == "Café-Ski-Rules"
    assert slugify_section(None) == "-"
    assert slugify_section("?!") == "-"


def test_locator_format_matches_contract() -> None:
    assert (
        format_source_locator("docv_policy_refund_v5", 0, None, None, "Refund Window")
        == "docv:docv_policy_refund_v5#chunk:000|p:-|sec:Refund-Window"
    )
    assert (
        format_source_locator("docv_2026_terms_v2", 12, 3, 3, "Cancellations and Refunds")
        == "docv:docv_2026_terms_v2#chunk:012|p:3-3|sec:Cancellations-and-Refunds"
    )
    assert format_source_locator("docv_a", 1234, 2, 5, None) == "docv:docv_a#chunk:1234|p:2-5|sec:-"
    assert parse_source_locator("docv:docv_2026_terms_v1#chunk:012|p:3-4|sec:Cancellations") == {
        "doc_version_id": "docv_2026_terms_v1",
        "chunk_index": 12,
        "page_start": 3,
        "page_end": 4,
        "section_slug": "Cancellations",
    }


@pytest.mark.parametrize(
    "bad",
    [
        "docv:x#chunk:1|p:-|sec:-",
        "docv:x#chunk:001|p:3|sec:-",
        "docv:x#chunk:001|p:-|sec:Two Words",
        "docv:x#chunk:001|p:-|sec:-Lead",
        "docv:x y#chunk:001|p:-|sec:-",
        "x#chunk:001|p:-|sec:-",
        "docv:x#chunk:0001|p:-|sec:-",
        "docv:x#chunk:001|p:03-4|sec:-",
        "docv:x#chunk:001|p:-|sec:-\n",
    ],
)
def test_parse_rejects_malformed(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_source_locator(bad)


def test_format_rejects_bad_doc_version_id() -> None:
    for bad in ["", "a|b", "a#b", "a b"]:
        with pytest.raises(ValueError):
            format_source_locator(bad, 0, None, None, None)


@given(
    doc_version_id=st.from_regex(r"[A-Za-z0-9_.:-]{1,30}", fullmatch=True),
    index=st.integers(0, 5000),
    pages=st.one_of(st.none(), st.tuples(st.integers(1, 999), st.integers(0, 50))),
    title=st.one_of(st.none(), st.text(max_size=40)),
)
def test_locator_round_trip(
    doc_version_id: str, index: int, pages: tuple[int, int] | None, title: str | None
) -> None:
    start, end = (pages[0], pages[0] + pages[1]) if pages else (None, None)
    locator = format_source_locator(doc_version_id, index, start, end, title)
    parsed = parse_source_locator(locator)
    assert parsed["doc_version_id"] == doc_version_id
    assert parsed["chunk_index"] == index
    assert (parsed["page_start"], parsed["page_end"]) == (start, end)
    slug = slugify_section(title)
    assert parsed["section_slug"] == (None if slug == "-" else slug)
    parsed["section_title"] = parsed.pop("section_slug")
    assert format_source_locator(**parsed) == locator


# ---- config, counter, sentences -----------------------------------------------------------------


def test_config_version_tracks_values() -> None:
    assert DEFAULT.version == f"{CHUNKER_VERSION}+min500-max900-ov0.12"
    assert ChunkerConfig(max_tokens=800).version != DEFAULT.version
    for bad in [
        {"min_tokens": 0},
        {"min_tokens": 950},
        {"max_tokens": 10, "min_tokens": 5},
        {"overlap_ratio": 0.9},
    ]:
        with pytest.raises(ValueError):
            ChunkerConfig(**bad)


def test_wordpiece_counter_matches_tokenizer(counter: WordPieceCounter) -> None:
    tokenizer = load_fast_tokenizer()
    texts = ["Cancellations within 7 days are non-refundable.", "Day 1: Arrival", "", "a b a"]
    expected = [len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts]
    assert counter.count_many([*texts, texts[0]]) == [*expected, expected[0]]
    assert [counter.count(t) for t in texts] == expected
    assert expected[0] == 12


def test_sentence_bounds() -> None:
    text = "  Pay the deposit, e.g. by card. Dr. Smith signs! Then: lunch?\nNext line.  "
    pieces = [text[a:b] for a, b in sentence_bounds(text)]
    assert pieces == [
        "Pay the deposit, e.g. by card.",
        "Dr. Smith signs!",
        "Then: lunch?",
        "Next line.",
    ]
    assert sentence_bounds(" \n ") == []


# ---- chunking -----------------------------------------------------------------------------------


def test_structured_policy_entry_is_one_small_chunk(counter: WordPieceCounter) -> None:
    doc = ParsedDocument(
        (
            Span("Refund Window", SpanKind.HEADING, heading_level=1),
            Span("Cancellations within 7 calendar days of departure are non-refundable."),
        ),
        "structured",
    )
    [chunk] = chunk_document(doc, "docv_policy_refund_v5", counter, category="structured_policy")
    assert chunk.chunk_id == "docv_policy_refund_v5_000"
    assert chunk.source_locator == "docv:docv_policy_refund_v5#chunk:000|p:-|sec:Refund-Window"
    assert chunk.text == (
        "Refund Window\n\nCancellations within 7 calendar days of departure are non-refundable."
    )
    assert (chunk.section_title, chunk.page_range) == ("Refund Window", None)
    assert chunk.policy_likeness_hint is PolicyLikeness.HIGH
    assert chunk.token_count == counter.count(chunk.text)


def test_short_multi_section_document_is_one_chunk(counter: WordPieceCounter) -> None:
    rng = random.Random(3)
    spans: list[Span] = []
    for title in ["Intro", "Day 1: Arrival", "Day 2: Glacier"]:
        spans += _section(title, 2, rng, [4])
    doc = ParsedDocument(tuple(spans), "p")
    [chunk] = chunk_document(doc, "docv_t", counter)
    assert chunk.text == doc.text
    assert (chunk.section_title, chunk.page_start, chunk.page_end) == ("Intro", 4, 4)
    assert chunk.source_locator == "docv:docv_t#chunk:000|p:4-4|sec:Intro"


def test_empty_document_has_no_chunks(counter: WordPieceCounter) -> None:
    doc = ParsedDocument((Span("  "), Span("\n")), "p")
    assert chunk_document(doc, "docv_t", counter) == []
    with pytest.raises(ValueError):
        chunk_document(doc, "bad id", counter)


def test_multi_section_document(counter: WordPieceCounter) -> None:
    doc = _multi_section_doc()
    chunks = chunk_document(doc, "docv_t", counter)
    _check_invariants(doc, chunks, counter, DEFAULT)
    titles = [c.section_title for c in chunks]
    assert titles[0] == "Cancellations and Refunds" and titles[-1] == "Medical Clearance"
    assert [t for i, t in enumerate(titles) if i == 0 or titles[i - 1] != t] == [
        "Cancellations and Refunds",
        "Day 1: Arrival",
        "Packing",
        "Medical Clearance",
    ]
    headings = [s.text for s in doc.spans if s.kind is SpanKind.HEADING]
    for chunk in chunks:
        # every chunk opens with its own heading and holds no other section's heading
        assert [h for h in headings if f"{h}\n\n" in chunk.text] == [chunk.section_title]
    continued = 0
    for previous, chunk in itertools.pairwise(chunks):
        if previous.section_title != chunk.section_title:
            assert not _overlap_text(previous, chunk).strip()
            continue
        continued += 1
        overlap = counter.count(_overlap_text(previous, chunk))
        assert 0.10 * DEFAULT.max_tokens <= overlap <= 0.15 * DEFAULT.max_tokens
        # a chunk cut inside a section reaches min_tokens; the section's last one is no tiny tail
        assert previous.token_count >= DEFAULT.min_tokens
        assert chunk.token_count >= 0.35 * DEFAULT.max_tokens
        # cuts inside a section fall on paragraph ends here (every paragraph is short)
        assert any(previous.text.endswith(s.text) for s in doc.spans)
    assert continued >= 4
    packing = [c for c in chunks if c.section_title == "Packing"]
    assert len(packing) == 1 and packing[0].token_count < DEFAULT.min_tokens


def test_pages_are_tracked(counter: WordPieceCounter) -> None:
    doc = _multi_section_doc()
    chunks = chunk_document(doc, "docv_t", counter)
    assert chunks[0].page_start == 1 and chunks[-1].page_end == doc.page_count
    for previous, chunk in itertools.pairwise(chunks):
        assert previous.page_start <= chunk.page_start
    for chunk in chunks:
        assert chunk.page_start is not None and chunk.page_end is not None
        assert chunk.page_start <= chunk.page_end
        assert chunk.page_range == f"{chunk.page_start}-{chunk.page_end}"
        inside = [
            s.page for s in doc.spans if s.kind is SpanKind.PARAGRAPH and s.text in chunk.text
        ]
        assert inside and min(inside) >= chunk.page_start and max(inside) == chunk.page_end


def test_short_sections_are_merged_until_min(counter: WordPieceCounter) -> None:
    rng = random.Random(11)
    spans: list[Span] = []
    for n in range(30):
        spans += _section(f"Rule {n}", 1, rng, [1])
    doc = ParsedDocument(tuple(spans), "p")
    chunks = chunk_document(doc, "docv_t", counter)
    _check_invariants(doc, chunks, counter, DEFAULT)
    assert 1 < len(chunks) < 10
    assert chunks[0].section_title == "Rule 0" and "\n\nRule 1\n\n" in chunks[0].text
    for chunk in chunks[:-1]:
        assert chunk.token_count >= DEFAULT.min_tokens


def test_tiny_final_section_joins_previous_chunk(counter: WordPieceCounter) -> None:
    rng = random.Random(5)
    spans = [
        *_section("Itinerary", 20, rng, [1]),
        Span("Contact", SpanKind.HEADING, 9),
        Span("Write to us.", page=9),
    ]
    doc = ParsedDocument(tuple(spans), "p")
    chunks = chunk_document(doc, "docv_t", counter)
    _check_invariants(doc, chunks, counter, DEFAULT)
    assert all(c.section_title == "Itinerary" for c in chunks)
    assert chunks[-1].text.endswith("\n\nContact\n\nWrite to us.") and chunks[-1].page_end == 9


def test_section_titles_without_heading_spans(counter: WordPieceCounter) -> None:
    rng = random.Random(9)
    spans = [Span(_paragraph(rng, 4), section_title="Deposits") for _ in range(12)]
    spans += [Span(_paragraph(rng, 4), section_title="Refund Window") for _ in range(12)]
    doc = ParsedDocument(tuple(spans), "p")
    chunks = chunk_document(doc, "docv_t", counter)
    _check_invariants(doc, chunks, counter, DEFAULT)
    titles = [c.section_title for c in chunks]
    assert titles == sorted(titles) and set(titles) == {"Deposits", "Refund Window"}
    for chunk in chunks:
        assert chunk.text.startswith(f"{chunk.section_title}\n\n")
        assert chunk.source_locator.endswith(f"|sec:{slugify_section(chunk.section_title)}")


def test_long_spans_are_split_at_sentences_then_words(counter: WordPieceCounter) -> None:
    rng = random.Random(2)
    one_sentence = " ".join(rng.choice(VOCAB) for _ in range(1500)) + "."
    doc = ParsedDocument(
        (
            Span("Terms", SpanKind.HEADING),
            Span(_paragraph(rng, 120)),
            Span(one_sentence),
            Span("-" * 2500),
        ),
        "p",
    )
    chunks = chunk_document(doc, "docv_t", counter)
    for i, chunk in enumerate(chunks):
        assert chunk.token_count == counter.count(chunk.text) <= DEFAULT.max_tokens
        assert chunk.chunk_id == f"docv_t_{i:03d}" and chunk.text.startswith("Terms\n\n")
    assert _covered(doc.spans[1].text, [c.text for c in chunks])
    assert _covered(one_sentence, [c.text for c in chunks])
    assert sum(c.text.count("-") for c in chunks) >= 2500


def test_config_is_respected(counter: WordPieceCounter) -> None:
    doc = _multi_section_doc()
    config = ChunkerConfig(min_tokens=200, max_tokens=400, overlap_ratio=0.12)
    small = chunk_document(doc, "docv_t", counter, config)
    _check_invariants(doc, small, counter, config)
    assert len(small) > len(chunk_document(doc, "docv_t", counter)) + 5


def test_twenty_thousand_words_are_chunked(counter: WordPieceCounter) -> None:
    rng, pages = random.Random(1), [1]
    spans: list[Span] = []
    for n in range(80):
        spans += _section(f"Part {n}", rng.randint(2, 14), rng, pages)
    doc = ParsedDocument(tuple(spans), "p")
    assert sum(len(s.text.split()) for s in spans) > 20_000
    first = chunk_document(doc, "docv_t", WordPieceCounter(load_fast_tokenizer()))
    assert first == chunk_document(doc, "docv_t", counter)
    assert max(c.token_count for c in first) <= DEFAULT.max_tokens


# ---- property tests -----------------------------------------------------------------------------

_WORDS = st.sampled_from([*VOCAB, "e.g.", "Dr.", "(see", "below)", "x" * 30, "“quoted”", "3.5km"])


@st.composite
def _documents(draw: st.DrawFn) -> ParsedDocument:
    with_pages = draw(st.booleans())
    page = 1
    spans: list[Span] = []
    for _ in range(draw(st.integers(1, 25))):
        page += draw(st.integers(0, 1))
        if draw(st.integers(0, 5)) == 0:
            title = " ".join(draw(st.lists(_WORDS, min_size=1, max_size=12)))
            spans.append(Span(title, SpanKind.HEADING, page if with_pages else None))
            continue
        sentences = draw(
            st.lists(st.lists(_WORDS, min_size=1, max_size=30), min_size=1, max_size=8)
        )
        ends = draw(
            st.lists(
                st.sampled_from([". ", "! ", "? ", "\n", " "]),
                min_size=len(sentences),
                max_size=len(sentences),
            )
        )
        text = "".join(
            " ".join(words).capitalize() + end for words, end in zip(sentences, ends, strict=True)
        )
        kind = draw(st.sampled_from([SpanKind.PARAGRAPH, SpanKind.LIST_ITEM, SpanKind.TABLE]))
        section = draw(st.sampled_from([None, None, "Deposits", "Refund Window"]))
        spans.append(Span(text, kind, page if with_pages else None, section))
    return ParsedDocument(tuple(spans), "p", page if with_pages else None)


_CONFIGS = st.builds(
    lambda top, low: ChunkerConfig(min_tokens=max(1, top * low // 100), max_tokens=top),
    st.integers(40, 300),
    st.integers(20, 80),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_documents(), config=_CONFIGS)
def test_chunking_properties(doc: ParsedDocument, config: ChunkerConfig) -> None:
    counter = WordPieceCounter(load_fast_tokenizer())
    chunks = chunk_document(doc, "docv_t", counter, config)
    again = chunk_document(doc, "docv_t", WordPieceCounter(load_fast_tokenizer()), config)
    assert chunks == again
    assert [(c.chunk_id, c.text, c.source_locator) for c in chunks] == [
        (c.chunk_id, c.text, c.source_locator) for c in again
    ]
    _check_invariants(doc, chunks, counter, config)
    whole = "\n\n".join(s.text.strip() for s in doc.spans if s.text.strip())
    untitled = all(s.section_title is None for s in doc.spans)
    if untitled and counter.count(whole) <= config.max_tokens:
        assert len(chunks) == 1 and chunks[0].text == whole


class _SeparatorHeavyCounter:
    """Not additive: words count 1, each blank-line separator 3 more, so joins cost tokens."""

    def count(self, text: str) -> int:
        return len(text.split()) + 3 * text.count("\n\n")


def test_non_additive_counter_still_bounds_chunks() -> None:
    doc = _multi_section_doc()
    config = ChunkerConfig(min_tokens=150, max_tokens=300)
    counter = _SeparatorHeavyCounter()
    chunks = chunk_document(doc, "docv_t", counter, config)
    assert chunks == chunk_document(doc, "docv_t", counter, config)
    assert any(c.token_count > len(c.text.split()) for c in chunks)
    for chunk in chunks:
        assert chunk.token_count == counter.count(chunk.text) <= config.max_tokens
    for span in doc.spans:
        assert _covered(span.text, [c.text for c in chunks])


# ---- policy hint --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Cancellations within 7 calendar days of departure are non-refundable.",
        "A deposit of 25% is required at booking.",
        "Participants must be at least 12 years old.",
        "Guests with heart conditions need physician clearance, and must bring it.",
        "You agree to release the operator from liability for ordinary negligence.",
        "Park fees are not included.",
        "Helmets must be worn at all times.",
    ],
)
def test_policy_hint_high(text: str) -> None:
    assert policy_likeness_hint(text) is PolicyLikeness.HIGH


@pytest.mark.parametrize(
    "text",
    [
        "Read our booking terms before you travel.",
        "Refunds are handled by our friendly office team.",
        "Weather in the valley is changeable.",
    ],
)
def test_policy_hint_medium(text: str) -> None:
    assert policy_likeness_hint(text) is PolicyLikeness.MEDIUM


def test_policy_hint_low_and_category_nudge() -> None:
    text = "We hike through the valley and enjoy lunch by the lake."
    assert policy_likeness_hint(text) is PolicyLikeness.LOW
    assert policy_likeness_hint(text, "marketing") is PolicyLikeness.LOW
    for category in ["structured_policy", "terms_policy", "waiver_release"]:
        assert policy_likeness_hint(text, category) is PolicyLikeness.MEDIUM
    high = "Deposits are non-refundable."
    assert policy_likeness_hint(high, "marketing") is PolicyLikeness.HIGH
