"""Precise filters for the noise a new user would otherwise see on every `kb` command.

- Dagster marks `backfill_policy` (batched backfills, used on purpose by the ingest assets) as
  beta and warns at every import of the definitions: that one warning is filtered, nothing else.
- The model loader draws a "Loading weights" progress bar on every start: Hugging Face progress
  bars are off unless HF_HUB_DISABLE_PROGRESS_BARS is set by the user.
- platformdirs warns, when the embedded server is located, that a root shell has no
  XDG_RUNTIME_DIR (it falls back to /tmp, which is what the server needs anyway).
"""

from __future__ import annotations

import os
import warnings

BACKFILL_POLICY_BETA = r"Parameter `backfill_policy` of function `asset` is currently in beta"
NO_RUNTIME_DIR = r"XDG_RUNTIME_DIR is not set"


def silence_known_noise() -> None:
    """Install the filters (by message, so that `kb ask` need not import Dagster to do it)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.filterwarnings("ignore", message=BACKFILL_POLICY_BETA)
    warnings.filterwarnings("ignore", message=NO_RUNTIME_DIR)
