#!/bin/sh
# The book types no reference by hand (tools/check-references): first the check is shown
# able to fail, on a planted chapter and a planted .aux, then it runs over book/*.nw and
# the PDF's .aux (where `make` has built the PDF).
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# Planted: each line holds one reference a hand typed, and must be reported.
cat > "$dir/planted.nw" <<'NW'
\chapter{A chapter}
\section{Results}
\label{sec:planted}
As Exercise~3 shows, and Section 4.2 says,
Table~9.1 and Figure~13.1 agree with eq.~(3.5) and Part~IV.
The next chapter trains it; a later chapter decodes; the next section says why.
The box of Section~\ref{sec:planted} compares the two.
NW
tools/check-references "$dir/planted.nw" > "$dir/out" 2>&1 && {
  echo "check-references: a planted chapter passed" >&2; exit 1; }
for what in 'Exercise~3' 'Section 4.2' 'Table~9.1' 'Figure~13.1' 'eq.~(3.5)' 'Part~IV' \
            'The next chapter' 'a later chapter' 'the next section' \
            'Section \\ref{sec:planted} cited inside itself'; do
  grep -q -- "$what" "$dir/out" || {
    echo "check-references: planted '$what' not reported" >&2; cat "$dir/out" >&2; exit 1; }
done
printf '%s\n' '\newlabel{ex:planted}{{3}{12}{}{}{}}' > "$dir/planted.aux"
tools/check-references --aux "$dir/planted.aux" "$dir/planted.nw" > "$dir/out" 2>&1 || true
grep -q 'exercise ex:planted prints as "3", without its chapter' "$dir/out" || {
  echo "check-references: a planted exercise label without its chapter not reported" >&2
  cat "$dir/out" >&2; exit 1; }

# Not typed: labels, other works' tables, code and comments pass.
cat > "$dir/clean.nw" <<'NW'
\chapter{A chapter}
As Exercise~\ref{ex:a} shows (Section~\ref{sec:b}), after Table~1 of the paper~\cite{x}
and the paper's Figure~2. % Exercise 3 in a comment
[[Section 4 of the code]] is quoted code.
<<a chunk>>=
/* Exercise 3, the next chapter */
@ The end.
NW
tools/check-references "$dir/clean.nw" > "$dir/out" 2>&1 || {
  echo "check-references: a clean chapter was rejected" >&2; cat "$dir/out" >&2; exit 1; }

if [ -f build/pdf/transformer.aux ]; then
  tools/check-references --aux build/pdf/transformer.aux book/*.nw
  # The course plan's rule, about 25 pages of reading a lecture at most, counted in the PDF;
  # shown to fail first on a planted plan that gives one lecture a whole long chapter.
  printf '%s\n' '\begin{tabular}{lll}' '1 & x & \ref{sec:config}--\ref{sec:parity} & y \\' \
    '\end{tabular}' '\label{tab:lectures}' > "$dir/plan.nw"
  if tools/lecture-pages --max 26 build/pdf/transformer.aux "$dir/plan.nw" > /dev/null 2>&1; then
    echo "check-references: a planted lecture of a whole long chapter passed" >&2; exit 1
  fi
  tools/lecture-pages --max 26 build/pdf/transformer.aux book/intro.nw > "$dir/pages"
  echo "check-references: planted references caught; book/*.nw and the PDF's exercise numbers clean;" \
       "lectures of $(sort -k2n "$dir/pages" | head -1 | cut -d' ' -f2) to $(sort -k2n "$dir/pages" | tail -1 | cut -d' ' -f2) pages"
else
  tools/check-references book/*.nw
  echo "check-references: planted references caught; book/*.nw clean (no PDF built: its .aux unchecked)"
fi
