"""Plain-text tables of the claim judge's reports (`kb eval-judge`)."""

from __future__ import annotations

import typer

from kb_eval.judge.claim_judge import LABELS


def print_report(name: str, report: dict) -> None:
    """Accuracy, unsupported judged supported, per split and the per-label confusion."""
    typer.echo(f"{name}: {report['n']} pairs, accuracy {report['overall']:.3f}")
    typer.echo(
        f"unsupported judged supported: {report['unsupported_judged_supported']} "
        f"({report['unsupported_judged_supported_rate']:.3f})"
    )
    halves = ", ".join(f"{split} {value:.3f}" for split, value in report["per_split"].items())
    typer.echo(f"per split (by operator): {halves}")
    typer.echo("| label | accuracy | " + " | ".join(f"judged {x}" for x in LABELS) + " |")
    typer.echo("|" + " --- |" * (len(LABELS) + 2))
    for label, row in report["confusion"].items():
        cells = " | ".join(str(row[x]) for x in LABELS)
        typer.echo(f"| {label} | {report['per_label'][label]:.3f} | {cells} |")


def print_cv(result: dict) -> None:
    """One row per held-out operator, then the pooled reports."""
    typer.echo("leave one operator out (fit on every other pair, judge the held-out operator)")
    typer.echo(
        "| held-out operator | pairs | accuracy | unsupported judged supported | threshold |"
    )
    typer.echo("| --- | --- | --- | --- | --- |")
    for operator, report in result["per_operator"].items():
        typer.echo(
            f"| {operator} | {report['n']} | {report['overall']:.3f} | "
            f"{report['unsupported_judged_supported']} | {report['support_threshold']:.3f} |"
        )
    print_report("pooled over held-out operators", result["pooled"])
    typer.echo("operating points (same folds; support threshold fitted for each target)")
    typer.echo("| point | accuracy | supported | contradicted | unsupported judged supported |")
    typer.echo("| --- | --- | --- | --- | --- |")
    for name, report in result["operating_points"].items():
        typer.echo(
            f"| {name} | {report['overall']:.3f} | {report['per_label'].get('supported', 0):.3f}"
            f" | {report['per_label'].get('contradicted', 0):.3f}"
            f" | {report['unsupported_judged_supported']}"
            f" ({report['unsupported_judged_supported_rate']:.3f}) |"
        )
