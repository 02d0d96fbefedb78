#!/usr/bin/env bash
# Headless Chromium for the dashboard's browser spec, from Debian's `chromium` package: the spec drives
# this binary with playwright-core, which never downloads a browser.
#
# Usage: scripts/browser.sh install|path
#   install  installs chromium (and a font for legible screenshots) via apt when it is missing
#   path     prints the browser's path; exits 1 when there is none
# CHROMIUM_PATH names another binary to use instead.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BROKER=browser
# shellcheck source=scripts/brokers/lib.sh
source "$SCRIPT_DIR/brokers/lib.sh"

find_browser() {
  local candidate
  for candidate in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

install() {
  local found
  if found=$(find_browser); then
    log "found $found ($(elapsed))"
    return 0
  fi
  apt_install chromium fonts-dejavu-core
  found=$(find_browser) || { log "chromium is still missing after the install"; exit 1; }
  log "installed $found, $("$found" --version 2>/dev/null || echo 'version unknown') ($(elapsed))"
}

case "${1:-}" in
  install) install ;;
  path) find_browser ;;
  *) echo "usage: $0 install|path" >&2; exit 2 ;;
esac
