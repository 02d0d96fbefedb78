#!/usr/bin/env bash
# Local NATS server with JetStream for development and integration tests.
#
# Usage: scripts/brokers/nats.sh start|stop|status
#
# Installs nats-server via apt when it is missing, then runs one instance
# bound to 127.0.0.1 (client port 4222, monitoring port 8222) with JetStream
# enabled. Runtime files (store, pid, log) live in <repo>/.brokers/nats,
# which is git-ignored.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
D="$ROOT/.brokers/nats"
HOST=127.0.0.1
PORT=4222
MON_PORT=8222
HEALTH_URL="http://$HOST:$MON_PORT/healthz?js-enabled-only=true"
START_TIMEOUT_S="${NATS_START_TIMEOUT_S:-20}"
STOP_TIMEOUT_S="${NATS_STOP_TIMEOUT_S:-20}"
BROKER=nats
# shellcheck source=scripts/brokers/lib.sh
source "$SCRIPT_DIR/lib.sh"

ensure_installed() {
  local pkgs=()
  command -v nats-server >/dev/null 2>&1 || pkgs+=(nats-server)
  command -v curl >/dev/null 2>&1 || pkgs+=(curl ca-certificates)
  if [ "${#pkgs[@]}" -gt 0 ]; then apt_install "${pkgs[@]}"; fi
}

healthy() {
  command -v curl >/dev/null 2>&1 || return 1
  curl -sf -o /dev/null --max-time 2 "$HEALTH_URL"
}

# True if the pid is a live process (an exited but not yet reaped one counts as gone).
proc_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"
  [ "$state" != "Z" ] && [ "$state" != "X" ]
}

pid_alive() {
  [ -f "$D/nats.pid" ] && proc_alive "$(cat "$D/nats.pid")"
}

# Pid of a server started by this script, found by its exact command line
# (used when the pid file has gone missing).
own_pid_by_cmdline() {
  command -v pgrep >/dev/null 2>&1 || return 1
  pgrep -o -f "^nats-server -a $HOST -p $PORT -m $MON_PORT -js -sd $D/nats( |\$)"
}

start() {
  if healthy; then
    log "already running on $HOST:$PORT ($(elapsed))"
    return 0
  fi
  ensure_installed
  mkdir -p "$D/nats"
  if ! pid_alive; then
    rm -f "$D/nats.pid"
    nohup setsid nats-server -a "$HOST" -p "$PORT" -m "$MON_PORT" -js \
      -sd "$D/nats" -P "$D/nats.pid" -l "$D/nats.log" \
      >>"$D/nats.stdout" 2>&1 </dev/null 9>&- &
  fi
  local deadline=$(( $(date +%s) + START_TIMEOUT_S ))
  until healthy; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "JetStream not healthy within ${START_TIMEOUT_S}s; last log lines:"
      tail -n 20 "$D/nats.log" "$D/nats.stdout" 2>/dev/null || true
      exit 1
    fi
    sleep 0.1
  done
  log "started on $HOST:$PORT (monitor $MON_PORT), $(nats-server --version) ($(elapsed))"
}

stop() {
  local pid=""
  if pid_alive; then
    pid="$(cat "$D/nats.pid")"
  elif pid="$(own_pid_by_cmdline)" && [ -n "$pid" ]; then
    log "pid file missing; found server pid $pid by command line"
  else
    rm -f "$D/nats.pid"
    if healthy; then
      log "a server answers on $HOST:$MON_PORT but was not started from $D; not stopping it"
      exit 1
    fi
    log "not running ($(elapsed))"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(( $(date +%s) + STOP_TIMEOUT_S ))
  while proc_alive "$pid"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "pid $pid still running after ${STOP_TIMEOUT_S}s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.1
  done
  rm -f "$D/nats.pid"
  log "stopped ($(elapsed))"
}

is_up() { healthy; }

broker_main "$@"
