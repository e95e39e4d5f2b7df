#!/usr/bin/env bash
# What `npm run demo` needs, and nothing the tests alone need (no helm, age or sshd): git and openssl,
# nats-server (the demo starts its own on a port of its own), PostgreSQL on 127.0.0.1:5432 (the demo
# uses a database of its own in it), and the pinned kubectl in the project's own .work/tools/bin (the
# generator builds every tree with it). System packages come from apt-get, and each is named as it is
# installed; kubectl never goes to a system folder.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

command -v git >/dev/null || apt_install git
command -v openssl >/dev/null || apt_install openssl
# bubblewrap: the box kubectl kustomize runs in (without it, a weaker one: docs/operations.md, "Tenant content").
command -v bwrap >/dev/null || apt_install bubblewrap
ensure_nats_server_binary
ensure_postgres

TOOLS=.work/tools/bin
KUBECTL_PINNED=v1.33.9
if [ "$("$TOOLS/kubectl" version --client 2>/dev/null | sed -n 's/^Client Version: //p')" != "$KUBECTL_PINNED" ]; then
  command -v unzip >/dev/null || apt_install unzip
  echo "installing kubectl $KUBECTL_PINNED into $TOOLS (checksum-verified)"
  bash scripts/install-kube-tools.sh "$TOOLS" kubectl
fi
