#!/usr/bin/env bash
# Makes sure what the tests and CI need is installed and listening on loopback (the demo needs less:
# scripts/demo-tools.sh):
# git, kubectl and helm (pinned), age, sshd, bubblewrap, chromium, promtool, nats-server with JetStream on 4222,
# PostgreSQL on 5432. Installs through apt-get when missing; starts what is not running.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

command -v git >/dev/null || apt_install git
command -v openssl >/dev/null || apt_install openssl
# age: the tests check SOPS output with the real age command line.
command -v age >/dev/null || apt_install age
# zsh and fish: the tests check the generated shell completion scripts with both shells.
command -v zsh >/dev/null || apt_install zsh
command -v fish >/dev/null || apt_install fish
# sshd: the tests start their own OpenSSH server (git over SSH) on a port of their own.
[ -x /usr/sbin/sshd ] || apt_install openssh-server openssh-client
# bubblewrap: kubectl kustomize runs in a bwrap box (no network, only the build's folders); the tests check it.
command -v bwrap >/dev/null || apt_install bubblewrap
# chromium: the console's test drives Debian's Chromium headless through playwright-core.
[ -x /usr/bin/chromium ] || apt_install chromium
# kubectl and helm: validation builds every tree with kubectl kustomize, the chart tests render and lint
# the chart with helm. Both come pinned and checksum-verified from scripts/install-kube-tools.sh (the
# images use the same), into /usr/local/bin ahead of any kubectl the machine has of its own.
KUBECTL_PINNED=v1.33.9
if [ "$(/usr/local/bin/kubectl version --client 2>/dev/null | sed -n 's/^Client Version: //p')" != "$KUBECTL_PINNED" ] || [ ! -x /usr/local/bin/helm ]; then
  command -v unzip >/dev/null || apt_install unzip
  as_root bash scripts/install-kube-tools.sh /usr/local/bin
fi

# promtool: the chart tests check the PrometheusRule with it; only the binary, into .tools/bin (no daemon).
command -v promtool >/dev/null || bash scripts/install-promtool.sh

NATS_PORT=${NATS_PORT:-4222}
if ! port_open "$NATS_PORT"; then
  ensure_nats_server_binary
  NATS_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)
  NATS_STORE=${NATS_STORE:-/var/lib/nats-server}
  mkdir -p "$NATS_STORE" 2>/dev/null || NATS_STORE=$(mktemp -d)
  echo "starting nats-server with JetStream on 127.0.0.1:$NATS_PORT (store $NATS_STORE)"
  nohup "$NATS_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$NATS_STORE" >/tmp/nats-server.log 2>&1 &
  for _ in $(seq 1 50); do port_open "$NATS_PORT" && break; sleep 0.2; done
  port_open "$NATS_PORT" || { echo "nats-server did not start" >&2; exit 1; }
fi

ensure_postgres
