#!/usr/bin/env bash
# npm run demo: one real scaffold end to end on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build --silent
node scripts/demo.js
