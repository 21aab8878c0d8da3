#!/bin/sh
# Program output that the book quotes, never typed (see tools/numbers/README):
#   \quoteline{FILE}{N}, line N of a recorded file (a translation of figures/multi30k/, a
#     reference of data/multi30k/), for every such use in book/*.nw; the build fails when
#     the file or the line is missing, so a quote is always a line of the output it names;
#   \engineCopyBaselineBleu and \engineCopyBaselineSignature, the two lines that
#     `transformer bleu` prints for the German test set scored as if it were English.
set -eu
T=${TRANSFORMER:-./transformer}
tex='function tex(s) {
       gsub(/\\/, "\001", s); gsub(/[&%$#_{}]/, "\\\\&", s)
       gsub(/~/, "\\textasciitilde{}", s); gsub(/\^/, "\\textasciicircum{}", s)
       gsub(/\001/, "\\textbackslash{}", s); return s }'

printf '%s\n' '\newcommand{\quoteline}[2]{\csname ql@#1@#2\endcsname}'
grep -oh '\\quoteline{[^}]*}{[0-9]*}' book/*.nw | sort -u | while IFS= read -r use; do
  file=${use#\\quoteline\{}; file=${file%%\}*}
  n=${use##*\{}; n=${n%\}}
  [ -f "$file" ] || { echo "tools/numbers/quotes.sh: $use: no file $file" >&2; exit 1; }
  [ "$(wc -l < "$file")" -ge "$n" ] || { echo "tools/numbers/quotes.sh: $use: $file has no line $n" >&2; exit 1; }
  sed -n "${n}p" "$file" | awk -v f="$file" -v n="$n" "$tex"'
    { printf "\\expandafter\\def\\csname ql@%s@%d\\endcsname{%s}\n", f, n, tex($0) }'
done

"$T" bleu data/multi30k/test2016.de data/multi30k/test2016.en | awk "$tex"'
  /^BLEU = / { printf "\\newcommand{\\engineCopyBaselineBleu}{%s}\n", tex($0); bleu = 1 }
  /^nrefs:/ { printf "\\newcommand{\\engineCopyBaselineSignature}{%s}\n", tex($0); sig = 1 }
  END { if (!bleu || !sig) { print "tools/numbers/quotes.sh: transformer bleu printed no score or signature" > "/dev/stderr"; exit 1 } }'
