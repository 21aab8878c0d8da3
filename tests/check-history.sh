#!/bin/sh
# The book tells no history of itself and keeps provenance out of the prose
# (tools/check-history): first the check is shown able to fail on a planted chapter, then it
# runs over book/*.nw.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

cat > "$dir/planted.nw" <<'NW'
Its first version kept two files; as the trainer stood before this chapter,
the runs before this one chose 2, and a trainer some commits later agreed.
The run was made at commit 4011e85 on 2026-11-24, on an AMD EPYC;
mpirun noticed that process rank 1 on node vm exited, as issue~19 reported.
The program is tangled in the order its chapters were written; [[.ci/run]] calls it.
A phrase cut by the line break counts too: the program as it
stood is not the subject. Four goals were set before the work began, in the order in which the
chapters were written.
NW
tools/check-history "$dir/planted.nw" > "$dir/out" 2>&1 && {
  echo "check-history: a planted chapter passed" >&2; exit 1; }
for what in 'first version' 'before this chapter' 'the runs before' 'commits later' '4011e85' \
            '2026-11-24' 'EPYC' 'on node v' 'issue~19' 'order its chapters were written' '.ci/run' \
            'as it stood' 'set before the work' 'order in which the chapters were written'; do
  grep -qF -- "$what" "$dir/out" || {
    echo "check-history: planted '$what' not reported" >&2; cat "$dir/out" >&2; exit 1; }
done

cat > "$dir/clean.nw" <<'NW'
The reference version of the kernel, on machine~A (Table~\ref{tab:provenance}); sacreBLEU's
issue 141 is a citation, 1e-9 and bf16 are no commits. % first version, in a comment
<<a chunk>>=
/* the first version, 4011e85 */
@ The end.
NW
tools/check-history "$dir/clean.nw" > "$dir/out" 2>&1 || {
  echo "check-history: a clean chapter was rejected" >&2; cat "$dir/out" >&2; exit 1; }

tools/check-history book/*.nw
echo "check-history: planted history and provenance caught, book/*.nw clean"
