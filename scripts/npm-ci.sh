#!/usr/bin/env bash
# npm ci, with npm itself running on the pinned Node (package.json's `node` devDependency) rather than
# on the machine's: npm then checks the packages' engines against the Node that runs them, and says
# nothing about the machine's own (no EBADENGINE wall). Arguments go to npm ci. Its prepare step builds.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
node_bin=$(pinned_node_bin)
# npm looks for its global npmrc (a machine's CA file, registry or proxy) beside the Node it runs on: the
# machine's is kept.
global_npmrc=$(npm config get globalconfig)
PATH="$node_bin:$PATH" npm ci --globalconfig="$global_npmrc" --no-audit --no-fund "$@"
