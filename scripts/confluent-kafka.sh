#!/usr/bin/env bash
# @confluentinc/kafka-javascript (librdkafka underneath), the optional peer behind fromConfluentKafka.
# Its prebuilt binary comes from outside the npm registry and its default static build downloads library
# sources, so it is built here from the registry's tarball, linked dynamically against Debian's libraries,
# for the Node that runs the specs. The built package is cached outside the repository, keyed by its
# version and that Node's ABI, and linked into node_modules/.
#
#   scripts/confluent-kafka.sh install   builds once (about 230 s of CPU time), links it; idempotent
#   scripts/confluent-kafka.sh path      prints the cached package folder; exit 1 when not built
#
# Environment overrides:
#   CONFLUENT_KAFKA_CACHE  the cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/keyed-dispatch)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
VERSION=1.10.1
PACKAGE=@confluentinc/kafka-javascript
CACHE="${CONFLUENT_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/keyed-dispatch}"
# Build, compression (zstd, lz4), SASL/GSSAPI and OIDC (curl) headers; librdkafka's configure finds them.
DEBIAN_PACKAGES=(build-essential python3 libssl-dev zlib1g-dev libsasl2-dev libzstd-dev liblz4-dev libcurl4-openssl-dev)

log() { printf '[confluent-kafka] %s\n' "$*"; }
die() { printf '[confluent-kafka] error: %s\n' "$*" >&2; exit 1; }

# The Node that runs the specs: scripts/node.sh's (the registry's node-<os>-<arch> package ships
# include/node, the headers the addon is built against). A build against another Node's headers
# would not load.
node_bin() { dirname "$("$ROOT/scripts/node.sh" exec sh -c 'command -v node')"; }

built_dir() {
  local abi
  abi="$("$(node_bin)/node" -p process.versions.modules)"
  echo "$CACHE/confluent-kafka-$VERSION-node$abi"
}

install_debian_packages() {
  local missing=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  log "installing ${missing[*]}"
  # Other scripts (browser.sh) may hold the apt lock; wait for it rather than fail.
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}"
}

loads() { # folder
  (cd "$1" && "$(node_bin)/node" -e "require('$PACKAGE')") >/dev/null 2>&1
}

# Built into a staging folder beside the cache entry and renamed into place, so an interrupted build
# never leaves a half-built entry.
build() {
  local dir="$1" bin staging
  bin="$(node_bin)"
  install_debian_packages
  mkdir -p "$CACHE"
  staging="$(mktemp -d "$dir.build.XXXXXX")"
  # Expanded now: the trap runs after this function's locals are gone.
  trap "rm -rf '$staging'" EXIT
  log "building $PACKAGE@$VERSION for Node $("$bin/node" --version) (about 230 s of CPU time)"
  echo '{"private":true}' >"$staging/package.json"
  (
    cd "$staging"
    PATH="$bin:$PATH" CKJS_LINKING=dynamic npm_config_nodedir="$(dirname "$bin")" \
      npm_config_build_from_source=true \
      npm install --no-audit --no-fund --no-save --loglevel=error "$PACKAGE@$VERSION"
  )
  loads "$staging" || die "the built $PACKAGE does not load in Node $("$bin/node" --version)"
  rm -rf "$dir"
  mv "$staging" "$dir"
  trap - EXIT
}

# A link, so that the package finds its own dependencies (bindings, nan...) beside it in the cache and
# `npm ci` (which empties node_modules/) needs only this script run again, not a rebuild.
link() {
  local dir="$1" target="$ROOT/node_modules/$PACKAGE"
  mkdir -p "$(dirname "$target")"
  rm -rf "$target"
  ln -s "$dir/node_modules/$PACKAGE" "$target"
}

case "${1:-}" in
  install)
    dir="$(built_dir)"
    if loads "$dir"; then log "cached: $dir"; else build "$dir"; fi
    link "$dir"
    log "linked node_modules/$PACKAGE -> $dir"
    ;;
  path)
    dir="$(built_dir)"
    loads "$dir" || exit 1
    echo "$dir"
    ;;
  *)
    echo "usage: scripts/confluent-kafka.sh install | path" >&2
    exit 2
    ;;
esac
