# Shared by the broker scripts and scripts/browser.sh: logging with elapsed time, and apt installs that
# refresh the package lists only when they are stale (or when an install fails on old lists). Set BROKER
# (the log prefix) before sourcing.

# apt lists younger than this are considered fresh enough to skip 'apt-get update'.
APT_FRESH_S="${APT_FRESH_S:-21600}"

T0=$(date +%s%N)
log() { echo "[$BROKER] $*"; }
elapsed() { echo "$(( ($(date +%s%N) - T0) / 1000000 ))ms"; }

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

# Runs `start|stop|status` under one lock per broker (parallel test set-ups queue instead of racing).
# The broker script defines `start`, `stop` and `is_up`, and sets D, HOST and PORT.
broker_main() {
  mkdir -p "$D"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$D/.lock"
    flock -w 60 9 || { log "could not take $D/.lock within 60s"; exit 1; }
  fi
  case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status)
      if is_up; then
        log "running on $HOST:$PORT ($(elapsed))"
      else
        log "not running ($(elapsed))"
        return 1
      fi
      ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
  esac
}
