"""A tuned setting chosen per fold (`kb eval --cv tenant --nested`, kb_eval/nested_choice.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from kb_eval.cross_validation import CaseSet, HeldOut, clone_retriever, cross_validate
from kb_eval.golden import load_golden
from kb_eval.nested_choice import choose_per_fold, nested_cross_validation, parse_nested

GOLDEN = Path("data/golden/golden.jsonl")


def _held(correct: int, wrong: int, unsafe: int = 0) -> HeldOut:
    """A held-out run of `correct + wrong + unsafe` cases (unsafe ones are also wrong)."""
    details = [{"outcome_correct": True, "unsafe_pass": False}] * correct
    details += [{"outcome_correct": False, "unsafe_pass": False}] * wrong
    details += [{"outcome_correct": False, "unsafe_pass": True}] * unsafe
    return HeldOut([], list(details), {})


def test_the_value_is_chosen_on_the_other_operators_only():
    runs = {
        0.0: {"a": _held(5, 5), "b": _held(5, 5), "c": _held(5, 5)},
        # Better everywhere but on c, where it is much better: c's fold cannot see that.
        1.0: {"a": _held(6, 4), "b": _held(6, 4), "c": _held(9, 1)},
        2.0: {"a": _held(9, 1), "b": _held(4, 6), "c": _held(4, 6)},
    }
    chosen = choose_per_fold(runs)
    # a's fold sees b and c: 1.0 gives 15, 2.0 gives 8, 0.0 gives 10.
    assert chosen["a"] == 1.0
    # c's fold sees a and b: 1.0 gives 12, 2.0 gives 13.
    assert chosen["c"] == 2.0
    assert chosen["b"] == 1.0


def test_a_value_with_more_unsafe_passes_than_the_reference_is_never_chosen():
    runs = {
        0.0: {"a": _held(5, 5), "b": _held(5, 5), "c": _held(5, 5)},
        1.0: {"a": _held(9, 0, unsafe=1), "b": _held(9, 1), "c": _held(9, 1)},
    }
    chosen = choose_per_fold(runs)
    # Folds that see `a` see its unsafe pass and keep the reference.
    assert chosen["b"] == 0.0 and chosen["c"] == 0.0
    assert chosen["a"] == 1.0


def test_ties_go_to_the_value_listed_first():
    same = {"a": _held(3, 3), "b": _held(3, 3)}
    assert choose_per_fold({0.5: same, 0.0: same}) == {"a": 0.5, "b": 0.5}
    assert choose_per_fold({0.0: same, 0.5: same}) == {"a": 0.0, "b": 0.0}


def test_the_setting_must_be_a_numeric_retrieval_field_with_two_values():
    assert parse_nested("typed_answer_logit=0,0.5,1") == ("typed_answer_logit", (0.0, 0.5, 1.0))
    for bad, message in [
        ("typed_answer_logit", "FIELD=V1"),
        ("typed_answer_logit=", "FIELD=V1"),
        ("no_such_field=0,1", "not a numeric"),
        ("rerank_enabled=0,1", "not a numeric"),
        ("typed_answer_logit=0,high", "numbers"),
        ("typed_answer_logit=1", "two different"),
        ("typed_answer_logit=1,1", "two different"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_nested(bad)


def test_the_cli_refuses_nested_without_cv(kb_cli):
    result = kb_cli("eval", str(GOLDEN), "--nested", "typed_answer_logit=0,1")
    assert result.exit_code == 2
    assert "--nested goes with --cv tenant" in result.output
    result = kb_cli("eval", str(GOLDEN), "--cv", "tenant", "--nested", "nope=0,1")
    assert result.exit_code == 2
    assert "not a numeric RetrievalConfig field" in result.output


def test_nested_figures_are_the_chosen_runs_figures(retriever):
    cases = load_golden(GOLDEN)
    subset = [c for c in cases if c.tenant_id == "alpine-treks"][:5]
    subset += [c for c in cases if c.tenant_id == "coastal-kayak"][:5]
    sets = [CaseSet(GOLDEN, date(2026, 11, 15), tuple(subset))]
    report = nested_cross_validation(retriever, sets, "typed_answer_logit", (0.0, 1.0))
    nested = report["nested"]
    assert nested["field"] == "typed_answer_logit" and nested["reference"] == 0.0
    assert set(nested["chosen"]) == {"alpine-treks", "coastal-kayak"}
    assert set(nested["by_value"]) == {"0.0", "1.0"}
    assert report["pooled"]["cases"] == 10
    for tenant, value in nested["chosen"].items():
        config = retriever.config.model_copy(update={"typed_answer_logit": value})
        plain = cross_validate(clone_retriever(retriever, config), sets)
        mine = report["per_operator"][tenant]
        theirs = plain["per_operator"][tenant]
        assert mine["outcome_accuracy"] == theirs["outcome_accuracy"]
        assert mine["unsafe_passes"] == theirs["unsafe_passes"]
        assert mine["recall_at_10"] == pytest.approx(theirs["recall_at_10"])
