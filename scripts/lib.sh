# Shell functions shared by scripts/ensure-services.sh (tests, CI) and scripts/demo-tools.sh (the demo).
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# apt-get update, waiting for another apt (a second CI run on the same machine) to let go of its lock.
apt_update() {
  for _ in $(seq 1 60); do
    as_root apt-get update -qq >/dev/null 2>&1 && return 0
    sleep 5
  done
  as_root apt-get update -qq >/dev/null
}
apt_install() {
  echo "installing with apt-get: $*"
  apt_update
  # debconf's "delaying package configuration" notes are noise on machines without apt-utils; real errors still show.
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$@" >/dev/null 2> >(grep -v '^debconf: ' >&2)
}
# PostgreSQL on 127.0.0.1:5432 (the machine's own cluster; installed from Debian when there is none).
ensure_postgres() {
  port_open 5432 && return 0
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then apt_install postgresql; fi
  echo "starting PostgreSQL on 127.0.0.1:5432"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 1 50); do port_open 5432 && break; sleep 0.2; done
  port_open 5432 || { echo "PostgreSQL did not start" >&2; return 1; }
}
ensure_nats_server_binary() {
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_install nats-server
}
# Downloads kept once per machine (each checkout, a fresh CI clone too, copies from here).
MACHINE_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/gitops-scaffolder"
# The folder of the pinned Node (package.json's `node` devDependency, the one every npm script runs on),
# fetched once per machine from the npm registry. npm itself runs on the Node that starts it and checks
# every package's `engines` against that one: run on the machine's Node it warns EBADENGINE for each
# package that needs a newer Node than the machine's, though none of them ever runs there.
pinned_node_bin() {
  local version arch dir work
  version=$(node -p 'require(require("path").resolve(process.argv[1])).devDependencies.node' \
    "$(dirname "${BASH_SOURCE[0]}")/../package.json") || return 1
  case $(uname -m) in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no Node build for $(uname -m)" >&2 && return 1 ;; esac
  dir="$MACHINE_CACHE/node-v$version-linux-$arch"
  if [ ! -x "$dir/bin/node" ]; then
    echo "fetching Node $version (node-linux-$arch from the npm registry) into $dir" >&2
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent "node-linux-$arch@$version" >/dev/null && tar xzf ./*.tgz package/bin/node)
    mkdir -p "$dir/bin"
    # Atomic, so a second run at the same time never starts a half-written binary.
    mv "$work/package/bin/node" "$dir/bin/node.$$" && mv -f "$dir/bin/node.$$" "$dir/bin/node"
    rm -rf "$work"
  fi
  echo "$dir/bin"
}
