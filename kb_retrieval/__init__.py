"""Trust-first knowledge grounding: a plain library (no Dagster) with two flows.

Ingest (a tenant folder becomes a searchable, versioned index):
    ingestion/manifest.py   read and validate `kb.yaml`, register versions by content hash
    parsing/                 PDF, DOCX, HTML, text and structured entries in a guarded worker
    ingestion/chunking.py    token-bounded chunks with stable ids and source locators
    ingestion/chunk_plan.py  the chunker's plan: sections, units, packing with overlap
    ingestion/pipeline.py    register -> parse -> chunk -> embed -> publish, idempotent per build
    ingestion/embed_step.py  the embed step: window and sentence vectors, batched across versions
    ingestion/build_steps.py what the steps share: build reads/writes, reports, lock, `settled`
    embedding.py             MiniLM (and the fake-hash test double), windowed chunk embeddings
    embedding_onnx.py        optional ONNX Runtime query encoder (same weights, exported offline)

Ask (a guest email becomes an evidence pack with a verdict):
    query/                   the email read as a query plan: thread, variants, intents, trips
    retrieval/               candidates (vector + BM25, snapshot or SQL), scoring, selection,
                             conflicts, verdict and the evidence pack; the snapshot keeps its
                             exact vectors and rows in a memory-mapped spill file (spill.py)
    retrieval/snapshot.py    TenantSnapshot: built from the tenant's rows, scopes per date; its
                             legs are mixins in snapshot_vectors.py and snapshot_lexical.py
    service.py               one entry point: database, embedder, serving release, retriever

Shared: text/ (analyzer, sentences, quantities; the quantities' patterns and topics in
quantity_patterns.py and quantity_topics.py), models.py (enums, records), db/ (server,
connections, migrations), releases.py (release registry), freshness.py (staleness report).
"""
