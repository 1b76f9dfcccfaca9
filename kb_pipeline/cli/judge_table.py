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
    """One row per held-out operator, then the pooled reports (and the same for data/judge's
    own splits when they were held out too)."""
    typer.echo("leave one operator out (fit on every other pair, judge the held-out operator)")
    _print_folds(result["per_operator"], result["pooled"], result["operating_points"])
    if "own" in result:
        typer.echo("pairs without an operator, held out by their own split")
        own = result["own"]
        _print_folds(own["per_split"], own["pooled"], own["operating_points"])


def _print_folds(per_group: dict, pooled: dict, points: dict) -> None:
    typer.echo("| held out | pairs | accuracy | unsupported judged supported | support threshold |")
    typer.echo("| --- | --- | --- | --- | --- |")
    for name, report in per_group.items():
        typer.echo(
            f"| {name} | {report['n']} | {report['overall']:.3f} | "
            f"{report['unsupported_judged_supported']} | {report['support_threshold']:.3f} |"
        )
    print_report("pooled over the held-out folds", pooled)
    typer.echo("operating points (same folds; support threshold fitted for each target)")
    typer.echo("| point | accuracy | supported | contradicted | unsupported judged supported |")
    typer.echo("| --- | --- | --- | --- | --- |")
    for name, report in points.items():
        typer.echo(
            f"| {name} | {report['overall']:.3f} | {report['per_label'].get('supported', 0):.3f}"
            f" | {report['per_label'].get('contradicted', 0):.3f}"
            f" | {report['unsupported_judged_supported']}"
            f" ({report['unsupported_judged_supported_rate']:.3f}) |"
        )
