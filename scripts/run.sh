#!/usr/bin/env bash
# scripts/run.sh — set up the tools, then serve the sandbox page locally with trunk
# (debug build, rebuilt and reloaded when sources change).
#
# Usage: bash scripts/run.sh [PORT]      (or PORT=9000 bash scripts/run.sh)
# Default port 8080, address 127.0.0.1. Extra trunk flags: TRUNK_SERVE_ARGS="--release".
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

port="${1:-${PORT:-8080}}"
[[ "$port" =~ ^[0-9]+$ ]] || die "port must be a number, got '$port'"

bash scripts/setup.sh
TRUNK_TOOLS_WASM_BINDGEN="$(wasm_bindgen_lock_version)"   # overrides Trunk.toml's pin
export TRUNK_TOOLS_WASM_BINDGEN

say "serving kubeloop at http://127.0.0.1:$port/  (Ctrl-C to stop)"
# shellcheck disable=SC2086  # TRUNK_SERVE_ARGS is a list of flags
exec trunk serve --offline --address 127.0.0.1 --port "$port" ${TRUNK_SERVE_ARGS:-}
