#!/usr/bin/env bash
# Local Redis for development and integration tests.
#
# Usage: scripts/brokers/redis.sh start|stop|status
#
# Installs redis-server via apt when it is missing, then runs one instance
# bound to 127.0.0.1:6379 with persistence disabled. Runtime files (pid, log)
# live in <repo>/.brokers/redis, which is git-ignored.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
D="$ROOT/.brokers/redis"
HOST=127.0.0.1
PORT=6379
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
    log "already running on $HOST:$PORT ($(elapsed))"
    return 0
  fi
  ensure_installed
  mkdir -p "$D"
  redis-server --daemonize yes --bind "$HOST" --port "$PORT" \
    --save "" --appendonly no \
    --dir "$D" --pidfile "$D/redis.pid" --logfile "$D/redis.log" 9>&-
  local deadline=$(( $(date +%s) + START_TIMEOUT_S ))
  until ping_ok; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "did not answer PING within ${START_TIMEOUT_S}s; last log lines:"
      tail -n 20 "$D/redis.log" 2>/dev/null || true
      exit 1
    fi
    sleep 0.1
  done
  log "started on $HOST:$PORT, $(redis-server --version | sed -n "s/.*v=\([^ ]*\).*/\1/p") ($(elapsed))"
}

stop() {
  if ping_ok; then
    redis-cli -h "$HOST" -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
  elif [ -f "$D/redis.pid" ] && kill -0 "$(cat "$D/redis.pid")" 2>/dev/null; then
    kill "$(cat "$D/redis.pid")" || true
  else
    rm -f "$D/redis.pid"
    log "not running ($(elapsed))"
    return 0
  fi
  local deadline=$(( $(date +%s) + STOP_TIMEOUT_S ))
  while ping_ok || { [ -f "$D/redis.pid" ] && kill -0 "$(cat "$D/redis.pid")" 2>/dev/null; }; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "still running after ${STOP_TIMEOUT_S}s"
      exit 1
    fi
    sleep 0.1
  done
  rm -f "$D/redis.pid"
  log "stopped ($(elapsed))"
}

is_up() { ping_ok; }

broker_main "$@"
