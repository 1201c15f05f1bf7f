#!/usr/bin/env bash
# scripts/run.sh — set up the tools, then serve the sandbox page locally.
#
#   bash scripts/run.sh [PORT]             debug build with `trunk serve`: rebuilt and reloaded
#                                          when sources change (extra flags: TRUNK_SERVE_ARGS)
#   bash scripts/run.sh --release [PORT]   the release build (`trunk build --release`, with its
#                                          precompressed .br/.gz files) served as a static host
#                                          would by scripts/serve.mjs; BASE=/kubeloop/ serves
#                                          it under a subpath, as GitHub Pages does
#
# Default port 8080 (or PORT=9000), address 127.0.0.1.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

release=""
if [[ "${1:-}" == "--release" ]]; then
  release=1
  shift
fi
port="${1:-${PORT:-8080}}"
[[ "$port" =~ ^[0-9]+$ ]] || die "port must be a number, got '$port'"

bash scripts/setup.sh
TRUNK_TOOLS_WASM_BINDGEN="$(wasm_bindgen_lock_version)"   # overrides Trunk.toml's pin
export TRUNK_TOOLS_WASM_BINDGEN

if [[ -n "$release" ]]; then
  say "building the release site into dist/ (several minutes on 2 cores)"
  trunk build --release --offline
  base="${BASE:-/}"
  say "serving dist/ at http://127.0.0.1:$port${base%/}/  (Ctrl-C to stop)"
  exec node scripts/serve.mjs --dir dist --base "$base" --port "$port"
fi

say "serving kubeloop at http://127.0.0.1:$port/  (Ctrl-C to stop)"
# shellcheck disable=SC2086  # TRUNK_SERVE_ARGS is a list of flags
exec trunk serve --offline --address 127.0.0.1 --port "$port" ${TRUNK_SERVE_ARGS:-}
