"""Trip and product names from itinerary titles, shared by the query planner and the verdict."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

GENERIC_WORDS = {"departure", "itinerary", "trip", "tour", "day", "days", "the", "and"}
MONTHS = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}


@lru_cache(maxsize=64)
def known_trip_entities(titles: tuple[str, ...]) -> tuple[str, ...]:
    """`trip_entities` of a tenant's itinerary titles, cached (thousands of titles at scale)."""
    return tuple(trip_entities(titles))


def trip_entities(titles: Sequence[str]) -> list[str]:
    """Short trip/product names from itinerary titles ("Patagonia Trek — June 14" -> "Patagonia Trek")."""
    names: set[str] = set()
    for title in titles:
        for segment in re.split(r"\s[-–—:|(]\s?|[()]", title):
            words = [w.strip(":,") for w in segment.split() if not any(ch.isdigit() for ch in w)]
            words = [
                w
                for w in words
                if w.casefold()[:3] not in MONTHS and w.casefold() not in GENERIC_WORDS
            ]
            if words and len(" ".join(words)) >= 4:
                names.add(" ".join(words))
            if words and len(words[0]) >= 5 and words[0][0].isupper():
                names.add(words[0])
    return sorted(names)


def same_trip(title: str, other_title: str) -> bool:
    """Two itinerary titles name the same trip (different departures of it, say)."""
    return bool(set(trip_entities([title])) & set(trip_entities([other_title])))
