"""Hash and parse one copy of a document's bytes, so the bytes parsed are the bytes hashed."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from kb_retrieval.ingestion.manifest import bytes_hash
from kb_retrieval.models import IngestReason, ParsedDocument
from kb_retrieval.parsing import MAX_FILE_BYTES
from kb_retrieval.parsing.errors import ParseError


def read_bounded(path: Path) -> bytes:
    """The file's bytes; PARSE_TOO_LARGE before reading a file over the size limit."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ParseError.for_file(
                IngestReason.PARSE_TOO_LARGE, path, f"{size} bytes exceeds {MAX_FILE_BYTES}"
            )
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, f"cannot read file ({exc.strerror or exc})"
        ) from exc
    if len(data) > MAX_FILE_BYTES:
        raise ParseError.for_file(
            IngestReason.PARSE_TOO_LARGE, path, f"grew beyond {MAX_FILE_BYTES} bytes while read"
        )
    return data


def parse_private_copy(
    path: Path, expected_hash: str, parser: Callable[[Path], ParsedDocument]
) -> ParsedDocument:
    """Read the file once, check it against the registered hash, parse that copy.

    A file changed since it was
    registered fails with VERSION_CONTENT_CHANGED (the version id is immutable). Messages
    name the original path, not the copy.
    """
    data = read_bounded(path)
    digest = bytes_hash(data)
    if digest != expected_hash:
        raise ParseError.for_file(
            IngestReason.VERSION_CONTENT_CHANGED,
            path,
            f"file changed since it was registered ({digest[:19]}… instead of "
            f"{expected_hash[:19]}…); give the new content a new doc_version_id",
        )
    with tempfile.TemporaryDirectory(prefix="kb-parse-") as folder:
        copy = Path(folder) / path.name
        copy.write_bytes(data)
        try:
            return parser(copy)
        except ParseError as error:
            message = error.message.replace(str(copy.absolute()), str(path))
            raise ParseError(
                error.reason, message.replace(str(copy), str(path)), error.state
            ) from None
