#!/bin/sh
# The program's modules link one way (tools/check-link-cycles): first the check is shown able
# to fail on a planted cycle (two objects that call each other, beside a third that only
# calls), and to pass on the same objects without it; then it runs over the objects of the
# program (its library, its commands and main.o), given as arguments by make.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat > "$dir/low.c" <<'C'
int high_call(void);
int low_call(void) { return high_call(); }
C
cat > "$dir/high.c" <<'C'
int low_call(void);
int high_call(void) { return 1; }
int top_call(void) { return low_call(); }
C
cat > "$dir/apart.c" <<'C'
int high_call(void);
int apart_call(void) { return high_call(); }
C
for f in low high apart; do ${CC:-cc} -c -o "$dir/$f.o" "$dir/$f.c"; done
tools/check-link-cycles "$dir/low.o" "$dir/high.o" "$dir/apart.o" > "$dir/out" 2>&1 && {
  echo "check-link-cycles: a planted cycle passed" >&2; exit 1; }
grep -q 'a cycle in the link graph: high, low$' "$dir/out" \
  && grep -q 'high uses low_call of low' "$dir/out" && grep -q 'low uses high_call of high' "$dir/out" \
  && ! grep -q apart "$dir/out" || {
  echo "check-link-cycles: the planted cycle was not reported as it is" >&2; cat "$dir/out" >&2; exit 1; }
# the same modules, the call back removed: one way
printf 'int high_call(void) { return 1; }\n' > "$dir/high.c"
${CC:-cc} -c -o "$dir/high.o" "$dir/high.c"
tools/check-link-cycles "$dir/low.o" "$dir/high.o" "$dir/apart.o" > "$dir/out" 2>&1 || {
  echo "check-link-cycles: a graph without a cycle failed" >&2; cat "$dir/out" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: tests/check-link-cycles.sh OBJECT.o..." >&2; exit 2; }
tools/check-link-cycles "$@"
