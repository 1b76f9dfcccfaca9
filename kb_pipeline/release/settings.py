"""Where a release evaluation's golden set and `as_of` date come from: the run, then the environment.

Nothing here is a demo default: a run that names neither (run config `golden_path` / `as_of`, or
`KB_GOLDEN_PATH` / `KB_EVAL_AS_OF` in the code location's environment) fails with a message that
says what to set. The held-out golden files of `release_generalisation` come the same way: run
config `golden`, else `KB_RELEASE_CV_GOLDEN` (comma-separated `PATH@YYYY-MM-DD`). The release
sensor writes them into the run config it requests, so a run can be repeated from its own config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from dagster import Config, Failure

from kb_eval.cross_validation import parse_golden_spec
from kb_pipeline.instance import REPO_ROOT

GOLDEN_ENV = "KB_GOLDEN_PATH"
AS_OF_ENV = "KB_EVAL_AS_OF"
CV_GOLDEN_ENV = "KB_RELEASE_CV_GOLDEN"


class EvaluationConfig(Config):
    """Run config of `release_evaluation`; an empty field falls back to its environment variable."""

    golden_path: str = ""
    as_of: str = ""


@dataclass(frozen=True)
class EvaluationSettings:
    golden_path: Path
    as_of: date


def resolve_settings(
    config: EvaluationConfig, environ: Mapping[str, str] | None = None
) -> EvaluationSettings:
    """The golden set (relative paths from the project root) and date of one evaluation run."""
    environ = os.environ if environ is None else environ
    golden = config.golden_path or environ.get(GOLDEN_ENV, "")
    as_of = config.as_of or environ.get(AS_OF_ENV, "")
    if not golden:
        raise Failure(description=f"no golden set: set run config `golden_path` or {GOLDEN_ENV}")
    if not as_of:
        raise Failure(description=f"no evaluation date: set run config `as_of` or {AS_OF_ENV}")
    try:
        day = date.fromisoformat(as_of)
    except ValueError as error:
        raise Failure(description=f"as_of {as_of!r} is not an ISO date (YYYY-MM-DD)") from error
    path = Path(golden)
    path = path if path.is_absolute() else REPO_ROOT / path
    if not path.is_file():
        raise Failure(description=f"golden set {path} not found (golden_path / {GOLDEN_ENV})")
    return EvaluationSettings(path, day)


def sensor_run_config(today: date, environ: Mapping[str, str] | None = None) -> dict:
    """The evaluation config a sensor-started release run carries: the environment's golden set
    and held-out golden files (`KB_RELEASE_CV_GOLDEN`), and its `as_of` (else the day the sensor
    requested the run, recorded in the run config)."""
    environ = os.environ if environ is None else environ
    config = {
        "golden_path": environ.get(GOLDEN_ENV, ""),
        "as_of": environ.get(AS_OF_ENV, "") or today.isoformat(),
    }
    held_out = {"golden": environ.get(CV_GOLDEN_ENV, ""), "as_of": config["as_of"]}
    return {
        "ops": {
            "release_evaluation": {"config": config},
            "release_generalisation": {"config": held_out},
        }
    }


class GeneralisationConfig(Config):
    """Run config of `release_generalisation`: comma-separated `PATH@YYYY-MM-DD` golden files
    (empty: `KB_RELEASE_CV_GOLDEN`); `as_of` dates a file given without `@` (empty: KB_EVAL_AS_OF)."""

    golden: str = ""
    as_of: str = ""


def resolve_cv_specs(
    config: GeneralisationConfig, environ: Mapping[str, str] | None = None
) -> list[tuple[Path, date]]:
    """The golden files (relative paths from the project root) and dates of the held-out run."""
    environ = os.environ if environ is None else environ
    listed = config.golden or environ.get(CV_GOLDEN_ENV, "")
    entries = [entry.strip() for entry in listed.split(",") if entry.strip()]
    if not entries:
        raise Failure(
            description="no golden files for the leave-one-operator-out evaluation: set run "
            f"config `golden` or {CV_GOLDEN_ENV} (comma-separated PATH@YYYY-MM-DD)"
        )
    default = config.as_of or environ.get(AS_OF_ENV, "")
    try:
        default_day = date.fromisoformat(default) if default else None
    except ValueError as error:
        raise Failure(description=f"as_of {default!r} is not an ISO date (YYYY-MM-DD)") from error
    specs = []
    for entry in entries:
        if "@" not in entry and default_day is None:
            raise Failure(
                description=f"{entry}: no date; write PATH@YYYY-MM-DD or set `as_of` / {AS_OF_ENV}"
            )
        try:
            path, as_of = parse_golden_spec(entry, default_day or date.min)
        except ValueError as error:
            raise Failure(description=str(error)) from error
        resolved = path if path.is_absolute() else REPO_ROOT / path
        if not resolved.is_file():
            raise Failure(description=f"golden file {resolved} not found ({CV_GOLDEN_ENV})")
        specs.append((resolved, as_of))
    return specs
