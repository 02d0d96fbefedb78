#!/usr/bin/env bash
# Local NATS server with JetStream for development and integration tests.
#
# Usage: scripts/brokers/nats.sh start|stop|status
#
# Installs nats-server via apt when it is missing, then runs one instance
# bound to 127.0.0.1 (client port 4222, monitoring port 8222; NATS_PORT and
# NATS_MONITOR_PORT to change them) with JetStream enabled. Runtime files
# (store, pid, log) live in <repo>/.brokers/nats (nats-<port> for another
# port), which is git-ignored. `stop` stops only the server this script
# started from there; any other server on the port is left alone.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
HOST=127.0.0.1
PORT="${NATS_PORT:-4222}"
MON_PORT="${NATS_MONITOR_PORT:-8222}"
D="$ROOT/.brokers/nats"
if [ "$PORT" != 4222 ]; then D="$D-$PORT"; fi
PIDFILE="$D/nats.pid"
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

# JetStream is healthy on the server whose monitor port this is, and that server serves our client port.
healthy() {
  command -v curl >/dev/null 2>&1 || return 1
  curl -sf -o /dev/null --max-time 2 "$HEALTH_URL" || return 1
  curl -sf --max-time 2 "http://$HOST:$MON_PORT/varz" | grep -Eq "\"port\": *$PORT[,}[:space:]]"
}

# The command line this script starts the server with, up to the store directory: it tells ours from
# a server started from another checkout or by hand.
OUR_CMDLINE="nats-server -a $HOST -p $PORT -m $MON_PORT -js -sd $D/nats "

is_ours() { [[ "$(cmdline_of "$1")" == "$OUR_CMDLINE"* ]]; }

# Pid of a server started by this script, found by its exact command line
# (used when the pid file has gone missing).
own_pid_by_cmdline() {
  command -v pgrep >/dev/null 2>&1 || return 1
  pgrep -o -f "^nats-server -a $HOST -p $PORT -m $MON_PORT -js -sd $D/nats( |\$)"
}

our_pid() {
  started_pid "$PIDFILE" && return 0
  local pid
  pid="$(own_pid_by_cmdline)" && is_ours "$pid" && echo "$pid"
}

start() {
  if healthy; then
    log "already running on $HOST:$PORT, $(owner) ($(elapsed))"
    return 0
  fi
  if ! our_pid >/dev/null && (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
    # Another server holds the client port (a second one could not bind it). It may still be starting
    # (another checkout's script): wait for it to report JetStream healthy, then use it.
    if ! wait_until healthy; then
      log "something already answers on $HOST:$PORT, but http://$HOST:$MON_PORT does not report JetStream healthy for it;"
      log "run it with JetStream and monitoring (nats-server -js -m $MON_PORT), stop it, or set NATS_PORT"
      exit 1
    fi
    log "already running on $HOST:$PORT, $(owner) ($(elapsed))"
    return 0
  fi
  ensure_installed
  mkdir -p "$D/nats"
  if ! our_pid >/dev/null; then
    rm -f "$PIDFILE"
    nohup setsid nats-server -a "$HOST" -p "$PORT" -m "$MON_PORT" -js \
      -sd "$D/nats" -P "$PIDFILE" -l "$D/nats.log" \
      >>"$D/nats.stdout" 2>&1 </dev/null 9>&- &
  fi
  if ! wait_until healthy; then
    log "JetStream not healthy within ${START_TIMEOUT_S}s; last log lines:"
    tail -n 20 "$D/nats.log" "$D/nats.stdout" 2>/dev/null || true
    exit 1
  fi
  log "started on $HOST:$PORT (monitor $MON_PORT), $(nats-server --version) ($(elapsed))"
}

is_up() { healthy; }

broker_main "$@"
