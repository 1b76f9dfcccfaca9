"""The release gates live in one module; every consumer reads the same targets."""

from __future__ import annotations

import math

from kb_eval.gates import GATES, failed_gates, gate_label, gate_passes
from kb_eval.metric_table import format_report


def passing_metrics() -> dict[str, object]:
    return {name: gate.bound for name, gate in GATES.items()}


def test_every_gate_passes_at_its_bound_and_fails_past_it() -> None:
    assert failed_gates(passing_metrics()) == []
    worse = {">=": -0.01, "<=": 0.01, "==": 0.01}
    for name, gate in GATES.items():
        metrics = passing_metrics() | {name: gate.bound + worse[gate.op]}
        assert failed_gates(metrics) == [name]


def test_missing_nan_and_bool_values_fail() -> None:
    assert not gate_passes("recall_at_10", None)
    assert not gate_passes("recall_at_10", math.nan)
    assert not gate_passes("unsafe_pass_rate", False)
    assert "recall_at_10" in failed_gates({})


def test_the_cli_table_uses_the_same_labels() -> None:
    table = format_report({"recall_at_10": 0.9}, title="t")
    assert gate_label("recall_at_10") in table
    assert gate_label("not_a_gate") == ""
