#!/usr/bin/env bash
# Runs an example as a reader does: `npm run example -- <name> [args...]` runs examples/<name>.ts (or
# .mts) on Node 24 or later whatever `node` is first on PATH (scripts/node.sh installs Node 24 once when
# that one is older), through tsx, which strips the types without checking them, so it starts at once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

# The runnable examples; a `-handler` module is loaded by its example, on thread lanes.
examples() {
  local file
  for file in "$ROOT"/examples/*.ts "$ROOT"/examples/*.mts; do
    [ -f "$file" ] || continue
    file="$(basename "$file")"
    file="${file%.*}"
    case "$file" in *-handler) ;; *) echo "$file" ;; esac
  done | sort
}

name="${1:-}"
name="${name%.ts}"
name="${name%.mts}"
file=""
for candidate in "$ROOT/examples/$name.ts" "$ROOT/examples/$name.mts"; do
  if [ -n "$name" ] && [ -f "$candidate" ]; then file="$candidate"; break; fi
done
if [ -z "$file" ]; then
  echo "npm run example -- <name>: no example named '${1:-}'; the examples are: $(examples | paste -sd ' ' -)" >&2
  exit 2
fi
shift

exec "$ROOT/scripts/node.sh" exec-development node --import tsx "$file" "$@"
