#!/usr/bin/env bash
# Makes sure what the tests and CI need is installed and listening on loopback (the demo needs less:
# scripts/demo-tools.sh): git, openssl, sshd, bubblewrap, nats-server with JetStream on 4222, PostgreSQL
# on 5432; and the programs the tests start by name, all in the checkout's .tools/bin (jest puts it first
# on PATH, jest.config.js): the pinned kubectl and helm, promtool, age, zsh, fish and Chromium. Installs
# through apt-get what the machine lacks, naming it; quick (no apt, no download) when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

command -v git >/dev/null || apt_install git
command -v openssl >/dev/null || apt_install openssl
# sshd: the tests start their own OpenSSH server (git over SSH) on a port of their own.
[ -x /usr/sbin/sshd ] || apt_install openssh-server openssh-client
# bubblewrap: kubectl kustomize runs in a bwrap box (no network, only the build's folders); the tests check it.
command -v bwrap >/dev/null || apt_install bubblewrap

TOOLS_BIN=$PWD/.tools/bin
mkdir -p "$TOOLS_BIN"

# Debian's programs the tests start, as PROGRAM:PACKAGE: age and age-keygen (the tests open SOPS output
# with the real age), zsh and fish (they parse the generated completion scripts), Chromium (the console's
# test drives it headless through playwright-core). Each is linked into .tools/bin, so a test run finds it
# whatever PATH it was started with; missing ones are installed with one apt-get call.
DEBIAN_PROGRAMS=(age:age age-keygen:age zsh:zsh fish:fish chromium:chromium)
missing_packages=()
for entry in "${DEBIAN_PROGRAMS[@]}"; do
  program=${entry%%:*}
  [ -x "$TOOLS_BIN/$program" ] || command -v "$program" >/dev/null || missing_packages+=("${entry#*:}")
done
if [ ${#missing_packages[@]} -gt 0 ]; then
  mapfile -t missing_packages < <(printf '%s\n' "${missing_packages[@]}" | sort -u)
  apt_install "${missing_packages[@]}"
fi
for entry in "${DEBIAN_PROGRAMS[@]}"; do
  program=${entry%%:*}
  [ -x "$TOOLS_BIN/$program" ] && continue
  # On PATH, else in the package's own file list: the program may be installed but off this PATH.
  found=$(command -v "$program" || dpkg -L "${entry#*:}" 2>/dev/null | grep -m1 "/bin/$program\$" || true)
  [ -n "$found" ] || { echo "$program: not found, not even in Debian's ${entry#*:} package" >&2 && exit 1; }
  ln -sfn "$found" "$TOOLS_BIN/$program"
done

# kubectl and helm: validation builds every tree with kubectl kustomize, the chart tests render and lint
# the chart with helm. Both come pinned and checksum-verified from scripts/install-kube-tools.sh (the
# images use the same), once per machine into the cache, then copied ahead of any kubectl the machine has.
KUBECTL_PINNED=v1.33.9
pinned_kubectl() { [ "$("$1/kubectl" version --client 2>/dev/null | sed -n 's/^Client Version: //p')" = "$KUBECTL_PINNED" ] && [ -x "$1/helm" ]; }
if ! pinned_kubectl "$TOOLS_BIN"; then
  kube_cache="$MACHINE_CACHE/kube-tools-$KUBECTL_PINNED"
  if ! pinned_kubectl "$kube_cache"; then
    command -v unzip >/dev/null || apt_install unzip
    echo "installing kubectl $KUBECTL_PINNED and helm into $kube_cache (checksum-verified)"
    bash scripts/install-kube-tools.sh "$kube_cache"
  fi
  install -m 0755 "$kube_cache/kubectl" "$kube_cache/helm" "$TOOLS_BIN/"
fi

# promtool: the chart tests check the PrometheusRule with it; only the binary, into .tools/bin (no daemon).
bash scripts/install-promtool.sh

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
