"""Text that says its content is not to be given to guests: what a guest's draft may not rest on.

The author's own statement, read in the chunk: its content may not be quoted to guests ("do not
quote it in guest emails") or does not apply to them ("these are our supplier terms; they do not
apply to guests", "unrelated to guests' booking conditions"). A document only marked internal or
not to be forwarded ("staff only", "do not forward to guests") is not enough: a fact it states,
such as a guide ratio, may still be told to a guest (data/golden expects that draft).
"""

from __future__ import annotations

import re
from functools import lru_cache

from kb_retrieval.text.analyzer import prepare

# In prepared (case-folded) text.
_NOT_FOR_GUESTS_RE = re.compile(
    r"\b(?:do not|don't|never|must not) (?:quote|cite)\b"
    r"|\b(?:do|does) not apply to (?:guests|customers|clients|participants)\b"
    r"|\bunrelated to (?:guests|customers|clients|participants)\b"
)


@lru_cache(maxsize=16384)
def not_for_guests(text: str) -> bool:
    """Whether `text` says its content is not to be quoted to guests or does not apply to them
    (cached per text: a chunk's text never changes)."""
    return bool(_NOT_FOR_GUESTS_RE.search(prepare(text)))
