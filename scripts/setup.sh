#!/usr/bin/env bash
# scripts/setup.sh — install the tools kubeloop's build and tests need; only what is
# missing. Idempotent, non-interactive (works in CI with CI=true and no stdin), and
# fast when everything is there: it prints one line per tool, "present" or "installed".
#
#   wasm32-unknown-unknown    rustup target
#   trunk 0.21.14             cargo install --locked        (~/.cargo/bin)
#   wasm-bindgen-cli          cargo install, exactly the wasm-bindgen version in Cargo.lock
#                             (provides wasm-bindgen and wasm-bindgen-test-runner)
#   chromium, chromedriver    Debian packages, for the browser tests and the e2e check
#   node_modules              npm ci from package-lock.json: binaryen (wasm-opt) and
#                             playwright-core (no browser download: we use Debian's chromium)
#
# Usage: bash scripts/setup.sh
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

export DEBIAN_FRONTEND=noninteractive
started=$SECONDS

present() { printf '%-22s present   %s\n' "$1" "$2"; }
installed() { printf '%-22s installed %s\n' "$1" "$2"; }

# Run as root, or through sudo when we are not (apt only).
as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

# --- Rust: the wasm target -------------------------------------------------------
command -v cargo >/dev/null || die "cargo not found: install Rust (rustup) first"
if rustup target list --installed | grep -qx "$WASM_TARGET"; then
  present "$WASM_TARGET" "(rustup target)"
else
  rustup target add "$WASM_TARGET" >&2
  installed "$WASM_TARGET" "(rustup target)"
fi

# --- trunk ---------------------------------------------------------------------------
trunk_found="$(trunk --version 2>/dev/null || true)"     # "trunk 0.21.14"
if [[ "$trunk_found" == "trunk $TRUNK_VERSION" ]]; then
  present trunk "$TRUNK_VERSION"
else
  say "installing trunk $TRUNK_VERSION (found: ${trunk_found:-none}); takes ~7 min on 2 cores" >&2
  cargo install --locked "trunk@$TRUNK_VERSION" >&2
  installed trunk "$TRUNK_VERSION"
fi

# --- wasm-bindgen-cli, same version as the wasm-bindgen crate --------------------
[[ -f Cargo.lock ]] || cargo generate-lockfile >&2
WASM_BINDGEN_VERSION="$(wasm_bindgen_lock_version)"
[[ -n "$WASM_BINDGEN_VERSION" ]] || die "no wasm-bindgen package in Cargo.lock"
# Trunk.toml pins the same version for `trunk` run by hand; keep them in step.
if ! grep -qx "wasm_bindgen = \"$WASM_BINDGEN_VERSION\"" Trunk.toml; then
  die "Trunk.toml [tools] wasm_bindgen must be \"$WASM_BINDGEN_VERSION\" (the wasm-bindgen version in Cargo.lock)"
fi
wb_found="$(wasm-bindgen --version 2>/dev/null || true)"              # "wasm-bindgen 0.2.130"
wbt_found="$(wasm-bindgen-test-runner --version 2>/dev/null || true)"
if [[ "$wb_found" == "wasm-bindgen $WASM_BINDGEN_VERSION" &&
      "$wbt_found" == *" $WASM_BINDGEN_VERSION" ]]; then
  present wasm-bindgen-cli "$WASM_BINDGEN_VERSION"
else
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (found: ${wb_found:-none}); takes a few minutes" >&2
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" >&2
  installed wasm-bindgen-cli "$WASM_BINDGEN_VERSION"
fi

# --- chromium + chromedriver (Debian) --------------------------------------------------
if [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]]; then
  present chromium "$("$CHROMIUM" --version 2>/dev/null | awk '{print $2}')"
else
  say "installing chromium and chromium-driver with apt-get" >&2
  as_root apt-get update -qq >&2
  as_root apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2
  installed chromium "$("$CHROMIUM" --version 2>/dev/null | awk '{print $2}')"
fi

# --- node packages: binaryen (wasm-opt), playwright-core ---------------------------------
command -v node >/dev/null || die "node not found: Node.js >= $NODE_MIN_MAJOR is needed"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= NODE_MIN_MAJOR )) || die "node $(node --version) is too old: need >= $NODE_MIN_MAJOR"
# node_modules is fresh when it was installed from exactly this package-lock.json: npm ci
# records the lockfile's hash in a stamp file (npm ci wipes node_modules, stamp included).
stamp=node_modules/.kubeloop-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x node_modules/.bin/wasm-opt ]]; then
  present node_modules "(package-lock.json unchanged)"
else
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$want" >"$stamp"
  installed node_modules "(npm ci)"
fi
# Trunk.toml says e.g. wasm_opt = "version_132"; trunk reads "wasm-opt version 132 (...)".
wasm_opt_want="$(sed -n 's/^wasm_opt = "version_\([0-9]*\)"$/\1/p' Trunk.toml)"
wasm_opt_found="$(wasm-opt --version)"
[[ "$wasm_opt_found" == "wasm-opt version $wasm_opt_want "* ]] ||
  die "wasm-opt on PATH is '$wasm_opt_found'; Trunk.toml wants version_$wasm_opt_want (package.json: binaryen)"

say "setup done in $((SECONDS - started))s"
