"""The chunker's configuration (its version is part of every chunk id's build) and the token
counters it measures chunks with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

CHUNKER_VERSION = "chunker-v1"


@dataclass(frozen=True)
class ChunkerConfig:
    min_tokens: int = 500
    max_tokens: int = 900
    overlap_ratio: float = 0.12

    def __post_init__(self) -> None:
        if self.max_tokens < 20 or not 1 <= self.min_tokens <= self.max_tokens:
            raise ValueError(f"need 1 <= min_tokens <= max_tokens and max_tokens >= 20: {self}")
        if not 0.0 <= self.overlap_ratio <= 0.5:
            raise ValueError(f"overlap_ratio must be in [0, 0.5]: {self.overlap_ratio}")

    @property
    def version(self) -> str:
        """CHUNKER_VERSION plus the config values: a config change is a new chunker version."""
        return (
            f"{CHUNKER_VERSION}+min{self.min_tokens}-max{self.max_tokens}-ov{self.overlap_ratio:g}"
        )


class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


class WordPieceCounter:
    """Counts the embedding model's WordPiece tokens (no special tokens), with a bounded cache."""

    def __init__(self, tokenizer: Any, cache_size: int = 200_000) -> None:
        self._tokenizer = tokenizer
        self._cache: dict[str, int] = {}
        self._cache_size = cache_size

    def count(self, text: str) -> int:
        cached = self._cache.get(text)
        if cached is None:
            cached = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
            self._remember({text: cached})
        return cached

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many texts, encoding the uncached ones in one ``encode_batch`` call."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        found = {t: self._cache[t] for t in texts if t in self._cache}
        if missing:
            encodings = self._tokenizer.encode_batch(missing, add_special_tokens=False)
            fresh = {t: len(e.ids) for t, e in zip(missing, encodings, strict=True)}
            found.update(fresh)
            self._remember(fresh)
        return [found[t] for t in texts]

    def _remember(self, counts: dict[str, int]) -> None:
        if len(self._cache) + len(counts) > self._cache_size:
            self._cache.clear()
        self._cache.update(counts)


def count_all(counter: TokenCounter, texts: Sequence[str]) -> list[int]:
    many = getattr(counter, "count_many", None)
    return list(many(texts)) if callable(many) else [counter.count(t) for t in texts]
