#!/usr/bin/env bash
# scripts/bench-ab.sh — the scale benchmark at two revisions, run alternately, so that a change
# is judged against its base in the same sitting (this project's 2-core machines drift by a
# tenth and more within an hour: runs from different sittings are not comparable).
#
#   bash scripts/bench-ab.sh HEAD~1 HEAD                        # full size, three rounds
#   bash scripts/bench-ab.sh main WORKTREE --rounds 6 -- --nodes 1000 --pods 30000
#   bash scripts/bench-ab.sh HEAD WORKTREE --count              # counted, not timed
#
# With --count each side runs once under valgrind's cachegrind instead (at 300 nodes and 6,000
# pods unless arguments after `--` say otherwise; about 20 s a run): the simulation is
# deterministic, so its instruction counts repeat to a few in ten thousand from run to run (its
# cache misses to a few in a thousand), and a change of a percent shows where the timed runs
# cannot see a tenth. It prints both sides' counts and writes, and the functions whose
# instruction counts changed most.
#
# A revision is anything `git rev-parse` takes, or WORKTREE for the files as they are now
# (uncommitted changes included). Arguments after `--` go to every run. Each round runs A then
# B; the script prints every run's wall time from apply and its simulation thread's CPU time,
# then each side's mean and median, and how many rounds B won. Builds go to target/ab, so the
# ordinary build is left alone.
set -euo pipefail
source "$(dirname "$0")/env.sh"

[[ $# -ge 2 ]] || die "usage: scripts/bench-ab.sh REV_A REV_B [--rounds N] [-- benchmark arguments]"
revs=("$1" "$2")
shift 2
rounds=3
count=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    --count) count=true; shift ;;
    --) shift; break ;;
    *) die "unknown argument $1 (benchmark arguments go after --)" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive number, not $rounds"
if $count; then
  command -v valgrind >/dev/null && command -v cg_diff >/dev/null ||
    die "--count needs valgrind (apt-get install valgrind)"
  [[ $# -gt 0 ]] || set -- --nodes 300 --pods 6000
fi

ab="$ROOT/target/ab"
mkdir -p "$ab"

# Builds the benchmark at one revision into target/ab/bin-<side>.
build() {
  local rev="$1" side="$2" src="$ab/src-$2"
  rm -rf "$src"
  mkdir -p "$src"
  if [[ "$rev" == WORKTREE ]]; then
    # Tracked and new files as they are now, without build output or ignored files.
    git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents {} "$src" 2>/dev/null || true
  else
    git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || die "no such revision: $rev"
    git archive "$rev" | tar -x -C "$src"
  fi
  local exe
  exe="$(cd "$src" && CARGO_TARGET_DIR="$ab/build" cargo bench --bench scale --no-run --message-format=json |
    grep -o '"executable":"[^"]*/deps/scale-[^"]*"' | sed 's/.*:"//; s/"$//' | tail -n 1 || true)"
  [[ -x "$exe" ]] || die "the benchmark at $rev did not build"
  cp "$exe" "$ab/bin-$side"
}

say "building A (${revs[0]})"
build "${revs[0]}" a
say "building B (${revs[1]})"
build "${revs[1]}" b

# One run of a side under cachegrind: prints its counts and keeps its output file. The second
# core's helpers are left out (prefault only moves page faults; valgrind runs one thread at a
# time anyway).
counted() {
  local side="$1" out
  shift
  out="$(valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$ab/cg-$side" \
    "$ab/bin-$side" --bench --no-prefault "$@" 2>&1)" || die "the counted run of $side failed: $(tail -n 3 <<<"$out")"
  # cachegrind's summary line for a count, e.g. `==123== I   refs:      2,457,093,293`.
  total() { grep -o "$1: *[0-9,]*" <<<"$out" | grep -o '[0-9,]*$' | tr -d ,; }
  local writes
  writes="$(grep -o '[0-9]* etcd writes' <<<"$out" | head -n 1)"
  printf '%s %s %s %s %s\n' "$side" "$(total 'I *refs')" "$(total 'D1 *misses')" "$(total 'LL misses')" "${writes%% *}"
}

if $count; then
  say "counting A and B under cachegrind ($*)"
  { counted a "$@"; counted b "$@"; } >"$ab/counts.txt"
  awk -v a="${revs[0]}" -v b="${revs[1]}" '
    { ir[$1] = $2; d1[$1] = $3; ll[$1] = $4; w[$1] = $5 }
    END {
      rev["a"] = a; rev["b"] = b
      for (i = 1; i <= 2; i++) {
        s = i == 1 ? "a" : "b"
        printf "%s %-12s %15.0f instructions %13.0f D1 misses %11.0f LL misses  %s writes\n", toupper(s), rev[s], ir[s], d1[s], ll[s], w[s]
      }
      printf "B against A: instructions %+.2f%%, D1 misses %+.2f%%, LL misses %+.2f%%\n",
        100 * (ir["b"] / ir["a"] - 1), 100 * (d1["b"] / d1["a"] - 1), 100 * (ll["b"] / ll["a"] - 1)
      if (w["a"] != w["b"]) print "(the two sides wrote differently: they simulated different things)"
    }' "$ab/counts.txt"
  echo "functions whose instruction counts changed most (B minus A):"
  cg_diff "$ab/cg-a" "$ab/cg-b" >"$ab/cg-diff" 2>/dev/null
  # (cg_annotate lists them by the size of the change, either way.)
  cg_annotate --show=Ir --sort=Ir "$ab/cg-diff" 2>/dev/null |
    awk '/file:function/ { on = 1; next } on && $1 ~ /^-?[0-9,]+$/ { print; if (++n == 12) exit }'
  exit 0
fi

results="$ab/results.txt"
: >"$results"
for round in $(seq "$rounds"); do
  for side in a b; do
    out="$("$ab/bin-$side" --bench "$@" 2>&1)" || die "the run of $side failed: $(tail -n 3 <<<"$out")"
    wall="$(grep -o '[0-9.]*s wall from apply' <<<"$out" | cut -d's' -f1)"
    thread="$(grep -o "thread: [0-9.]*s user" <<<"$out" | grep -o '[0-9.]*' || echo 0)"
    printf 'round %d  %s  %6.2fs wall from apply  %6.2fs simulation thread\n' "$round" "$side" "$wall" "$thread"
    echo "$round $side $wall $thread" >>"$results"
  done
done

awk -v a="${revs[0]}" -v b="${revs[1]}" '
  { wall[$2, ++n[$2]] = $3; thread[$2, n[$2]] = $4; byround[$1, $2] = $3 }
  function median(side, what,   i, j, t, v, k) {
    k = n[side]
    for (i = 1; i <= k; i++) v[i] = (what == "wall") ? wall[side, i] : thread[side, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
  }
  function mean(side, what,   i, s) {
    for (i = 1; i <= n[side]; i++) s += (what == "wall") ? wall[side, i] : thread[side, i]
    return s / n[side]
  }
  END {
    for (r = 1; r <= n["a"]; r++) if (byround[r, "b"] < byround[r, "a"]) won++
    printf "A %-12s wall mean %.2fs median %.2fs; thread mean %.2fs median %.2fs\n", a, mean("a", "wall"), median("a", "wall"), mean("a", "thread"), median("a", "thread")
    printf "B %-12s wall mean %.2fs median %.2fs; thread mean %.2fs median %.2fs\n", b, mean("b", "wall"), median("b", "wall"), mean("b", "thread"), median("b", "thread")
    printf "B was quicker in %d of %d rounds\n", won, n["a"]
  }' "$results"
