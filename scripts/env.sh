# shellcheck shell=bash disable=SC2034  # the variables here are used by the scripts that source it
# scripts/env.sh — shared environment for scripts/{setup,run,test}.sh. Source it; don't run it.
#
# Sets ROOT (the repo root) and cds there, puts the tools on PATH (cargo-installed
# trunk / wasm-bindgen in ~/.cargo/bin, wasm-opt from npm's binaryen in
# node_modules/.bin), and exports the pinned versions the other scripts check.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || return 1

CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$ROOT/node_modules/.bin:$CARGO_BIN:$PATH"

# Pinned tool versions (used by the scripts that source this file).
TRUNK_VERSION="0.21.14"          # 0.22 needs a newer rustc than ours
WASM_TARGET="wasm32-unknown-unknown"
NODE_MIN_MAJOR=20                # playwright-core needs node >= 20
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"   # also read by tests/e2e/subpath.mjs

# The wasm-bindgen CLI must be exactly the version of the wasm-bindgen crate that
# Cargo.lock resolved (the generated JS glue and the wasm must agree).
wasm_bindgen_lock_version() {
  awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock
}

# Prefix for our own messages, so they stand out from cargo's and trunk's.
say() { printf '==> %s\n' "$*"; }
die() { printf '==> ERROR: %s\n' "$*" >&2; exit 1; }
