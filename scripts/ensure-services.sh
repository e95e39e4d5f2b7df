#!/usr/bin/env bash
# Makes sure what the tests and the demo need is installed and listening on loopback:
# git, kubectl and helm (pinned), age, sshd, nats-server with JetStream on 4222,
# PostgreSQL on 5432. Installs through apt-get when missing; starts what is not running.
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq >/dev/null
  # debconf's "delaying package configuration" notes are noise on machines without apt-utils; real errors still show.
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null 2> >(grep -v '^debconf: ' >&2)
}

command -v git >/dev/null || apt_install git
command -v openssl >/dev/null || apt_install openssl
# age: the tests check SOPS output with the real age command line.
command -v age >/dev/null || apt_install age
# zsh and fish: the tests check the generated shell completion scripts with both shells.
command -v zsh >/dev/null || apt_install zsh
command -v fish >/dev/null || apt_install fish
# sshd: the tests start their own OpenSSH server (git over SSH) on a port of their own.
[ -x /usr/sbin/sshd ] || apt_install openssh-server openssh-client
# kubectl and helm: validation builds every tree with kubectl kustomize, the chart tests render and lint
# the chart with helm. Both come pinned and checksum-verified from scripts/install-kube-tools.sh (the
# images use the same), into /usr/local/bin ahead of any kubectl the machine has of its own.
KUBECTL_PINNED=v1.33.9
if [ "$(/usr/local/bin/kubectl version --client 2>/dev/null | sed -n 's/^Client Version: //p')" != "$KUBECTL_PINNED" ] || [ ! -x /usr/local/bin/helm ]; then
  command -v unzip >/dev/null || apt_install unzip
  as_root bash scripts/install-kube-tools.sh /usr/local/bin
fi

NATS_PORT=${NATS_PORT:-4222}
if ! port_open "$NATS_PORT"; then
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
  NATS_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)
  NATS_STORE=${NATS_STORE:-/var/lib/nats-server}
  mkdir -p "$NATS_STORE" 2>/dev/null || NATS_STORE=$(mktemp -d)
  echo "starting nats-server with JetStream on 127.0.0.1:$NATS_PORT (store $NATS_STORE)"
  nohup "$NATS_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$NATS_STORE" >/tmp/nats-server.log 2>&1 &
  for _ in $(seq 1 50); do port_open "$NATS_PORT" && break; sleep 0.2; done
  port_open "$NATS_PORT" || { echo "nats-server did not start" >&2; exit 1; }
fi

if ! port_open 5432; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then apt_install postgresql; fi
  echo "starting PostgreSQL on 127.0.0.1:5432"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 1 50); do port_open 5432 && break; sleep 0.2; done
  port_open 5432 || { echo "PostgreSQL did not start" >&2; exit 1; }
fi
