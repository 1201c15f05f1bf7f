#!/usr/bin/env bash
# scripts/bench-ab.sh — the scale benchmark at two revisions, run alternately, so that a change
# is judged against its base in the same sitting (this project's 2-core machines drift by a
# tenth and more within an hour: runs from different sittings are not comparable).
#
#   bash scripts/bench-ab.sh HEAD~1 HEAD                        # full size, three rounds
#   bash scripts/bench-ab.sh main WORKTREE --rounds 6 -- --nodes 1000 --pods 30000
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
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument $1 (benchmark arguments go after --)" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive number, not $rounds"

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
