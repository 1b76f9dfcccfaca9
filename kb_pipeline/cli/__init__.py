"""The `kb` command line: ingest, ask, eval, eval-beir, eval-drafts and ui."""

from kb_pipeline.cli.app import app

__all__ = ["app"]
