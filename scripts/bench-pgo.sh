#!/usr/bin/env bash
# scripts/bench-pgo.sh — the scale benchmark built as a release binary would be shipped for
# speed: profile-guided (trained on one run of the benchmark itself) and, where the CPU has
# them, for x86-64-v3's instructions (AVX2, BMI2, FMA).
#
#   bash scripts/bench-pgo.sh                      # full size, as `cargo bench --bench scale`
#   bash scripts/bench-pgo.sh --nodes 500 --pods 15000
#
# Arguments go to the benchmark run that is measured; the training run is mid size (15,000
# pods on 500 nodes: it exercises the same code as the full size, and profiles trained on
# either measured the same). Needs rustup's llvm-tools component (for llvm-profdata), added
# when missing. Builds go to target/pgo-gen and target/pgo-use, so the ordinary build is left
# alone. The simulation is the same (same writes, same virtual time); only the machine code
# differs.
set -euo pipefail
source "$(dirname "$0")/env.sh"

sysroot="$(rustc --print sysroot)"
host="$(rustc -vV | awk '/^host:/ { print $2 }')"
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [[ ! -x "$profdata" ]]; then
  say "adding rustup's llvm-tools (llvm-profdata)"
  rustup component add llvm-tools-preview >/dev/null || die "llvm-profdata is missing and rustup could not add llvm-tools"
fi
[[ -x "$profdata" ]] || die "no llvm-profdata at $profdata"

cpu=""
if [[ "$host" == x86_64-* ]] && grep -qw avx2 /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  cpu="-Ctarget-cpu=x86-64-v3"
fi

data="$ROOT/target/pgo-data"

# The benchmark binary cargo built, as its JSON messages name it (nothing if the build failed;
# cargo's own progress and errors go to stderr as usual).
build() {
  local dir="$1" flags="$2"
  RUSTFLAGS="$cpu $flags" CARGO_TARGET_DIR="$ROOT/target/$dir" \
    cargo bench --bench scale --no-run --message-format=json |
    grep -o '"executable":"[^"]*/deps/scale-[^"]*"' | sed 's/.*:"//; s/"$//' | tail -n 1 || true
}

say "building the instrumented benchmark (${cpu:-baseline x86-64})"
gen="$(build pgo-gen "-Cprofile-generate=$data")"
[[ -x "$gen" ]] || die "the instrumented build failed"
# Only the training run's counts (build scripts of the instrumented build wrote some too).
rm -rf "$data"
say "training: one mid-size run"
"$gen" --bench --nodes 500 --pods 15000 | grep -E "pods in" || die "the training run failed"
"$profdata" merge -o "$ROOT/target/pgo.profdata" "$data"

say "building with the profile"
use="$(build pgo-use "-Cprofile-use=$ROOT/target/pgo.profdata")"
[[ -x "$use" ]] || die "the profile-guided build failed"
say "measuring"
"$use" --bench "$@"
