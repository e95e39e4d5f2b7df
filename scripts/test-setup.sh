#!/usr/bin/env bash
# npm test's pretest: everything the suite needs, on a fresh clone as on a working checkout. The tools
# and services (scripts/ensure-services.sh), then the packages when there are none yet (npm ci on the
# pinned Node, whose prepare step builds) or else the incremental build (seconds when nothing changed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
if [ ! -x node_modules/.bin/jest ]; then
  bash scripts/npm-ci.sh --loglevel=error
else
  npm run build --silent
fi
