#!/usr/bin/env bash
# scripts/k8s-examples.sh — issue #30's acceptance measure: kubernetes.io's example manifests
# applied unchanged, each to a fresh simulated cluster, and judged against what a fresh real
# v1.35 cluster does with them (tests/k8s-examples/EXPECTED.tsv).
#
#   scripts/k8s-examples.sh            the sample kept in tests/k8s-examples (see its README)
#   scripts/k8s-examples.sh DIR        every *.yaml under DIR (a checkout's content/en/examples)
#   scripts/k8s-examples.sh GITDIR     a kubernetes/website git directory (e.g. a `fetch` mirror):
#                                      content/en/examples of its HEAD
#   -v                                 print each example's observation, not only the exceptions
#
# For each file: a fresh sandbox (`kubeloop --state`), `kubectl apply -f -`, `sim settle`,
# `sleep 90s`, then the pods and PersistentVolumeClaims the file made. Observed as one of
#   refused: <kubectl's first error line>     (some object of the file was not created)
#   converged                                 every new pod Running n/n without restarts or
#                                             Completed, every claim Bound, every Job Complete
#                                             (or the file made none of these)
#   stuck: <pod STATUS READY [restarts:N], pvc:… STATUS, job:… STATUS, …>  otherwise
# and judged against EXPECTED.tsv (path, expectation, owner, why):
#   excluded        a fresh real cluster refuses it (or it is no manifest): outside the figure;
#                   listed when the sandbox accepts it all the same
#   converges       a real cluster converges it
#   stuck:REGEX     a real cluster leaves it stuck; the observation must match REGEX
#   unjudged        its outcome depends on more than a fresh cluster (the node's size or
#                   configuration): observed and listed, outside the figure
# An example passes when it applies and its observation meets the expectation. The owner column
# names the helper building what it lacks ("ingress", "netpol", "vap", "hpa") or is "-".
# The last line is the figure: "figure: P/N accepted examples pass (X%)".
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERBOSE=0
if [ "${1:-}" = "-v" ]; then VERBOSE=1; shift; fi
SRC="${1:-$ROOT/tests/k8s-examples}"
EXPECTED="$ROOT/tests/k8s-examples/EXPECTED.tsv"
BIN="$ROOT/target/debug/kubeloop"
(cd "$ROOT" && cargo build --quiet --bin kubeloop) || exit 1

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
if [ -f "$SRC/HEAD" ] || [ -f "$SRC/packed-refs" ]; then
  git --git-dir="$SRC" archive HEAD content/en/examples | tar -x -C "$WORK" || exit 1
  SRC="$WORK/content/en/examples"
fi
[ -d "$SRC" ] || { echo "no such directory: $SRC" >&2; exit 1; }

k() { "$BIN" --state "$WORK/state.json" "$@"; }

# The pods/claims of a fresh sandbox, to tell the file's own apart.
rm -f "$WORK/state.json"
k kubectl get pods -A --no-headers 2>/dev/null | awk '{print $1"/"$2}' | sort > "$WORK/base-pods"

observe() { # FILE → one line on stdout
  local file="$1" out
  rm -f "$WORK/state.json"
  out="$(k kubectl apply -f - < "$file" 2>&1)"
  local err
  # Anything but an object's "created" line (or a warning) is kubectl's or the server's refusal.
  err="$(printf '%s\n' "$out" | grep -v -E '^Warning: | (created|configured|unchanged)$' | grep -m1 . || true)"
  if [ -n "$err" ]; then echo "refused: $err"; return; fi
  k sim settle > /dev/null 2>&1
  k sleep 90s > /dev/null 2>&1
  local pods pvcs
  pods="$(k kubectl get pods -A --no-headers 2>/dev/null | awk '{print $1"/"$2" "$4" "$3" "$5}' \
          | sort | join -v1 - "$WORK/base-pods" 2>/dev/null)"
  pvcs="$(k kubectl get pvc -A --no-headers 2>/dev/null | awk '{print "pvc:"$1"/"$2" "$3}')"
  jobs="$(k kubectl get jobs -A --no-headers 2>/dev/null | awk '{print "job:"$1"/"$2" "$3}')"
  local bad
  bad="$( { printf '%s\n' "$pods" | awk 'NF { split($3, r, "/");
              if ($2 == "Completed" || ($2 == "Running" && r[1] == r[2] && $4 == "0")) next;
              print $1" "$2" "$3 ($4 == "0" ? "" : " restarts:"$4) }';
            printf '%s\n' "$pvcs" | awk 'NF && $2 != "Bound" { print $1" "$2 }';
            printf '%s\n' "$jobs" | awk 'NF && $2 != "Complete" { print $1" "$2 }'; } | paste -sd, -)"
  if [ -z "$bad" ]; then echo "converged"; else echo "stuck: $bad"; fi
}

total=0; excluded=0; judged=0; passed=0; unjudged=0
exceptions=""; excl_list=""; unjudged_list=""; lenient=""
while IFS= read -r file; do
  rel="${file#"$SRC"/}"
  total=$((total + 1))
  line="$(awk -F'\t' -v p="$rel" '$1 == p' "$EXPECTED")"
  expect="$(printf '%s' "$line" | cut -f2)"
  owner="$(printf '%s' "$line" | cut -f3)"
  why="$(printf '%s' "$line" | cut -f4)"
  obs="$(observe "$file")"
  if [ "$expect" = "excluded" ]; then
    excluded=$((excluded + 1)); excl_list+="  $rel — $why"$'\n'
    case "$obs" in refused:*) ;; *) lenient+="  $rel: $obs — a real cluster: $why"$'\n' ;; esac
    continue
  fi
  [ "$VERBOSE" = 1 ] && echo "$rel: $obs"
  if [ -z "$expect" ] || [ "$expect" = "unjudged" ]; then
    [ -n "$why" ] && obs="$obs — $why"
    unjudged=$((unjudged + 1)); unjudged_list+="  $rel: $obs"$'\n'; continue
  fi
  judged=$((judged + 1))
  ok=0
  case "$expect" in
    converges) [ "$obs" = "converged" ] && ok=1 ;;
    stuck:*) re="${expect#stuck:}"
             case "$obs" in stuck:*) printf '%s' "$obs" | grep -qE "$re" && ok=1 ;; esac ;;
  esac
  if [ "$ok" = 1 ]; then passed=$((passed + 1))
  else exceptions+="  $rel [${owner:--}] expected $expect; observed $obs${why:+ — $why}"$'\n'; fi
done < <(find "$SRC" -name '*.yaml' -o -name '*.yml' | sort)

echo "examples: $total files; excluded (a real cluster refuses them): $excluded; judged: $judged; unjudged: $unjudged"
[ -n "$excl_list" ] && [ "$VERBOSE" = 1 ] && printf 'excluded:\n%s' "$excl_list"
[ -n "$exceptions" ] && printf 'exceptions:\n%s' "$exceptions"
[ -n "$lenient" ] && printf 'accepted here though a real cluster refuses them (outside the figure):\n%s' "$lenient"
[ -n "$unjudged_list" ] && printf 'unjudged (no expectation, or outside the figure):\n%s' "$unjudged_list"
pct="$(awk -v p="$passed" -v n="$judged" 'BEGIN { if (n) printf "%.1f", 100 * p / n; else print "0" }')"
echo "figure: $passed/$judged accepted examples pass ($pct%)"
