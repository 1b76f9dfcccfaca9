#!/usr/bin/env bash
# Set up, ingest the demo tenants into the embedded PostgreSQL, then start the Dagster UI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
for tenant in data/tenants/*/; do
  .venv/bin/kb ingest "$tenant" || echo "note: $tenant has documents that did not reach indexed (see above)"
done
exec .venv/bin/kb ui --host "${KB_UI_HOST:-127.0.0.1}" --port "${KB_UI_PORT:-3000}"
