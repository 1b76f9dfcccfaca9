"""Table cells and PNG plots of an evaluation for Dagster metadata (no pyplot state)."""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kb_eval.gates import GATES

PNG_METADATA = {"Software": None}


def cell(value: object, digits: int) -> str:
    """A table cell: floats rounded, NaN as n/a, pipes escaped."""
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value).replace("|", "/")


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasAgg(figure)
    figure.savefig(buffer, format="png", dpi=100, metadata=PNG_METADATA)
    return buffer.getvalue()


def reliability_png(table: pd.DataFrame, ece: float) -> bytes:
    """Reliability diagram: accuracy per confidence bin against the diagonal, counts as labels."""
    figure = Figure(figsize=(5, 4.2), layout="tight")
    axes = figure.add_subplot()
    filled = table[table["count"] > 0]
    centres = (filled["bin_lower"] + filled["bin_upper"]) / 2
    width = float(table["bin_upper"].iloc[0] - table["bin_lower"].iloc[0]) * 0.9
    bars = axes.bar(centres, filled["accuracy"], width=width, color="#4c78a8", label="accuracy")
    axes.bar_label(bars, labels=[str(int(n)) for n in filled["count"]], fontsize=7)
    axes.plot([0, 1], [0, 1], linestyle="--", color="#888888", label="perfect calibration")
    axes.set(xlim=(0, 1), ylim=(0, 1.05), xlabel="confidence_score", ylabel="share relevant")
    axes.set_title(f"Reliability of confidence_score (ECE {ece:.3f})")
    axes.legend(loc="upper left", fontsize=8)
    return _png(figure)


def confusion_png(frame: pd.DataFrame) -> bytes:
    """Heatmap of the outcome confusion matrix (rows expected, columns actual)."""
    figure = Figure(figsize=(6, 4.8), layout="tight")
    axes = figure.add_subplot()
    values = frame.to_numpy()
    axes.imshow(values, cmap="Blues")
    axes.set_xticks(
        range(len(frame.columns)), list(frame.columns), rotation=30, ha="right", fontsize=8
    )
    axes.set_yticks(range(len(frame.index)), list(frame.index), fontsize=8)
    axes.set(xlabel="actual outcome", ylabel="expected outcome", title="Outcome confusion matrix")
    peak = values.max() if values.size else 0
    for (row, column), count in pd.DataFrame(values).stack().items():
        colour = "white" if peak and count > peak / 2 else "black"
        axes.text(column, row, str(count), ha="center", va="center", color=colour)
    return _png(figure)


def recall_by_category_png(frame: pd.DataFrame) -> bytes:
    """Horizontal bars of recall@10 per category with the recall@10 gate as a line."""
    figure = Figure(figsize=(6, 1.2 + 0.45 * max(len(frame), 1)), layout="tight")
    axes = figure.add_subplot()
    labels = [f"{c} ({n})" for c, n in zip(frame["category"], frame["relevant_items"], strict=True)]
    axes.barh(labels, frame["recall_at_10"], color="#59a14f")
    gate = GATES["recall_at_10"]
    axes.axvline(gate.bound, linestyle="--", color="#e15759", label=f"target {gate.bound:g}")
    axes.set(xlim=(0, 1), xlabel="recall_at_10", title="Recall@10 by category")
    axes.invert_yaxis()
    axes.legend(loc="lower right", fontsize=8)
    return _png(figure)


def image_md(png: bytes, alt: str) -> str:
    """Markdown embedding the PNG as a data URI (rendered inline by the Dagster UI)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


def save_png(png: bytes, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    return path
