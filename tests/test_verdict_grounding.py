"""Verdict grounding rules of issue 12 (fresh examples; no golden e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.verdict import decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()


def test_a_low_relevance_chunk_never_grounds_a_draft():
    question = build_query_plan("Can guests borrow a hair dryer at the lodge?")
    off_topic = cand("faq_3", Category.FAQ, 0.86)
    off_topic.relevance = CONFIG.score_floor / 2
    verdict = decide(question, [off_topic], CONFIG)
    assert verdict.outcome.value == "UNKNOWN"
    assert [r.value for r in verdict.reason_codes] == ["NO_EVIDENCE"]
    on_topic = cand("faq_4", Category.FAQ, 0.86)
    on_topic.relevance = CONFIG.score_floor
    assert decide(question, [off_topic, on_topic], CONFIG).outcome.value == "OK_TO_DRAFT"
