"""A sensor that watches the tenant folders and ingests what changed, or what the running
pipeline versions have not built yet."""

import hashlib
import json
import os
from pathlib import Path

from dagster import RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from kb_pipeline.ingest.jobs import ingest_job
from kb_pipeline.ingest.partitions import doc_version_partitions, partition_key
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.ingestion.manifest import MANIFEST_NAME, ManifestError
from kb_retrieval.ingestion.pipeline import IngestionPipeline

TENANTS_DIR_ENV = "KB_TENANTS_DIR"
DEFAULT_TENANTS_DIR = "data/tenants"


def folder_fingerprint(folder: Path) -> str:
    """Changes whenever the manifest or any file in the folder changes (name, size, mtime)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def pipeline_key(pipeline: IngestionPipeline) -> str:
    """The build versions a folder was last checked against: a new parser, chunker (analyzer)
    or embedding model makes every folder due again, so an upgrade rebuilds what it serves."""
    versions = pipeline.versions
    return f"{versions.parser_version}|{versions.chunker_version}|{versions.embedding_model_id}"


def tenant_folders(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob(f"*/{MANIFEST_NAME}"))


@sensor(
    job=ingest_job,
    minimum_interval_seconds=30,
    description="Registers new document versions of the tenant folders and ingests them.",
)
def tenant_folder_sensor(
    context: SensorEvaluationContext, kb: KnowledgeBaseResource
) -> SensorResult | SkipReason:
    root = Path(os.environ.get(TENANTS_DIR_ENV, DEFAULT_TENANTS_DIR)).resolve()
    if not root.is_dir():
        return SkipReason(f"{root} does not exist (set {TENANTS_DIR_ENV})")
    seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    pipeline = kb.pipeline()
    existing = set(context.instance.get_dynamic_partitions(doc_version_partitions.name))
    new_keys: list[str] = []
    requests: list[RunRequest] = []
    versions = pipeline_key(pipeline)
    for folder in tenant_folders(root):
        digest = hashlib.sha256(f"{folder_fingerprint(folder)}|{versions}".encode())
        fingerprint = digest.hexdigest()
        if seen.get(str(folder)) == fingerprint:
            continue
        try:
            registration = pipeline.register(folder)
        except ManifestError as error:
            context.log.warning(str(error))
            seen[str(folder)] = fingerprint
            continue
        for problem in registration.problems:
            context.log.warning(f"{problem.reason.value}: {problem.message}")
        for version in registration.registered:
            key = partition_key(registration.tenant_id, version)
            if key not in existing:
                new_keys.append(key)
            if pipeline.build_state(registration.tenant_id, version).state != "indexed":
                requests.append(
                    RunRequest(
                        run_key=f"{key}@{fingerprint[:12]}",
                        partition_key=key,
                        tags={"source": "sensor", "tenant": registration.tenant_id},
                    )
                )
        seen[str(folder)] = fingerprint
    return SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[doc_version_partitions.build_add_request(new_keys)]
        if new_keys
        else [],
        cursor=json.dumps(seen, sort_keys=True),
    )
