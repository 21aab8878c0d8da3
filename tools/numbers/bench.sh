#!/bin/sh
# The measured numbers of the speed chapter (book/fast.nw), \bench..., from the one run of
# make bench-figures recorded in figures/bench/ (run.txt names it; see its README).
#
# Per row of a table, Cfg is Copy, Small, Base or Decode and Thr One or Two:
#   table.dat (float, C against PyTorch):  \bench<Cfg><Thr>{C,Pt,Ratio,Pct,Sgemm,CRss,PtRss}
#   unset-openblas-env.txt (the same, OpenBLAS's own kernel): \benchUnset<Cfg><Thr>{...}
#   stages.dat:  \benchStage<Cfg><Thr>{Openblas,Split,Fast}
#   precision.dat:  \benchBf<Cfg><Thr>
#     {CFp,CBf,PtFp,PtBf,BfOverFp,BfOverPtFp,BfOverPtBf,FpOverPtFp,Sgemm,Mixed,CMixed,Share}
#   translate.txt:  \benchTranslate...
# and ranges over rows, named below where they are made.
set -eu
dir=figures/bench
# The functions of lib.awk go before each program (awk -f FILE 'PROGRAM' would take
# PROGRAM for a file name).
LIB="$(cat tools/numbers/lib.awk)
# word(n): a count of rows in words, as the prose reads it (none ... eight).
function word(n,    w) { split(\"none one two three four five six seven eight\", w, \" \"); return n > 8 ? n : w[n + 1] }
# of(n, total): how many rows of how many, as the prose reads it (\"five of the six\", \"all six\").
function of(n, total) { return n == total ? \"all \" word(total) : word(n) \" of the \" word(total) }
"
T=${TRANSFORMER:-./transformer}

# One run: every file of figures/bench/ that names the trainer's commit names the commit of
# run.txt, so that the chapter's tables can be set side by side; a file left from another run
# fails the build.
run=$(sed -n 's/^commit: //p' $dir/run.txt)
[ -n "$run" ] || { echo "tools/numbers/bench.sh: $dir/run.txt names no commit" >&2; exit 1; }
for file in $(cd $dir && ls *.txt *.dat); do
    commit=$(sed -n 's/.*repository at \([0-9a-f+changes]*\).*/\1/p; s/^commit: //p' $dir/$file | head -1)
    [ -z "$commit" ] || [ "$commit" = "$run" ] || {
        echo "tools/numbers/bench.sh: $dir/$file is of $commit, $dir/run.txt of $run" >&2; exit 1; }
done

# The run's machine by its letter (figures/machines.txt: letter | cpuid prefix | words), as
# the chapters name machines, and its OpenBLAS environment.
letter=$(tools/numbers/machine-letter $dir/run.txt)
awk -v letter="$letter" "$LIB"'BEGIN { def("benchMachine", letter) }'

# The tables in float: table.dat and the run with OpenBLAS's own kernel.
awk -v pre=bench "$LIB"'
function cap(s) { return toupper(substr(s, 1, 1)) substr(s, 2) }
function rate(x) { return x >= 100 ? fixed(x, 0) : fixed(x, 1) }
function row(config, threads) {   # a row of the table, as the prose names it
    return (config == "copy" ? "the copy task" : config == "small" ? "the small configuration" \
            : "the base model") (threads == 1 ? " with one thread" : " with two threads")
}
/^#/ || NF < 14 { next }
{
    k = pre cap($1) ($2 == 1 ? "One" : "Two")
    def(k "C", $1 == "decode" ? fixed($3, 1) : rate($3)); def(k "Pt", $1 == "decode" ? fixed($6, 1) : rate($6))
    def(k "Ratio", fixed($9, 2)); def(k "RatioOne", fixed($9, 1))
    def(k "CRss", fixed($13, 0)); def(k "PtRss", fixed($14, 0))
    def(k "RssPct", fixed(100 * $13 / $14, 0))
    # the distance of a single run from its median (table.dat keeps the min and max of each side)
    memMet += $13 <= $14
    for (i = 4; i <= 8; i++) if (i != 6) {
        d = ($i - (i < 6 ? $3 : $6)) / (i < 6 ? $3 : $6); d = d < 0 ? -d : d
        if (d > worst) { second = worst; worst = d } else if (d > second) second = d
    }
    if ($1 == "decode") next
    def(k "Pct", fixed($12, 0)); def(k "Sgemm", fixed($11, 0)); def(k "CGflops", fixed($10, 0))
    if (min_pct == "" || $12 < min_pct) min_pct = $12; if ($12 > max_pct) max_pct = $12
    if ($2 == 1) { if (min_s1 == "" || $11 < min_s1) min_s1 = $11; if ($11 > max_s1) max_s1 = $11 }
    else         { if (min_s2 == "" || $11 < min_s2) min_s2 = $11; if ($11 > max_s2) max_s2 = $11 }
    if (min_r == "" || $9 < min_r) min_r = $9
    if ($1 == "small" && $2 == 2) { smallTwoMinRatio = $4 / $6 }
    met += $9 >= 2; pctMet += $12 >= 55
    if ($9 < 2) missed = missed (missed == "" ? "" : "; ") row($1, $2) " (" fixed($9, 2) ")"
    if ($13 / $14 > max_mem) max_mem = $13 / $14; if (min_mem == "" || $13 / $14 < min_mem) min_mem = $13 / $14
}
END {
    def(pre "PctMin", fixed(min_pct, 0)); def(pre "PctMax", fixed(max_pct, 0))
    def(pre "RestMin", fixed(100 - max_pct, 0)); def(pre "RestMax", fixed(100 - min_pct, 0))
    def(pre "SgemmOneMin", fixed(min_s1, 0)); def(pre "SgemmOneMax", fixed(max_s1, 0))
    def(pre "SgemmTwoMin", fixed(min_s2, 0)); def(pre "SgemmTwoMax", fixed(max_s2, 0))
    def(pre "RatioMin", fixed(min_r, 2))
    def(pre "RatioMetRows", of(met, 6)); def(pre "PctMetRows", of(pctMet, 6))
    def(pre "MemMetRows", of(memMet, 8))
    def(pre "RatioMissed", missed == "" ? "none" : missed)
    def(pre "SmallTwoSlowestRatio", fixed(smallTwoMinRatio, 2))
    def(pre "WorstRunPct", fixed(100 * worst, 0)); def(pre "OtherRunsPct", fixed(100 * second, 0))
    def(pre "MemMinPct", fixed(100 * min_mem, 0)); def(pre "MemMaxPct", fixed(100 * max_mem, 0))
}' $dir/table.dat

# table.txt's header: the load average (1 minute) before the first run and after the last.
awk "$LIB"'
/^machine: .*load average / { sub(/.*load average /, ""); def("benchLoadBefore", fixed($1, 1)) }
/^load average after: / { def("benchLoadAfter", fixed($4, 1)) }' $dir/table.txt

# table.txt's notes: PyTorch's model FLOP rate and the ratio C would reach at the sgemm rate.
awk "$LIB"'
function cap(s) { return toupper(substr(s, 1, 1)) substr(s, 2) }
/^  [a-z]+ threads=[12]: flops_per_step/ {
    split($2, t, /[=:]/); k = "bench" cap($1) (t[2] == 1 ? "One" : "Two")
    for (i = 1; i <= NF; i++) {
        if ($i == "GFLOP/s") def(k "PtGflops", fixed($(i + 1), 1))
        if ($i == "(" || $i ~ /^\([0-9]+%$/) { p = $i; gsub(/[(%]/, "", p); def(k "PtPct", p) }
    }
    def(k "Bound", fixed($NF, 2))
}' $dir/table.txt

# The run with OpenBLAS's own kernel (unset-openblas-env.txt): its table rows, and its sgemm
# rates over those of table.dat (the kernel of the environment).
awk "$LIB"'
function cap(s) { return toupper(substr(s, 1, 1)) substr(s, 2) }
function row(config, threads) {
    return (config == "copy" ? "the copy task" : config == "small" ? "the small configuration" \
            : "the base model") (threads == 1 ? " with one thread" : " with two threads")
}
FNR == 1 { file++ }
file == 1 { if (!/^#/ && NF >= 14) env[$1 " " $2] = $11; next }
/^(copy|small|base) +[12] / && NF == 12 {
    k = "benchUnset" cap($1) ($2 == 1 ? "One" : "Two")
    def(k "Ratio", fixed($7, 2)); def(k "Sgemm", fixed($9, 0)); def(k "Pct", fixed($10, 0))
    if ($2 == 1) { if (s1min == "" || $9 < s1min) s1min = $9; if ($9 > s1max) s1max = $9
                   if ($9 / env[$1 " " $2] > gain) gain = $9 / env[$1 " " $2] }
    else if ($1 != "copy") { if (s2min == "" || $9 < s2min) s2min = $9; if ($9 > s2max) s2max = $9 }
    if (rmin == "" || $7 < rmin) { rmin = $7; least = row($1, $2) }
    if ($7 > rmax) rmax = $7
    below += $10 < 55; if (pmin == "" || $10 < pmin) pmin = $10
}
END {
    def("benchUnsetSgemmOneMin", fixed(s1min, 0)); def("benchUnsetSgemmOneMax", fixed(s1max, 0))
    def("benchUnsetSgemmTwoMin", fixed(s2min, 0)); def("benchUnsetSgemmTwoMax", fixed(s2max, 0))
    def("benchUnsetRatioMin", fixed(rmin, 2)); def("benchUnsetRatioMax", fixed(rmax, 2))
    def("benchUnsetSgemmGain", fixed(gain, 1)); def("benchUnsetLeast", least)
    def("benchUnsetBelowRows", word(below)); def("benchUnsetPctMin", fixed(pmin, 0))
}' $dir/table.dat $dir/unset-openblas-env.txt

# What the prose of "The remaining distance" says of the table, checked: the ratio is higher
# for the small configuration than for the copy task, and higher with two threads than with
# one, in every configuration; and the bound of the copy task with one thread, in words.
awk "$LIB"'
/^#/ || NF < 14 || $1 == "decode" { next }
{ r[$1 " " $2] = $9 }
END {
    if (!(r["small 1"] > r["copy 1"] && r["small 2"] > r["copy 2"]))
        bad = "the small configuration is not ahead of the copy task"
    for (c in r) { split(c, f, " "); if (f[2] == 1 && !(r[f[1] " 2"] > r[c])) bad = f[1] " is not faster with two threads" }
    if (bad != "") { print "tools/numbers/bench.sh: the text of The remaining distance no longer holds: " bad > "/dev/stderr"; exit 1 }
}' $dir/table.dat
awk "$LIB"'
/^  copy threads=1: flops_per_step/ {
    b = $NF + 0
    def("benchCopyOneBoundSays", b < 2 ? "below two, so the goal of twice its speed is out of reach there in \\texttt{float} by arithmetic, not by effort" \
        : b < 2.5 ? "above two, but not by much, so the goal of twice its speed is within reach there only for a step that is nearly all products" \
        : "well above two, so the arithmetic leaves room for the goal of twice its speed")
}' $dir/table.txt

# stages.dat: what each optimization bought, and the table's run against the stages' runs.
awk "$LIB"'
function cap(s) { return toupper(substr(s, 1, 1)) substr(s, 2) }
function pct(x) { return fixed(100 * (x - 1), 0) }
FNR == 1 { file++ }
/^#/ { next }
file == 1 { table[$1 " " $2] = $3; next }
{
    k = "benchStage" cap($1) ($2 == 1 ? "One" : "Two")
    def(k "Openblas", $1 == "decode" ? fixed($3, 1) : fixed($3, 0))
    def(k "Split", $1 == "decode" ? fixed($4, 1) : fixed($4, 0))
    def(k "Fast", $1 == "decode" ? fixed($5, 1) : fixed($5, 0))
    def(k "SplitGain", fixed($4 / $3, 1))          # split over OpenBLAS threads, times
    def(k "FastGainPct", pct($5 / $4))               # the fast kernels over split, percent
    if ($1 != "decode") {
        g = 100 * ($5 / $4 - 1); if (gmin == "" || g < gmin) gmin = g
        if (gmax == "" || g > gmax) { gmax = g; gmaxRow = ($1 == "copy" ? "the copy task" : $1 == "small" ? "the small configuration" : "the base model") ($2 == 1 ? " with one thread" : " with two threads") }
        if ($2 == 1) { d = ($3 > $4 ? $3 / $4 : $4 / $3) - 1; if (d > same) { same = d; sameRow = $1 } }
        openblas[$1 " " $2] = $3; split2[$1 " " $2] = $4
        r = $5 / table[$1 " " $2]
        if (r > fastest || fastest == "") fastest = r; if (slowest == "" || r < slowest) slowest = r
    }
}
END {
    def("benchStagesFasterPct", pct(fastest)); def("benchStagesSlowerPct", fixed(100 * (1 - slowest), 0))
    def("benchStageFastGainMin", fixed(gmin, 0)); def("benchStageFastGainMax", fixed(gmax, 0))
    def("benchStageFastGainMaxRow", gmaxRow)
    def("benchStageSameProgramPct", fixed(100 * same, 0))
    def("benchStageSameProgramRow", sameRow == "copy" ? "the copy task" : sameRow == "small" ? "the small configuration" : "the base model")
    # what the prose says of them, checked: OpenBLAS threads slower than one thread on copy and
    # small; our own threads faster than OpenBLAS threads everywhere
    if (!(openblas["copy 2"] < openblas["copy 1"] && openblas["small 2"] < openblas["small 1"]))
        bad = "OpenBLAS threads are not slower than one thread on copy and small"
    for (c in split2) if (c ~ / 2$/ && !(split2[c] > openblas[c])) bad = "splitting does not pay on " c
    if (bad != "") { print "tools/numbers/bench.sh: the text of What it bought no longer holds: " bad > "/dev/stderr"; exit 1 }
}' $dir/table.dat $dir/stages.dat

# The table of precisions (precision.dat).
awk -v pre=benchBf "$LIB"'
function cap(s) { return toupper(substr(s, 1, 1)) substr(s, 2) }
function rate(x) { return x >= 100 ? fixed(x, 0) : fixed(x, 1) }
function range(name, x) {
    if (!(name in lo) || x < lo[name]) lo[name] = x; if (!(name in hi) || x > hi[name]) hi[name] = x
}
/^#/ || NF < 15 { next }
{
    k = pre cap($1) ($2 == 1 ? "One" : "Two")
    def(k "CFp", rate($3)); def(k "CBf", rate($4)); def(k "PtFp", rate($5)); def(k "PtBf", rate($6))
    def(k "BfOverFp", fixed($7, 2)); def(k "BfOverPtFp", fixed($8, 2))
    def(k "BfOverPtBf", fixed($9, 2)); def(k "FpOverPtFp", fixed($10, 2))
    def(k "Sgemm", fixed($11, 0)); def(k "Mixed", fixed($12, 0)); def(k "CMixed", fixed($13, 0))
    def(k "Share", fixed(100 * $13 / $12, 0))
    def(k "CRss", fixed($14, 0)); def(k "PtRss", fixed($15, 0))
    range("BfOverFp", $7); range("BfOverPtFp", $8); range("BfOverPtBf", $9); range("FpOverPtFp", $10)
    range("Sgemm", $11); range("Mixed", $12); range("MixedOverSgemm", $12 / $11)
    range("Share", 100 * $13 / $12)
    metFp += $10 >= 2; metBf += $8 >= 2; rows++
    memBf += $14 <= $15
}
END {
    for (n in lo) {
        d = (n == "Sgemm" || n == "Mixed" || n == "Share") ? 0 : (n == "MixedOverSgemm" ? 1 : 2)
        def(pre n "Min", fixed(lo[n], d)); def(pre n "Max", fixed(hi[n], d))
    }
    def(pre "FpMetRows", of(metFp, rows)); def(pre "BfMetRows", of(metBf, rows)); def(pre "Rows", word(rows))
    def(pre "MemMetRows", of(memBf, rows))
}' $dir/precision.dat

# The translation of test2016 with the shipped model (translate.txt).
awk "$LIB"'
/^translation of test2016/ { n = $4; sub(/\(/, "", n); def("benchTranslateSentences", n) }
$1 == "c-greedy"  { def("benchTranslateGreedy", fixed($2, 0)); def("benchTranslateGreedyTimes", fixed($3, 0)); def("benchTranslateGreedyBleu", fixed($4, 2)) }
$1 == "c-beam4"   { def("benchTranslateBeam", fixed($2, 0)); def("benchTranslateBeamTimes", fixed($3, 0)); def("benchTranslateBeamBleu", fixed($4, 2)) }
$1 == "reference" { def("benchTranslateReference", fixed($2, 2)); def("benchTranslateReferenceBleu", fixed($4, 2)) }
$1 == "c-greedy" { times = $3; greedy = $4 } $1 == "reference" { reference = $4 }
END {
    # the goal: ten times the reference, with the same translations (their scores equal)
    same = greedy == reference
    def("benchTranslateSame", same ? "the same score" : "different scores")
    def("benchTranslateGoal", times >= 10 && same ? "met" : "not met")
}
' $dir/translate.txt

# Decoding one sentence at a time reads the weights (Section "The remaining distance"): the
# bytes of float weights of the decoding benchmark's model (DECODE_CONFIG of bench/bench.py,
# its settings), per new symbol (the decoder's self-attention, its cross-attention's query
# and output, its feed-forward network, the generator) and once per sentence (the encoder,
# the cross-attention's key and value projections); the reference's rate from table.dat.
config=$(sed -n '/^DECODE_CONFIG/,/)/p' bench/bench.py | tr -d ' \n')
awk -v config="$config" "$LIB"'
function setting(name,    m) {
    if (!match(config, "[(,]" name "=[0-9]+")) { print "bench.sh: no " name " in DECODE_CONFIG" > "/dev/stderr"; exit 1 }
    m = substr(config, RSTART, RLENGTH); sub(/.*=/, "", m); return m + 0
}
/^#/ || NF < 14 || $1 != "decode" || $2 != 1 { next }
{
    N = setting("layers"); d = setting("d_model"); f = setting("d_ff"); V = setting("vocab")
    L = setting("len")
    symbol = 4 * (N * (6 * d * d + 2 * d * f) + d * V)
    encoder = 4 * N * (4 * d * d + 2 * d * f); cross = 4 * N * 2 * d * d
    sentence = (L - 1) * symbol + encoder + cross
    def("benchDecodeSymbolMB", fixed(symbol / 1e6, 1)); def("benchDecodeEncoderMB", fixed(encoder / 1e6, 0))
    def("benchDecodeCrossMB", fixed(cross / 1e6, 1)); def("benchDecodeSentenceGB", fixed(sentence / 1e9, 2))
    def("benchDecodeTenfoldRate", fixed(10 * $6, 0)); def("benchDecodeTenfoldBandwidth", fixed(10 * $6 * sentence / 1e9, 0))
}' $dir/table.dat
