#!/bin/sh
# The numbers of the translator (the translation chapter's Results and Getting to 41, and
# every chapter that quotes them), computed from the recorded runs in figures/multi30k/:
#   log.csv, run.txt         the run of `make multi30k` that the book reports (make
#                            multi30k-figures copies them), and its translations of
#                            test2016 (beam 4 and greedy), of val and test2016 at each
#                            length penalty (alpha/), and the shipped model's (shipped.*);
#   spread.txt               the runs of today's recipe (seeds, machines) and their files;
#   ablation.txt             the runs of Getting to 41's table, each with its log and
#                            translations;
# BLEU is computed here, by `transformer bleu` on the recorded translations.
set -eu
T=${TRANSFORMER:-./transformer}
M=${MT_FIGURES:-figures/multi30k}
LIB="$(cat tools/numbers/lib.awk)
"

# macro NAME TEXT: \NAME typesets TEXT (and a space after it, xspace); plain: without xspace.
macro() { printf '\\newcommand{\\%s}{%s\\xspace}\n' "$1" "$2"; }
plain() { printf '\\newcommand{\\%s}{%s}\n' "$1" "$2"; }
withargs() { printf '\\newcommand{\\%s}[%s]{%s}\n' "$1" "$2" "$3"; }

# bleu HYP [--lowercase] [SET] [score|ratio]: the score (two decimals) or the length ratio of
# HYP against data/multi30k/SET.en (default test2016); each file is scored once, and its
# output kept for the other macros that read it.
scores=$(mktemp -d); trap 'rm -rf "$scores"' EXIT
bleu() {
  kept=$scores/$(printf '%s' "$1 ${2:-} ${3:-test2016}" | tr '/ ' '__')
  [ -f "$kept" ] || "$T" bleu "$1" data/multi30k/"${3:-test2016}".en ${2:-} > "$kept"
  awk -v what="${4:-score}" '
    /^BLEU/ { for (i = 1; i <= NF; i++) if ($i == "ratio") r = $(i + 2); s = $3 }
    END { print (what == "ratio" ? r : s) }' "$kept"
}

# cased HYP [SET]: the cased score (sacreBLEU's default) of HYP, by tools/bleu-cased (a file
# written in lowercase is given its capitals first); kept as bleu keeps its scores.
cased() {
  kept=$scores/cased.$(printf '%s' "$1 ${2:-test2016}" | tr '/ ' '__')
  [ -f "$kept" ] || TRANSFORMER="$T" tools/bleu-cased "$1" data/multi30k/"${2:-test2016}".en > "$kept"
  awk '/^BLEU/ { print $3 }' "$kept"
}

# log_macros PREFIX LOG: epochs, updates, minutes, best epoch and loss, pace of one log.
log_macros() {
  awk -F, -v p="$1" "$LIB"'
    NR > 1 { e = $1; step = $2; sec = $6; tok += $7; n++
             if (best == "" || $4 < best) { best = $4; at = $1 }
             if ($1 == 1) first = $4
             val[$1] = $4 }
    END {
      def(p "Epochs", e); def(p "Updates", grouped(step)); def(p "Minutes", fixed(sec / 60, 1))
      def(p "SecondsPerUpdate", fixed(sec / step, 2)); def(p "TokensPerSecond", grouped(int(tok / n + 0.5)))
      def(p "BestEpoch", at); def(p "BestValidation", fixed(best, 4))
      def(p "FirstValidation", fixed(first, 4)); def(p "LastValidation", fixed(val[e], 4))
    }' "$2"
}

# The run that the book reports.
log_macros mt $M/log.csv
awk "$LIB"'
  { key = $1; sub(/:$/, "", key); $1 = ""; sub(/^ /, ""); v[key] = $0 }
  END {
    # (the run'"'"'s machine, commit and date: the appendix of tools/provenance, not the prose)
    if (v["end_seconds"] != "") def("mtWallMinutes", fixed((v["end_seconds"] - v["start_seconds"]) / 60, 1))
  }' $M/run.txt
macro mtBleuBeam "$(bleu $M/test2016.beam4.en --lowercase)"
macro mtBleuBeamCased "$(cased $M/test2016.beam4.en)"
macro mtBleuGreedy "$(bleu $M/test2016.greedy.en --lowercase)"
macro mtBleuGreedyCased "$(cased $M/test2016.greedy.en)"
macro mtBleuShipped "$(bleu $M/shipped.test2016.beam4.en --lowercase)"
macro mtBleuShippedCased "$(cased $M/shipped.test2016.beam4.en)"
macro mtBleuShippedGreedy "$(bleu $M/shipped.test2016.greedy.en --lowercase)"
head -100 $M/shipped.test2016.greedy.en > "${TMPDIR:-/tmp}/shipped100.$$"
head -100 data/multi30k/test2016.en > "${TMPDIR:-/tmp}/ref100.$$"
macro mtBleuShippedGreedyHundred "$("$T" bleu "${TMPDIR:-/tmp}/shipped100.$$" "${TMPDIR:-/tmp}/ref100.$$" --lowercase | awk '/^BLEU/ { print $3 }')"
rm -f "${TMPDIR:-/tmp}/shipped100.$$" "${TMPDIR:-/tmp}/ref100.$$"
macro mtBeamDiffersLines "$(paste $M/test2016.beam4.en $M/test2016.greedy.en | awk -F '\t' '$1 != $2 { n++ } END { print n + 0 }')"
macro mtTestLines "$(awk 'END { printf "%d", NR }' data/multi30k/test2016.de | awk "$LIB"'{ print grouped($1) }')"

# The model: parameters (from the shipped file's tensor shapes) and the pieces of its vocabulary.
header=$(od -An -t u8 -N8 data/multi30k-de-en.safetensors | tr -d ' ')
head -c $((8 + header)) data/multi30k-de-en.safetensors | tail -c "$header" \
  | grep -o '"[a-z_.0-9]*":{"dtype":"[A-Z0-9]*","shape":\[[0-9,]*\]' \
  | awk -F'[][]' "$LIB"'
      { n = split($2, d, ","); c = 1; for (i = 1; i <= n; i++) c *= d[i]; total += c
        if ($1 ~ /tgt_embed/) vocab = d[1] }
      END { def("mtParameters", grouped(total)); def("mtParametersMillion", fixed(total / 1e6, 1))
            def("mtVocab", grouped(vocab)) }'
size=$(wc -c < data/multi30k-de-en.safetensors)
macro mtModelMegabytes "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')"

# The length penalty, chosen on the validation set: BLEU and length ratio at each alpha.
best_alpha=; best_val=0
row_val=; row_test=; row_ratio=; head_row=
for a in 0 0.6 1 1.5 2 2.5; do
  v=$(bleu $M/alpha/val.alpha$a.en --lowercase val)
  t=$(bleu $M/alpha/test2016.alpha$a.en --lowercase)
  r=$(bleu $M/alpha/test2016.alpha$a.en --lowercase test2016 ratio)
  if awk -v v="$v" -v b="$best_val" 'BEGIN { exit !(v > b) }'; then best_val=$v; best_alpha=$a; fi
  head_row="$head_row & $a"; row_val="$row_val & $v"; row_test="$row_test & $t"; row_ratio="$row_ratio & $r"
done
macro mtAlphaBest "$best_alpha"
plain mtAlphaHead "\$\\alpha\$$head_row"
plain mtAlphaVal "BLEU lowercased, validation set (val)$row_val"
plain mtAlphaTest "BLEU lowercased, test2016$row_test"
plain mtAlphaRatio "test2016: output / reference length$row_ratio"
# Each alpha's validation output against the chosen one's by paired bootstrap resampling
# (lowercased, as the row above; transformer bleu --paired-bs with its defaults): a row of
# p-values, -- under the chosen alpha; and the alphas whose difference is not significant.
files=; for a in 0 0.6 1 1.5 2 2.5; do [ "$a" = "$best_alpha" ] || files="$files $M/alpha/val.alpha$a.en"; done
"$T" bleu --paired-bs --lowercase $M/alpha/val.alpha$best_alpha.en $files data/multi30k/val.en \
  | awk -v best="$best_alpha" -v M="$M" "$LIB"'
    /^p = / { sub(/:$/, "", $3); p[file] = $3 }
    !/^(BLEU|p =|nrefs|baseline)/ { file = $0 }
    END { row = "$p$ against $\\alpha = " best "$ (val)"; near = ""; lower = ""
          n = split("0 0.6 1 1.5 2 2.5", a, " ")
          for (i = 1; i <= n; i++) {
            f = M "/alpha/val.alpha" a[i] ".en"
            if (a[i] == best) { row = row " & --"; continue }
            if (!(f in p)) { print "multi30k.sh: no p-value for " f > "/dev/stderr"; exit 1 }
            row = row " & " p[f]; if (p[f] >= 0.05) same[++m] = a[i]; else worse[++w] = a[i] }
          for (i = 1; i <= w; i++) lower = lower (i == 1 ? "" : i == w ? " and " : ", ") worse[i]
          for (i = 1; i <= m; i++) near = near (i == 1 ? "" : i == m ? " and " : ", ") same[i]
          # The text says that no penalty and the 0.6 of the paper are significantly worse.
          if (p[M "/alpha/val.alpha0.en"] >= 0.05 || p[M "/alpha/val.alpha0.6.en"] >= 0.05) {
            print "multi30k.sh: alpha 0 or 0.6 no longer differs significantly on val; the text says both do" > "/dev/stderr"; exit 1 }
          printf "\\newcommand{\\mtAlphaP}{%s}\n", row
          def("mtAlphaNotSignificant", near == "" ? "none" : near); def("mtAlphaSignificant", lower) }'
# The same on test2016, as the table's last row (read, not chosen on: lowercased likewise).
files=; for a in 0 0.6 1 1.5 2 2.5; do [ "$a" = "$best_alpha" ] || files="$files $M/alpha/test2016.alpha$a.en"; done
"$T" bleu --paired-bs --lowercase $M/alpha/test2016.alpha$best_alpha.en $files data/multi30k/test2016.en \
  | awk -v best="$best_alpha" -v M="$M" '
    /^p = / { sub(/:$/, "", $3); p[file] = $3 }
    !/^(BLEU|p =|nrefs|baseline)/ { file = $0 }
    END { row = "$p$ against $\\alpha = " best "$ (test2016)"
          n = split("0 0.6 1 1.5 2 2.5", a, " ")
          for (i = 1; i <= n; i++) {
            f = M "/alpha/test2016.alpha" a[i] ".en"
            if (a[i] == best) { row = row " & --"; continue }
            if (!(f in p)) { print "multi30k.sh: no p-value for " f > "/dev/stderr"; exit 1 }
            row = row " & " p[f] }
          # The text says that there too no penalty and 0.6 score significantly lower.
          if (p[M "/alpha/test2016.alpha0.en"] >= 0.05 || p[M "/alpha/test2016.alpha0.6.en"] >= 0.05) {
            print "multi30k.sh: alpha 0 or 0.6 no longer differs significantly on test2016; the text says both do" > "/dev/stderr"; exit 1 }
          printf "\\newcommand{\\mtAlphaTestP}{%s}\n", row }'
macro mtBleuPaperAlpha "$(bleu $M/alpha/test2016.alpha0.6.en --lowercase)"
macro mtBleuPaperAlphaCased "$(cased $M/alpha/test2016.alpha0.6.en)"
macro mtBleuNoPenalty "$(bleu $M/alpha/test2016.alpha0.en --lowercase)"

# The spread: every run of today's recipe (spread.txt: name | seed | machine | log | test2016
# beam 4 translations), as table rows, and their mean, lowest and highest BLEU (cased); each
# run after the first tested against the first by paired bootstrap resampling (cased, the
# program's defaults: its p-value a column); and how many runs of each of two recipes would
# show a difference of 0.3 BLEU, from the runs' standard deviation.
capitals() {   # capitals FILE OUT: FILE with its capitals (transformer recase if lowercase)
  if grep -q '[A-Z]' "$1"; then cp "$1" "$2"; else "$T" recase < "$1" > "$2"; fi
}
first=
grep -v '^#' $M/spread.txt | while IFS='|' read -r name seed machine log hyp; do
  log=$(echo $log); hyp=$(echo $hyp)
  s=$(bleu $M/$hyp --lowercase); c=$(cased $M/$hyp)
  p=--
  if [ -z "$first" ]; then first=${TMPDIR:-/tmp}/spread-first.$$; capitals $M/$hyp "$first"
  else
    capitals $M/$hyp "$first.other"
    p=$("$T" bleu --paired-bs "$first" "$first.other" data/multi30k/test2016.en \
        | awk '/^p = / { sub(/:$/, "", $3); print $3 }')
  fi
  name=$(echo $name) seed=$(echo $seed) machine=$(echo $machine) s=$s c=$c p=$p awk -F, "$LIB"'
    BEGIN { name = ENVIRON["name"]; seed = ENVIRON["seed"]; machine = ENVIRON["machine"]; s = ENVIRON["s"]; c = ENVIRON["c"] }
    NR > 1 { e = $1; sec = $6; if (best == "" || $4 < best) best = $4 }
    END { printf "%s|%s|%s|%d|%s|%s|%s|%s|%s\n", name, seed, machine, e, fixed(sec / 60, 1), fixed(best, 4), c, s, ENVIRON["p"] }' $M/$log
done > "${TMPDIR:-/tmp}/spread.$$"
rm -f "${TMPDIR:-/tmp}/spread-first.$$" "${TMPDIR:-/tmp}/spread-first.$$.other"
# The gap of cased training (the chapter Capital letters, tools/numbers/cased.sh) in units of
# the runs' standard deviation: the recaser's run on machine C less the cased run (cased BLEU).
casedgap=$(awk -v a="$(cased $M/spread/machine-c/test2016.beam4.en)" \
               -v b="$(cased $M/cased-training/test2016.beam4.en)" 'BEGIN { print a - b }')
awk -F'|' -v casedgap="$casedgap" "$LIB"'
  { rows = rows sprintf("%s & %s & %s & %s & %s & %s & %s & %s & %s \\\\\n", $1, $2, $3, $4, $5, $6, $7, $8, $9)
    n++; sum += $7; squares += $7 * $7; if (n == 1 || $7 < lo) lo = $7; if (n == 1 || $7 > hi) hi = $7
    if ($7 >= 41) reach++; if ($9 != "--" && $9 < 0.05) significant++ }
  END {
    printf "\\newcommand{\\mtSpreadRows}{%s}\n", rows
    def("mtSpreadRuns", n); def("mtSpreadMean", fixed(sum / n, 2)); def("mtSpreadLow", fixed(lo, 2))
    def("mtSpreadHigh", fixed(hi, 2)); def("mtSpreadRange", fixed(hi - lo, 2)); def("mtSpreadReach", reach + 0)
    # "all 3 runs reach 41" or "2 of the 3 runs reach 41"
    def("mtSpreadReachPhrase", (reach == n ? "all " n : (reach + 0) " of the " n) " runs")
    # The text says that the test set cannot tell the runs apart: refuse to build otherwise.
    if (significant > 0) { print "multi30k.sh: a run of spread.txt differs significantly from the first; the spread paragraph of translate.nw says none does" > "/dev/stderr"; exit 1 }
    # The sample standard deviation s of the runs, and the runs of each recipe that a
    # difference of the means of d = 0.3 needs to be found at the 5% level (two-sided) with
    # 80% power: n = 2 (1.96 + 0.84)^2 s^2 / d^2, rounded up.
    sd = sqrt((squares - sum * sum / n) / (n - 1)); need = 2 * (1.96 + 0.84) ^ 2 * sd * sd / 0.09
    def("mtSpreadSd", fixed(sd, 2)); def("mtSpreadRunsForThree", int(need) + (need > int(need)))
    def("mtCasedGapOverSd", fixed(casedgap / sd, 0))
    # The chapter Capital letters calls the gap several times the scatter.
    if (casedgap / sd < 2) { print "multi30k.sh: the cased run is within twice the runs\047 standard deviation; the chapter Capital letters says several times" > "/dev/stderr"; exit 1 }
  }' "${TMPDIR:-/tmp}/spread.$$"
rm -f "${TMPDIR:-/tmp}/spread.$$"

# Every pair of the spread's runs by paired bootstrap (cased): \mtSpreadPairs pairs, of which
# \mtSpreadPairsSignificant differ at the 5% level; the pair of the lowest and the highest
# score, \mtSpreadWidePair (their names, as the table's first column), and its p-value,
# \mtSpreadWideP. And what a number of runs of each of two recipes can resolve, turned round
# from the sample size below: d = (1.96 + 0.84) s sqrt(2 / n), for n = 1 and n = 4.
pairs=${TMPDIR:-/tmp}/pairs.$$
mkdir -p "$pairs"
i=0
grep -v '^#' $M/spread.txt | while IFS='|' read -r name seed machine log hyp; do
  i=$((i + 1)); hyp=$(echo $hyp); capitals $M/$hyp "$pairs/$i"
  echo "$(echo $name)|$(cased $M/$hyp)|$(echo $seed)" > "$pairs/$i.name"
done
for a in "$pairs"/*.name; do
  for b in "$pairs"/*.name; do
    x=${a%.name} y=${b%.name}
    [ "${x##*/}" -lt "${y##*/}" ] || continue
    p=$("$T" bleu --paired-bs "$x" "$y" data/multi30k/test2016.en | awk '/^p = / { sub(/:$/, "", $3); print $3 }')
    echo "$(cat "$a")|$(cat "$b")|$p"
  done
done | awk -F'|' "$LIB"'
  { n++; if ($7 < 0.05) significant++
    d = $2 - $5; if (d < 0) d = -d
    if (n == 1 || d > wide) { wide = d; low = $2 < $5 ? $1 : $4; high = $2 < $5 ? $4 : $1; p = $7; same = $3 == $6 } }
  END { # The text says the widest pair differs significantly, with one seed on two processors.
        if (p + 0 >= 0.05 || !same) { print "multi30k.sh: the spread'"'"'s widest pair (" low ", " high ") is not a significant difference of one seed; the spread paragraph says it is" > "/dev/stderr"; exit 1 }
        def("mtSpreadPairs", n); def("mtSpreadPairsSignificant", significant + 0)
        def("mtSpreadWidePair", low " and " high); def("mtSpreadWideP", p)
        def("mtSpreadWideGap", fixed(wide, 2)) }'
rm -rf "$pairs"
grep -v '^#' $M/spread.txt | while IFS='|' read -r name seed machine log hyp; do
  hyp=$(echo $hyp); cased $M/$hyp
done | awk "$LIB"'{ n++; sum += $1; squares += $1 * $1 }
  END { sd = sqrt((squares - sum * sum / n) / (n - 1))
        def("mtSpreadResolvableOne", fixed((1.96 + 0.84) * sd * sqrt(2), 1))
        def("mtSpreadResolvableFour", fixed((1.96 + 0.84) * sd * sqrt(2 / 4), 1)) }'

# Getting to 41's table (ablation.txt: label | machine | trainer | log | loss unit | beam 4
# translations | alpha | greedy translations), "-" where a run kept no such file. The trainer
# is not a column: the appendix Where each measurement comes from (tools/provenance) has it.
# The last column: the p-value of each run's beam output against the last row's (the book's
# run) by paired bootstrap resampling, cased (transformer bleu --paired-bs, its defaults).
# pvalue BASELINE SYSTEM: that p-value, the files given their capitals first if lowercase.
pvalue() {
  capitals "$1" "${TMPDIR:-/tmp}/pv-a.$$"; capitals "$2" "${TMPDIR:-/tmp}/pv-b.$$"
  "$T" bleu --paired-bs "${TMPDIR:-/tmp}/pv-a.$$" "${TMPDIR:-/tmp}/pv-b.$$" data/multi30k/test2016.en \
    | awk '/^p = / { sub(/:$/, "", $3); print $3 }'
  rm -f "${TMPDIR:-/tmp}/pv-a.$$" "${TMPDIR:-/tmp}/pv-b.$$"
}
last=$(grep -v '^#' $M/ablation.txt | tail -1 | awk -F'|' '{ gsub(/ /, "", $6); print $6 }')
grep -v '^#' $M/ablation.txt | while IFS='|' read -r label machine trainer log unit beam alpha greedy; do
  log=$(echo $log); beam=$(echo $beam); greedy=$(echo $greedy); unit=$(echo $unit); alpha=$(echo $alpha)
  b=--; c=--; g=--; p=--
  if [ "$beam" != - ]; then b=$(bleu $M/$beam --lowercase); c=$(cased $M/$beam); fi
  if [ "$beam" != - ] && [ "$beam" != "$last" ]; then p=$(pvalue $M/$last $M/$beam); fi
  if [ "$greedy" != - ]; then g=$(cased $M/$greedy); fi
  label=$(echo $label) machine=$(echo $machine) \
  b=$b c=$c g=$g p=$p unit=$unit alpha=$alpha awk -F, "$LIB"'
    BEGIN { label = ENVIRON["label"]; machine = ENVIRON["machine"]; p = ENVIRON["p"]
            b = ENVIRON["b"]; c = ENVIRON["c"]; g = ENVIRON["g"]; unit = ENVIRON["unit"]; alpha = ENVIRON["alpha"] }
    NR > 1 { e = $1; sec = $6; if (best == "" || $4 < best) best = $4 }
    END { printf "%s & %s & %d & %d & %s%s & %s & %s & %s & %s & %s \\\\\n", label, machine,
                 int(sec / 60 + 0.5), e, fixed(best, 3), unit == "piece" ? "$^*$" : "", g, alpha, c, b, p }' $M/$log
done | awk 'BEGIN { printf "\\newcommand{\\mtAblationRows}{" } { print } END { print "}" }'

# Some translations of test2016 with their references (the Results section's table): these
# lines of the test set, the beam's translation and, where it differs, greedy decoding's.
EXAMPLES="10 5 1 15 7 3 2"
for n in $EXAMPLES; do
  printf '%s\t%s\t%s\t%s\n' "$(sed -n "${n}p" data/multi30k/test2016.de)" \
    "$(sed -n "${n}p" data/multi30k/test2016.en)" "$(sed -n "${n}p" $M/test2016.beam4.en)" \
    "$(sed -n "${n}p" $M/test2016.greedy.en)"
done | awk -F '\t' '
  function tex(s) { gsub(/\\/, "\\textbackslash{}", s); gsub(/[&%$#_{}]/, "\\\\&", s)
                    gsub(/\\\\textbackslash\\\{\\\}/, "\\textbackslash{}", s); return s }
  BEGIN { printf "\\newcommand{\\mtExamples}{" }
  { printf "%s &\n%s &\n%s", tex($1), tex($2), tex($3)
    if ($4 != $3) printf " (greedy: %s)", tex($4)
    printf " \\\\\n" }
  END { print "}" }'

# The attention maps (attention-*.dat: a comment, the columns' tokens, then a row a query):
# \mtAttention{KIND}{ROW}{COLUMN} is a weight, two decimals, rows and columns counted from 1;
# \mtAttentionRow{KIND}{ROW} and \mtAttentionColumn{KIND}{COLUMN} their tokens. KIND is
# encoder, decoder, cross or head0 ... head7 (the cross-attention's heads).
withargs mtAttention 3 '\csname mtAtt@#1@#2@#3\endcsname'
withargs mtAttentionRow 2 '\csname mtAttRow@#1@#2\endcsname'
withargs mtAttentionColumn 2 '\csname mtAttCol@#1@#2\endcsname'
for kind in encoder decoder cross head0 head1 head2 head3 head4 head5 head6 head7; do
  case $kind in head*) file=$M/attention-head-${kind#head}.dat ;; *) file=$M/attention-$kind.dat ;; esac
  awk -v kind="$kind" '
    function tex(s) { gsub(/[&%$#_{}]/, "\\\\&", s); return s }
    NR == 1 { next }
    NR == 2 { for (c = 2; c <= NF; c++) printf "\\expandafter\\def\\csname mtAttCol@%s@%d\\endcsname{%s}\n", kind, c - 1, tex($c); next }
    { r = NR - 2; printf "\\expandafter\\def\\csname mtAttRow@%s@%d\\endcsname{%s}\n", kind, r, tex($1)
      for (c = 2; c <= NF; c++) printf "\\expandafter\\def\\csname mtAtt@%s@%d@%d\\endcsname{%.2f}\n", kind, r, c - 1, $c }' "$file"
done

# The logs of Getting to 41's runs, each under a name: \NAMEEpochs, \NAMEBestValidation, ...
# (as for the book's run above), and \mtValidationAt{NAME}{EPOCH}, a validation loss of the log.
withargs mtValidationAt 2 '\csname mtVal@#1@#2\endcsname'
while read -r name log; do
  log_macros "$name" "$M/$log"
  awk -F, -v name="$name" 'NR > 1 { printf "\\expandafter\\def\\csname mtVal@%s@%d\\endcsname{%.4f}\n", name, $1, $4 }' "$M/$log"
done <<'LOGS'
mtQuarterCourse ablation-d01.csv
mtQuarterDropout ablation-d03.csv
mtQuarterTied ablation-d03tie.csv
mtQuarterWordsEpyc ablation-words-15.csv
mtQuarterPiecesEpyc ablation-subwords-15.csv
mtHourCourse ablation-d01-hour.csv
mtHourTied ablation-d03tie-hour.csv
mtHourWordsCool ablation-words-hour.csv
mtLongPieces ablation-subwords-38.csv
mtBudgetPieces ablation-subwords-budget-hour.csv
mtRateEpyc ablation-rate2.csv
LOGS

# The scores of their recorded translations: \NAMEBleu (lowercased) and \NAMEBleuCased.
while read -r name hyp; do
  macro "${name}Bleu" "$(bleu $M/$hyp --lowercase)"
  macro "${name}BleuCased" "$(cased $M/$hyp)"
done <<'HYPS'
mtQuarterCourse ablation/d01.beam4.en
mtQuarterDropout ablation/d03.beam4.en
mtQuarterTied ablation/d03tie.beam4.en
mtQuarterWordsEpyc ablation/words-15.beam4.en
mtQuarterPiecesEpyc ablation/subwords-15.beam4.en
mtHourWordsCool ablation/words-cooldown.beam4.en
mtLongPieces ablation/subwords-38.beam4.en
mtLongPiecesGreedy ablation/subwords-38.greedy.en
mtBudgetPieces ablation/subwords-budget-hour.beam4.en
mtRateEpyc ablation/rate2.beam4.en
mtRateEpycGreedy ablation/rate2.greedy.en
HYPS

# Differences of BLEU between runs that the text compares (same machine and trainer).
diff() { macro "$1" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a - b }')"; }
diff mtQuarterCourseOverDropout "$(cased $M/ablation/d01.beam4.en)" "$(cased $M/ablation/d03.beam4.en)"
diff mtQuarterCourseOverTied "$(cased $M/ablation/d01.beam4.en)" "$(cased $M/ablation/d03tie.beam4.en)"

# The p-values of the comparisons that Getting to 41 makes in its text (same machine and
# trainer unless the text says otherwise), by paired bootstrap, cased.
macro mtQuarterCourseOverDropoutP "$(pvalue $M/ablation/d01.beam4.en $M/ablation/d03.beam4.en)"
macro mtQuarterCourseOverTiedP "$(pvalue $M/ablation/d01.beam4.en $M/ablation/d03tie.beam4.en)"
macro mtQuarterUntiedOverTiedP "$(pvalue $M/ablation/d03.beam4.en $M/ablation/d03tie.beam4.en)"
macro mtQuarterWordsOverPiecesP "$(pvalue $M/ablation/words-15.beam4.en $M/ablation/subwords-15.beam4.en)"
macro mtLongPiecesOverWordsP "$(pvalue $M/ablation/subwords-38.beam4.en $M/ablation/words-cooldown.beam4.en)"
macro mtRateOverBudgetP "$(pvalue $M/ablation/rate2.beam4.en $M/ablation/subwords-budget-hour.beam4.en)"

# The text calls the rate's gain significant and the subwords' lead over the words not: refuse
# to build when either stops being so.
awk -v rate="$(pvalue $M/ablation/rate2.beam4.en $M/ablation/subwords-budget-hour.beam4.en)" \
    -v long="$(pvalue $M/ablation/subwords-38.beam4.en $M/ablation/words-cooldown.beam4.en)" \
    -v quarter="$(pvalue $M/ablation/d01.beam4.en $M/ablation/d03tie.beam4.en)" 'BEGIN {
  if (rate >= 0.05 || quarter >= 0.05 || long < 0.05) {
    print "multi30k.sh: Getting to 41 says that the doubled rate and the course'"'"'s quarter hour differ significantly and the subwords'"'"' lead does not; p = " rate ", " quarter ", " long > "/dev/stderr"; exit 1 } }'

# The shipped model's recaser (the chapter Capital letters): how many words its table holds,
# and the bytes of its text in the file's metadata.
header=$(od -An -t u8 -N8 data/multi30k-de-en.safetensors | tr -d ' ')
head -c $((8 + header)) data/multi30k-de-en.safetensors | tail -c "$header" \
  | grep -o '"recaser":"[^"]*"' | sed 's/^"recaser":"//; s/"$//' | awk "$LIB"'
    { n = gsub(/\\n/, "\n"); bytes = length($0) }
    END { def("mtRecaserWords", n + 0); def("mtRecaserKilobytes", fixed(bytes / 1000, 1)) }'

# The chapter's example of translate, with the shipped model.
macro mtSnowTranslation "$(echo "Ein Hund rennt durch den Schnee." | "$T" translate)"

# Significance (the chapter on BLEU, Is a difference real?): `transformer bleu --paired-bs`
# with its defaults (1000 resamples, seed 12345), cased; a lowercase recording is given its
# capitals first (transformer recase). \sigShipped{Score,Mean,Half}: the shipped model's
# score and interval, and \sigGreedy{Score,Diff,P} greedy decoding against it; the book's run
# (the model before rounding to bfloat16) against the shipped model, \sigFloat..., and
# against the spread's runs on another machine, \sigMachine..., and with another seed,
# \sigSeed... .
sig=${TMPDIR:-/tmp}/sig.$$
mkdir -p "$sig"
for f in test2016.beam4.en ablation/rate2.beam4.en spread/seed2/test2016.beam4.en \
         test2016.greedy.en alpha/test2016.alpha0.6.en; do
  "$T" recase < $M/$f > "$sig/$(echo $f | tr / _)"
done
# paired NAME... -- FILE...: the baseline's interval as \NAME1..., then each system's.
paired() {
  names=; while [ "$1" != -- ]; do names="$names $1"; shift; done; shift
  "$T" bleu --paired-bs "$@" data/multi30k/test2016.en | awk -v names="$names" "$LIB"'
    function out(name, value) { printf "\\newcommand{\\%s}{%s\\xspace}\n", name, value }
    BEGIN { n = split(names, name, " ") }
    /^BLEU = / { s = $3; m = $6; h = $8; sub(/\)$/, "", h); k++
                 if (k == 1) { base = s; out(name[1] "Score", s); out(name[1] "Mean", m)
                               out(name[1] "Half", h) } }
    /^p = / { p = $3; sub(/:$/, "", p)
              out(name[k] "Score", s); out(name[k] "Diff", fixed(s > base ? s - base : base - s, 2))
              out(name[k] "P", p); seen++ }
    END { if (seen != n - 1) { print "multi30k.sh: transformer bleu --paired-bs printed " seen " p-values, not " n - 1 > "/dev/stderr"; exit 1 } }'
}
paired sigShipped sigGreedy -- $M/shipped.test2016.beam4.en $M/shipped.test2016.greedy.en
paired sigBook sigFloat sigMachine sigSeed -- "$sig/test2016.beam4.en" \
  $M/shipped.test2016.beam4.en "$sig/ablation_rate2.beam4.en" "$sig/spread_seed2_test2016.beam4.en"
# The Results section's table: each row against the beam with alpha = 2 (its bold row), cased:
# \mtTabGreedyP, \mtTabPaperAlphaP, \mtTabShippedP (the rows' scores are the \mtBleu... above).
paired mtTabBeam mtTabGreedy mtTabPaperAlpha mtTabShipped -- "$sig/test2016.beam4.en" \
  "$sig/test2016.greedy.en" "$sig/alpha_test2016.alpha0.6.en" $M/shipped.test2016.beam4.en \
  | tee "$sig/tab"
# The Results section says the beam and alpha = 2 are significantly better, and the rounding's
# change is not significant: refuse to build otherwise.
awk '/mtTab(Greedy|PaperAlpha)P/ { v = $0; sub(/.*\}\{/, "", v); sub(/\\xspace.*/, "", v); if (v + 0 >= 0.05) bad = 1 }
     /mtTabShippedP/ { v = $0; sub(/.*\}\{/, "", v); sub(/\\xspace.*/, "", v); if (v + 0 < 0.05) bad = 1 }
     END { if (bad) { print "multi30k.sh: the Results table no longer reads as its text says (significance)" > "/dev/stderr"; exit 1 } }' "$sig/tab"
rm -rf "$sig"
