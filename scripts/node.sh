#!/usr/bin/env bash
# The Node versions the project runs on: 24 (development and CI) and 22 (the floor, `engines.node`).
#
# Usage: scripts/node.sh install 24|22    installs that Node once into <repo>/.node/<major>/ and prints its bin folder
#        scripts/node.sh exec COMMAND...  runs COMMAND with a supported Node first on PATH: the `node` already
#                                         there when it is 22 or later, else Node 24 (installed as above)
#        scripts/node.sh exec-development COMMAND...
#                                         the same with Node 24 or later: what the examples run on, so that
#                                         they behave alike on every machine
#
# Node comes from the npm registry's binary package (node-<os>-<arch>, whose tarball holds bin/node),
# fetched with `npm pack`; nothing else is downloaded. The folder .node/ is git-ignored.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
FLOOR_MAJOR=22
DEVELOPMENT_MAJOR=24

pinned_version() {
  case "$1" in
    24) echo 24.22.3 ;;
    22) echo 22.23.5 ;;
    *) echo "scripts/node.sh: no pinned Node $1 (24 or 22)" >&2; exit 2 ;;
  esac
}

binary_package() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "scripts/node.sh: no Node binary package for $(uname -s)" >&2; exit 2 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "scripts/node.sh: no Node binary package for $(uname -m)" >&2; exit 2 ;;
  esac
  echo "node-$os-$arch"
}

# Idempotent. The new Node is unpacked beside its folder and renamed into place, so a Node in use is
# never half written.
install() {
  local major="$1" version dir staging tarball
  version="$(pinned_version "$major")"
  dir="$ROOT/.node/$major"
  if [ "$("$dir/bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
    mkdir -p "$ROOT/.node"
    staging="$(mktemp -d "$ROOT/.node/.install-$major.XXXXXX")"
    trap 'rm -rf "$staging"' EXIT
    tarball="$(cd "$staging" && npm pack --silent "$(binary_package)@$version")"
    tar -xzf "$staging/$tarball" -C "$staging"
    if [ "$("$staging/package/bin/node" --version)" != "v$version" ]; then
      echo "scripts/node.sh: $tarball holds no working Node $version" >&2
      exit 1
    fi
    rm -rf "$dir"
    mv "$staging/package" "$dir"
    rm -rf "$staging"
    trap - EXIT
  fi
  echo "$dir/bin"
}

current_major() {
  local version
  version="$(node --version 2>/dev/null || true)"
  version="${version#v}"
  echo "${version%%.*}"
}

case "${1:-}" in
  install)
    [ $# -eq 2 ] || { echo "usage: scripts/node.sh install 24|22" >&2; exit 2; }
    install "$2"
    ;;
  exec | exec-development)
    least="$FLOOR_MAJOR"
    [ "$1" = exec ] || least="$DEVELOPMENT_MAJOR"
    shift
    [ $# -gt 0 ] || { echo "usage: scripts/node.sh exec|exec-development COMMAND..." >&2; exit 2; }
    major="$(current_major)"
    if [ -z "$major" ] || [ "$major" -lt "$least" ]; then
      PATH="$(install "$DEVELOPMENT_MAJOR"):$PATH"
      export PATH
    fi
    exec "$@"
    ;;
  *)
    echo "usage: scripts/node.sh install 24|22 | exec COMMAND... | exec-development COMMAND..." >&2
    exit 2
    ;;
esac
