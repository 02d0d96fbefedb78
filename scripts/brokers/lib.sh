# Shared by the broker scripts and scripts/browser.sh: logging with elapsed time, and apt installs that
# refresh the package lists only when they are stale (or when an install fails on old lists). Set BROKER
# (the log prefix) before sourcing.

# apt lists younger than this are considered fresh enough to skip 'apt-get update'.
APT_FRESH_S="${APT_FRESH_S:-21600}"

T0=$(date +%s%N)
log() { echo "[$BROKER] $*"; }
elapsed() { echo "$(( ($(date +%s%N) - T0) / 1000000 ))ms"; }

# Runs the command until it succeeds; fails once START_TIMEOUT_S has passed.
wait_until() {
  local deadline=$(( $(date +%s) + START_TIMEOUT_S ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then return 1; fi
    sleep 0.1
  done
}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Two apt-get processes at once fail on dpkg's lock, and CI starts the brokers and the browser install
# together: the scripts of this repository take turns on one lock file (released before the command's
# children, such as a service a package starts, could inherit it), and apt itself waits a while for a
# lock held by anything else.
APT_LOCK="${APT_LOCK:-/var/lock/keyed-dispatch-apt.lock}"
apt_get() {
  if command -v flock >/dev/null 2>&1; then
    $SUDO flock --close --wait 900 "$APT_LOCK" apt-get -o DPkg::Lock::Timeout=300 "$@"
  else
    $SUDO apt-get -o DPkg::Lock::Timeout=300 "$@"
  fi
}

APT_UPDATED=0
apt_update() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    apt_get update -qq
    APT_UPDATED=1
  fi
}
apt_lists_fresh() {
  local newest
  newest=$(find /var/lib/apt/lists -maxdepth 1 -type f -name '*_Packages*' -printf '%T@\n' 2>/dev/null | sort -n | tail -1)
  [ -n "$newest" ] || return 1
  [ $(( $(date +%s) - ${newest%.*} )) -lt "$APT_FRESH_S" ]
}
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if ! apt_lists_fresh; then apt_update; fi
  log "apt-get install $*"
  if ! apt_get install -y -qq --no-install-recommends "$@"; then
    if [ "$APT_UPDATED" -eq 1 ]; then return 1; fi
    log "install failed with existing apt lists; updating and retrying once"
    apt_update
    apt_get install -y -qq --no-install-recommends "$@"
  fi
}

# True if the pid is a live process (an exited but not yet reaped one counts as gone).
proc_alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"
  [ "$state" != "Z" ] && [ "$state" != "X" ]
}

# Prints the pid in the pid file $1 if that process is alive and is the server this script started:
# the broker script's `is_ours <pid>` checks its identity, so a pid the system has since given to
# another process, or a broker started from elsewhere, is never taken for ours.
started_pid() {
  local pid
  [ -f "$1" ] || return 1
  pid="$(cat "$1" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && proc_alive "$pid" && is_ours "$pid" || return 1
  echo "$pid"
}

# The command line of a process, its arguments separated by spaces.
cmdline_of() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null; }

# Stops the process `pid` this script started: TERM, then KILL after STOP_TIMEOUT_S seconds.
stop_pid() {
  local pid=$1
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
}

# Who runs the server answering on the port, for messages.
owner() {
  local pid
  if pid="$(our_pid)"; then
    echo "started by this script (pid $pid)"
  else
    echo "not started by this script from ${D#"$ROOT"/}"
  fi
}

# Stops the server this script started from $D, and only that one: a server on the port that was
# started otherwise (another checkout, a system service, by hand) is left alone.
stop_ours() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PIDFILE"
    if is_up; then
      log "a server answers on $HOST:$PORT but was not started by this script from ${D#"$ROOT"/}; leaving it alone"
    else
      log "not running ($(elapsed))"
    fi
    return 0
  fi
  log "stopping pid $pid"
  stop_pid "$pid"
  rm -f "$PIDFILE"
  log "stopped ($(elapsed))"
}

# Runs `start|stop|status` under one lock per broker (parallel test set-ups queue instead of racing).
# The broker script defines `start`, `is_up`, `is_ours` and `our_pid`, and sets D, PIDFILE, HOST and PORT.
broker_main() {
  mkdir -p "$D"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$D/.lock"
    flock -w 60 9 || { log "could not take $D/.lock within 60s"; exit 1; }
  fi
  case "${1:-}" in
    start) start ;;
    stop) stop_ours ;;
    status)
      if is_up; then
        log "running on $HOST:$PORT, $(owner) ($(elapsed))"
      else
        log "not running ($(elapsed))"
        return 1
      fi
      ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
  esac
}
