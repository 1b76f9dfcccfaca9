"""Issue 11 session 8: the service's warm-up freezes what it loaded out of the collector's scans."""

from __future__ import annotations

import gc

from kb_retrieval.heap import freeze_heap


class _Loaded:
    """A stand-in for something a warm-up loads (a tracked, collectable object)."""


def _tracked(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_freeze_heap_takes_live_objects_out_of_later_collections() -> None:
    loaded = _Loaded()
    assert _tracked(loaded)
    try:
        frozen = freeze_heap()
        assert frozen == gc.get_freeze_count() > 0
        assert not _tracked(loaded), "frozen objects are in no generation a collection scans"
        made_later = _Loaded()
        assert _tracked(made_later), "objects made after the freeze are collected as usual"
    finally:
        gc.unfreeze()
    assert _tracked(loaded)


def test_serving_warm_up_freezes_model_and_snapshots(db, minilm, real_pipeline, demo_index):
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever
    from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS
    from kb_retrieval.service import KnowledgeBase
    from kb_retrieval.serving.core import ServeSettings, ServingCore

    retriever = Retriever(db, minilm, real_pipeline.versions, RetrievalConfig())
    core = ServingCore(KnowledgeBase(db, real_pipeline, retriever), ServeSettings(workers=1))
    try:
        loaded = core.warm_up()
        assert core.ready and loaded
        assert gc.get_freeze_count() > 0
        assert not _tracked(core), "the warm-up's own objects are frozen"
        assert not _tracked(SNAPSHOTS), "the snapshot cache is frozen"
    finally:
        gc.unfreeze()
        core.close()
