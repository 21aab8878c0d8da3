#!/bin/sh
# Every shell command the book shows copies and pastes as one command, and no translation is
# quoted by hand (tools/check-listings): first the check is shown able to fail on a planted
# chapter, then it runs over book/*.nw and book.tex.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

cat > "$dir/planted.nw" <<'NW'
Run
\begin{quote}[[./transformer copy --d-model 32 --heads 2]]\end{quote}
and then
\begin{verbatim}
./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40
                   --norm post --rate 0.001 --seed 2
echo "unbalanced
\end{verbatim}
\begin{verbatim}
make figure NAME=learning-rate ARGS="--curve w=2000 --curve w=4000 --curve w=8000 --curve w=16000"
\end{verbatim}
Greedy decoding writes ``a man in an orange hat is raking something.'' here.
NW
tools/check-listings "$dir/planted.nw" > "$dir/out" 2>&1 && {
  echo "check-listings: a planted chapter passed" >&2; exit 1; }
for what in 'planted.nw:2: a command set as' 'planted.nw:6: this line continues' \
            'planted.nw:4: the shell block does not parse' 'planted.nw:10: a command line of' \
            'planted.nw:12: a translation quoted by hand'; do
  grep -qF -- "$what" "$dir/out" || {
    echo "check-listings: planted '$what' not reported" >&2; cat "$dir/out" >&2; exit 1; }
done

cat > "$dir/clean.nw" <<'NW'
\begin{verbatim}
./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 \
                   --norm post --rate 0.001 --seed 2
\end{verbatim}
\begin{verbatim}
mpirun noticed that process rank 1 with PID 0 on node HOST exited on
signal 9 (Killed).
\end{verbatim}
Greedy decoding writes ``\quoteline{figures/multi30k/test2016.greedy.en}{1}'', and
[[transformer copy]] exits with status 1 unless every decoding is exact, [[make copy-full]]
NW
tools/check-listings "$dir/clean.nw" > "$dir/out" 2>&1 || {
  echo "check-listings: a clean chapter was rejected" >&2; cat "$dir/out" >&2; exit 1; }

tools/check-listings book/*.nw book/book.tex
echo "check-listings: planted listings and quotes caught; book/*.nw and book.tex clean"
