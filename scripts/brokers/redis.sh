#!/usr/bin/env bash
# Local Redis for development and integration tests.
#
# Usage: scripts/brokers/redis.sh start|stop|status
#
# Installs redis-server via apt when it is missing, then runs one instance
# bound to 127.0.0.1:6379 (REDIS_PORT to change it) with persistence disabled.
# Runtime files (pid, log) live in <repo>/.brokers/redis (redis-<port> for
# another port), which is git-ignored. `stop` stops only the server this
# script started from there; any other Redis on the port is left alone.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
HOST=127.0.0.1
PORT="${REDIS_PORT:-6379}"
D="$ROOT/.brokers/redis"
if [ "$PORT" != 6379 ]; then D="$D-$PORT"; fi
PIDFILE="$D/redis.pid"
START_TIMEOUT_S="${REDIS_START_TIMEOUT_S:-20}"
STOP_TIMEOUT_S="${REDIS_STOP_TIMEOUT_S:-20}"
BROKER=redis
# shellcheck source=scripts/brokers/lib.sh
source "$SCRIPT_DIR/lib.sh"

ensure_installed() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    apt_install redis-server
  fi
}

ping_ok() {
  command -v redis-cli >/dev/null 2>&1 || return 1
  [ "$(redis-cli -h "$HOST" -p "$PORT" ping 2>/dev/null || true)" = "PONG" ]
}

start() {
  if ping_ok; then
    log "already running on $HOST:$PORT, $(owner) ($(elapsed))"
    return 0
  fi
  ensure_installed
  mkdir -p "$D"
  redis-server --daemonize yes --bind "$HOST" --port "$PORT" \
    --save "" --appendonly no \
    --dir "$D" --pidfile "$PIDFILE" --logfile "$D/redis.log" 9>&-
  if ! wait_until ping_ok; then
    log "did not answer PING within ${START_TIMEOUT_S}s; last log lines:"
    tail -n 20 "$D/redis.log" 2>/dev/null || true
    exit 1
  fi
  log "started on $HOST:$PORT, $(redis-server --version | sed -n "s/.*v=\([^ ]*\).*/\1/p") ($(elapsed))"
}

# Redis renames its process "redis-server <host>:<port>" and runs in its --dir: a server started from
# this checkout's $D is ours; one started from another checkout or by the system is not.
is_ours() {
  [[ "$(cmdline_of "$1")" == "redis-server $HOST:$PORT"* ]] && [ "$(readlink "/proc/$1/cwd")" = "$D" ]
}

our_pid() { started_pid "$PIDFILE"; }

is_up() { ping_ok; }

broker_main "$@"
