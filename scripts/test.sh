#!/usr/bin/env bash
# scripts/test.sh — THE test command (CI runs it through .ci/run). Stops at the first
# failure with a non-zero exit; the last line is always "summary: N passed, N failed, N skipped".
#
#   1. setup    scripts/setup.sh: tools present, or installed
#   2. native   cargo test --all-targets, then the doc tests, then the tests of the build's
#               module splitter (tools/wasm-split, its own crate)
#   3. browser  cargo test --target wasm32-unknown-unknown --test web --test web_…, in headless
#               chromium: every tests/web*.rs (the page, and each panel mounted alone)
#               (wasm-bindgen-test-runner + chromedriver; chrome flags in webdriver.json)
#   4. bundle   trunk build --release --offline into dist/, with relative asset URLs
#               (Trunk.toml public_url = "./"), so dist/ works from any subpath, and .gz/.br
#               copies of the text assets (scripts/compress.mjs, in Trunk's post_build hook),
#               the module split in two first (scripts/split.mjs: the start's code, the rest)
#   5. e2e      node tests/e2e/subpath.mjs: dist/ served compressed under /kubeloop/ by
#               scripts/serve.mjs, same-origin requests only, the UI story; screenshots in
#               tests/e2e/screenshots/; node tests/e2e/shell.mjs: index.html's shell (#shell)
#               drawn before the module loads, and the app's first frame on the same boxes
#               (px differences printed), no blank frame, the download's progress; then
#               node tests/e2e/perf.mjs: the first load over
#               Slow 4G ("load: slow4g_fcp_ms=… slow4g_interactive_ms=…", tests/e2e/load.mjs),
#               first-interactive time and frame times with 1,000 pods on 50 nodes, printed
#               as "perf: p95_frame_ms=… first_interactive_ms=…" (recorded; fails only when
#               grossly off; skipped with E2E_SMOKE_ONLY); before it, node tests/e2e/story.mjs:
#               the example applied at the teaching pace on a fake clock, the chain's hops in
#               causal order, one screenshot per hop in tests/e2e/screenshots/story/; then
#               node tests/e2e/worker.mjs: the simulation in its Web Worker against ?worker=0
#               (same pod names, a share link and a reload replay them), and 1,500 pods on 50
#               nodes at 100× in both modes, printed as "worker-big: mode=… p95_frame_ms=…
#               click_max_ms=… achieved_speed=… settle_longest_frame_ms=…" (recorded; fails
#               only when frames stop over 1 s in the worker; WORKER_BIG=1: 9,000 pods on 300);
#               node tests/e2e/replay.mjs: a script typed into the page prints exactly what the
#               native CLI prints for it (names, ages, a component's client log), in the worker
#               and in the page's thread, and a reload replays it to the same pods;
#               SOAK_HOURS=6 node tests/e2e/soak.mjs: the example and a CronJob each minute for
#               six virtual hours in the worker (memory, Events, frames), then a reload that
#               replays them showing its progress ("soak: … reload_interactive_ms=…"; the full
#               day is SOAK_HOURS=24, on demand)
#   6. sizes    the release bundle's wasm + js, raw, gzip -9 and brotli 11 (its .br copies)
#
# Usage: bash scripts/test.sh
#   E2E_SMOKE_ONLY=1 bash scripts/test.sh   e2e only checks the page loads and renders
# Logs of each stage: target/test-logs/<stage>.log
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

LOG_DIR="$ROOT/target/test-logs"
mkdir -p "$LOG_DIR"

passed=0 failed=0 skipped=0
stage_name="" stage_t0=0
timings=()
run_t0="$(date +%s%N)"

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1fs", ms / 1000 }'; }

begin_stage() {
  stage_name="$1"
  stage_t0="$(date +%s%N)"
  printf '\n==> [%s] %s\n' "$1" "$2"
}

end_stage() {
  timings+=("$(printf '%-8s %8s' "$stage_name" "$(secs "$(ms_since "$stage_t0")")")")
  stage_name=""
}

# Adds up the "test result: ok. 3 passed; 0 failed; 1 ignored; ..." lines (cargo's and
# wasm-bindgen-test-runner's) of a log to the totals.
count_results() {
  local p f i
  read -r p f i < <(awk '
    /^test result:/ {
      for (k = 1; k <= NF; k++) {
        n = $k; w = $(k + 1); sub(/[;,.]$/, "", w)
        if (w == "passed") p += n; else if (w == "failed") f += n; else if (w == "ignored") i += n
      }
    }
    END { print p + 0, f + 0, i + 0 }' "$1")
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + i))
}

print_timings() {
  printf '\n==> timings\n'
  local t
  for t in "${timings[@]}"; do printf '    %s\n' "$t"; done
  printf '    %-8s %8s\n' total "$(secs "$(ms_since "$run_t0")")"
}

# On any failure: say which stage, count it, and still end with the summary line.
on_exit() {
  local code=$?
  if (( code != 0 )); then
    # Count what the failing test stage did run (its failures included).
    if [[ "$stage_name" == native || "$stage_name" == browser ]]; then
      count_results "$LOG_DIR/$stage_name.log" || true
    fi
    [[ -n "$stage_name" ]] && timings+=("$(printf '%-8s %8s  FAILED' "$stage_name" "$(secs "$(ms_since "$stage_t0")")")")
    print_timings
    printf '\n==> FAIL: stage "%s" failed (exit %d); its log: %s\n' \
      "${stage_name:-?}" "$code" "${LOG_DIR#"$ROOT"/}/${stage_name:-?}.log"
    (( failed > 0 )) || failed=1
    echo "summary: $passed passed, $failed failed, $skipped skipped"
  fi
}
trap on_exit EXIT

# Runs a command, showing its output and keeping it in the stage's log.
logged() { "$@" 2>&1 | tee -a "$LOG_DIR/$stage_name.log"; }

# ------------------------------------------------------------------------------------------
begin_stage setup "scripts/setup.sh"
: >"$LOG_DIR/setup.log"
logged bash scripts/setup.sh
TRUNK_TOOLS_WASM_BINDGEN="$(wasm_bindgen_lock_version)"   # overrides Trunk.toml's pin
export TRUNK_TOOLS_WASM_BINDGEN
end_stage

# ------------------------------------------------------------------------------------------
begin_stage native "cargo test --all-targets && cargo test --doc (and tools/wasm-split)"
: >"$LOG_DIR/native.log"
logged cargo test --all-targets
logged cargo test --doc
logged cargo test --release --manifest-path tools/wasm-split/Cargo.toml
count_results "$LOG_DIR/native.log"
end_stage

# ------------------------------------------------------------------------------------------
# Every browser suite: tests/web.rs (the whole page) and tests/web_*.rs (a panel mounted alone).
browser_tests=()
for f in tests/web*.rs; do browser_tests+=(--test "$(basename "$f" .rs)"); done
begin_stage browser "cargo test --target $WASM_TARGET ${browser_tests[*]} (headless chromium)"
: >"$LOG_DIR/browser.log"
# CHROMEDRIVER (from env.sh) makes wasm-bindgen-test-runner drive chromium through
# chromedriver; it reads the chrome flags from webdriver.json in the repo root.
logged cargo test --target "$WASM_TARGET" "${browser_tests[@]}"
count_results "$LOG_DIR/browser.log"
end_stage

# ------------------------------------------------------------------------------------------
begin_stage bundle "trunk build --release --offline -> dist/"
: >"$LOG_DIR/bundle.log"
logged trunk build --release --offline
end_stage

# ------------------------------------------------------------------------------------------
begin_stage e2e "node tests/e2e/subpath.mjs${E2E_SMOKE_ONLY:+ (E2E_SMOKE_ONLY=$E2E_SMOKE_ONLY)}"
: >"$LOG_DIR/e2e.log"
logged node tests/e2e/subpath.mjs
passed=$((passed + 1))
logged node tests/e2e/shell.mjs
passed=$((passed + 1))
if [[ -z "${E2E_SMOKE_ONLY:-}" ]]; then
  logged node tests/e2e/story.mjs
  passed=$((passed + 1))
  logged node tests/e2e/perf.mjs
  passed=$((passed + 1))
  logged node tests/e2e/worker.mjs
  passed=$((passed + 1))
  logged node tests/e2e/replay.mjs
  passed=$((passed + 1))
  logged env SOAK_HOURS=6 node tests/e2e/soak.mjs
  passed=$((passed + 1))
fi
end_stage

# ------------------------------------------------------------------------------------------
begin_stage sizes "release bundle sizes (dist/)"
: >"$LOG_DIR/sizes.log"
bundle_sizes() {
  local f raw gz br total_raw=0 total_gz=0 total_br=0
  printf '%-40s %10s %10s %10s\n' file bytes gzip-9 brotli-11
  for f in dist/*.wasm dist/*.js; do
    [[ -f "$f" && "$f" != *_boot.wasm ]] || continue
    raw="$(wc -c <"$f")"
    gz="$(gzip -9 -c "$f" | wc -c)"
    br="$( [[ -f "$f.br" ]] && wc -c <"$f.br" || echo 0)"   # written by scripts/compress.mjs
    total_raw=$((total_raw + raw)) total_gz=$((total_gz + gz)) total_br=$((total_br + br))
    printf '%-40s %10d %10d %10d\n' "$f" "$raw" "$gz" "$br"
  done
  (( total_raw > 0 )) || { echo "no .wasm/.js in dist/" >&2; return 1; }
  printf '%-40s %10d %10d %10d  (%d KiB, %d KiB gzipped, %d KiB brotli)\n' total "$total_raw" "$total_gz" \
    "$total_br" $((total_raw / 1024)) $((total_gz / 1024)) $((total_br / 1024))
  # The boot image (scripts/boot-image.mjs), fetched on fast connections only.
  for f in dist/*_boot.wasm; do
    if [[ -f "$f" ]]; then
      printf '%-40s %10d %10d %10d  (the boot image: fast connections only)\n' "$f" "$(wc -c <"$f")" \
        "$(gzip -9 -c "$f" | wc -c)" "$( [[ -f "$f.br" ]] && wc -c <"$f.br" || echo 0)"
    fi
  done
}
logged bundle_sizes
end_stage

trap - EXIT
print_timings
echo
echo "summary: $passed passed, $failed failed, $skipped skipped"
