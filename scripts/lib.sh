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
