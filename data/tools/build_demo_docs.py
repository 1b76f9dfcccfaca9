"""Build the demo tenants' document files from the hand-written sources.

Usage: .venv/bin/python data/tools/build_demo_docs.py [--check]

Writes every file named in data/tenants/<tenant>/kb.yaml (except structured `entries`,
which live in the manifest itself). Output is deterministic: fixed metadata dates, fixed
zip timestamps, seeded scan noise, so a rebuild gives the same bytes. With --check the
files are built into a temporary folder and compared with the committed ones.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

import renderers
from docspecs import SPECS, TENANTS, DocSpec, source_path
from mdlite import parse


def build_one(spec: DocSpec, out_dir: Path) -> Path:
    """Build one document into out_dir/<tenant>/ and return its path."""
    target_dir = out_dir / spec.tenant
    target_dir.mkdir(parents=True, exist_ok=True)
    out = target_dir / spec.output
    text = source_path(spec).read_text(encoding="utf-8")
    suffix = out.suffix
    if spec.source.endswith("_scan.txt"):
        renderers.render_scan_pdf(text, out, spec.org, spec.created)
    elif suffix == ".pdf":
        renderers.render_pdf(parse(text), out, spec.org, spec.subject, spec.created)
    elif suffix == ".docx":
        renderers.render_docx(parse(text), out, spec.org, spec.subject, spec.created)
    elif suffix == ".html":
        renderers.render_html(parse(text), out, spec.org, spec.subject)
    elif suffix == ".txt":
        renderers.render_txt(parse(text), out)
    elif suffix == ".md":
        renderers.render_md(text, out)
    else:
        raise ValueError(f"unsupported output type: {spec.output}")
    return out


def build_all(out_dir: Path) -> list[Path]:
    return [build_one(spec, out_dir) for spec in SPECS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare a rebuild with the files")
    args = parser.parse_args(argv)
    if not args.check:
        for path in build_all(TENANTS):
            print(f"wrote {path.relative_to(TENANTS.parent.parent)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        built = build_all(Path(tmp))
        differing = [
            path.relative_to(tmp)
            for path in built
            if not filecmp.cmp(path, TENANTS / path.relative_to(tmp), shallow=False)
        ]
    for rel in differing:
        print(f"differs from a rebuild: data/tenants/{rel}")
    print(f"{len(built) - len(differing)} of {len(built)} files identical to a rebuild")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
