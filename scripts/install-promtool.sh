#!/usr/bin/env bash
# promtool (the chart tests run `promtool check rules` on the PrometheusRule) without the Prometheus
# daemon: Debian's prometheus package is downloaded, not installed, and only its promtool binary is
# unpacked into the project's own .tools/bin. Nothing is started, nothing lands outside the checkout.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.tools/bin"
[ -x "$dest/promtool" ] && exit 0
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
# One download per machine: each checkout (a fresh CI clone) copies it from the user's cache.
cache=$MACHINE_CACHE
if [ ! -x "$cache/promtool" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  chmod 0777 "$work" # apt downloads as its own _apt user where it can
  # The package lists this machine has are enough unless they never named prometheus.
  (cd "$work" && apt-get download -qq prometheus 2>/dev/null) || { apt_update && (cd "$work" && apt-get download -qq prometheus); }
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  mkdir -p "$cache"
  # Atomic, so a second run at the same time never copies a half-written binary.
  install -m 0755 "$work/x/usr/bin/promtool" "$cache/promtool.$$" && mv -f "$cache/promtool.$$" "$cache/promtool"
fi
mkdir -p "$dest"
install -m 0755 "$cache/promtool" "$dest/promtool"
echo "promtool $("$dest/promtool" --version 2>&1 | sed -n '1s/^promtool, version //p') in $dest"
