#!/usr/bin/env bash
# npm run demo: one real scaffold end to end on this machine, phase by phase with durations.
#   npm run demo -- --keep   (or DEMO_KEEP=1) leaves the service running and prints how to talk to it.
set -euo pipefail
cd "$(dirname "$0")/.."

now_ms() { echo $(($(date +%s%N) / 1000000)); }
phase() {
  local name=$1
  shift
  local start
  start=$(now_ms)
  printf '==> %s\n' "$name"
  "$@"
  local ms=$(($(now_ms) - start))
  printf '    %s: %d.%01d s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100))
}

phase "git, nats-server, PostgreSQL and kubectl (installed where missing; scripts/demo-tools.sh says what)" bash scripts/demo-tools.sh
if [ ! -d node_modules ]; then
  # npm ci (on the pinned Node: scripts/npm-ci.sh); its prepare step compiles the TypeScript: no second build.
  phase "npm packages and the TypeScript build" bash scripts/npm-ci.sh --loglevel=error
else
  # Incremental: a no-op of a few seconds when nothing changed since the last build.
  phase "TypeScript build" npm run build --silent
fi
node scripts/demo.js "$@"
