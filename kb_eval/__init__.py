"""Evaluation of grounding: golden sets, metrics, BEIR datasets and reports.

kb_eval.calibration (pandas tables) is imported on its own to keep this package light.
"""

from kb_eval.beir.dataset import BeirDataset, BeirDocument, load_beir
from kb_eval.golden import GoldenCase, GoldenFormatError, golden_schema, load_golden
from kb_eval.metric_table import format_report
from kb_eval.metrics import (
    METRIC_NAMES,
    CaseResult,
    EvidenceRef,
    beir_metrics,
    case_details,
    compute_metrics,
    is_covered,
    normalise_quote,
)

__all__ = [
    "METRIC_NAMES",
    "BeirDataset",
    "BeirDocument",
    "CaseResult",
    "EvidenceRef",
    "GoldenCase",
    "GoldenFormatError",
    "beir_metrics",
    "case_details",
    "compute_metrics",
    "format_report",
    "golden_schema",
    "is_covered",
    "load_beir",
    "load_golden",
    "normalise_quote",
]
