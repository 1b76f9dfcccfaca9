#!/usr/bin/env bash
# Set up, ingest the demo tenants into the embedded PostgreSQL, then start the Dagster UI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
# The demo's golden set and the date its labels hold at, for release evaluations started in the UI.
export KB_GOLDEN_PATH="${KB_GOLDEN_PATH:-data/golden/golden.jsonl}"
export KB_EVAL_AS_OF="${KB_EVAL_AS_OF:-2026-11-15}"
# Leave one operator out on every release: the demo's two operators (add devset/hidden files here).
export KB_RELEASE_CV_GOLDEN="${KB_RELEASE_CV_GOLDEN:-data/golden/golden.jsonl@2026-11-15}"
for tenant in data/tenants/*/; do
  .venv/bin/kb ingest "$tenant" || echo "note: $tenant has documents that did not reach indexed (see above)"
done
exec .venv/bin/kb ui --host "${KB_UI_HOST:-127.0.0.1}" --port "${KB_UI_PORT:-3000}"
