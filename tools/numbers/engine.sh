#!/bin/sh
# The measured numbers of the engine's chapters (text, refuses, distributed, layernorm), as
# LaTeX macros (see tools/numbers/README): \tok... from figures/engine/text/ (written by
# figures/engine/record-text.sh over data/multi30k/) and data/multi30k/; \harden... from
# figures/engine/bleu-long-line.txt; \dist... from bench/results/distributed-2026-11-24.txt,
# figures/bench/table.txt and the program itself (figure-data scaling and architecture);
# \ln... from the program's constants.
set -eu
T=${TRANSFORMER:-./transformer}
LIB=$(cat tools/numbers/lib.awk)   # its functions, before each program
E=figures/engine/text


# ---- text.nw: the tokenizer against Moses (transformer tokenize --compare).
for s in train val test2016; do
    for l in de en; do
        awk -v s=$s -v l=$l "$LIB"'
            /^identical:/ { same = $2; lines = $4; share = $6; gsub(/[()%]/, "", share) }
            END {
                name = "tokCompare" (s == "test2016" ? "Test" : s == "val" ? "Val" : "Train") \
                       (l == "de" ? "De" : "En")
                def(name "Lines", grouped(lines)); def(name "Same", grouped(same))
                def(name "Share", share + 0 == 100 ? "100" : share)
                def(name "Differ", lines - same)
            }' $E/compare-$s-$l.txt
    done
done
awk "$LIB"'/^identical:/ { differ += $4 - $2 } END { def("tokCompareDiffer", differ) }' \
    $E/compare-*.txt
# The token counts of the training files: ours (transformer vocab) and Moses's.
for l in de en; do
    awk -v l=$l -v ref=data/multi30k/train.lc.norm.tok.$l "$LIB"'
        /tokens,/ { ours = $3 }
        END {
            while ((getline line < ref) > 0) n += split(line, w, " ")
            L = l == "de" ? "De" : "En"
            def("tokMosesTokens" L, grouped(n)); def("tokFewerTokens" L, n - ours)
        }' $E/vocab-train-lc-$l.txt
done
# The round trip of the English lines (tokenize, then detokenize).
awk "$LIB"'
    { set = $1; sub(/:$/, "", set); name = set == "test2016" ? "Test" : set == "val" ? "Val" : "Train"
      same = $2; lines = $4
      def("tokRoundTrip" name, grouped(same)); def("tokRoundTrip" name "Share", fixed(100 * same / lines, 2))
      if (name == "Train") {
          def("tokRoundTripTrainDiffer", lines - same); def("tokRoundTripAmp", $9)
          def("tokRoundTripQuote", $12); def("tokRoundTripOther", $21)
      } }' $E/roundtrip.txt
# The vocabularies of words: types and sizes, and the course's sizes (the program's defaults,
# those of the architecture figure) for comparison.
course=$($T figure-data architecture | sed -n '1s/.*--src-vocab \([0-9]*\) --tgt-vocab \([0-9]*\).*/\1 \2/p')
for kind in train-lc train-cased trainval-cased; do
    for l in de en; do
        awk -v kind=$kind -v l=$l -v course="$course" "$LIB"'
            /distinct/ { types = $5 } /^vocabulary:/ { size = $2 }
            END {
                name = "tokVocab" (kind == "train-lc" ? "Lower" : kind == "train-cased" ? "Cased" : "All") \
                       (l == "de" ? "De" : "En")
                def(name "Types", grouped(types)); def(name, grouped(size))
                if (kind == "trainval-cased") {
                    split(course, c, " "); ref = l == "de" ? c[1] : c[2]
                    def("tokCourseGap" (l == "de" ? "De" : "En"), fixed(100 * (ref - size) / ref, 1))
                }
            }' $E/vocab-$kind-$l.txt
    done
done
for l in de en; do
    LL=$(echo $l | sed "s/de/De/; s/en/En/")
    awk -v L=$LL "$LIB"'/^vocabulary:/ { if (FILENAME ~ /cased/) cased = $2; else lower = $2 }
        END { def("tokLowercaseSaves" L, cased - lower) }' \
        $E/vocab-train-cased-$l.txt $E/vocab-train-lc-$l.txt
done
# The subwords (transformer vocab --subwords 8000 over both training files).
awk "$LIB"'
    /pieces \(/ { a = $9; sub(/^\(/, "", a); whole = $12; sub(/%$/, "", whole)
                  def("tokPiecesPerToken", fixed(a, 1)); def("tokWholeShare", fixed(whole, 0)) }
    /^vocabulary:/ { def("tokSubwordVocab", grouped($2)) }' $E/subwords.txt
# Unknown tokens of test2016 and the pieces of the training files.
awk "$LIB"'
    /outside the vocabulary/ { L = $1 == "de" ? "De" : "En"
        def("tokWordsUnknown" L, fixed(100 * $5 / $3, 1)) }
    / <unk>$/ { pieces += $3; unk += $5 }
    /train tokens:/ { tokens[$1] = $4 } /train pieces:/ { cut[$1] = $4 }
    END {
        def("tokTestPieces", grouped(pieces)); def("tokTestPiecesUnknown", unk)
        def("tokLongerDe", fixed(100 * (cut["de"] / tokens["de"] - 1), 0))
        def("tokLongerEn", fixed(100 * (cut["en"] / tokens["en"] - 1), 0))
    }' $E/unknown.txt

# ---- refuses.nw: BLEU on one line of 8 MB.
awk "$LIB"'/maximum resident/ { def("hardenBleuLongLineMiB", fixed($(NF - 1) / 1024, 0)) }' \
    figures/engine/bleu-long-line.txt

# ---- distributed.nw: the measured steps (bench/distributed.sh 2, two runs).
awk "$LIB"'
    /^nproc/ { sub(/.*load average /, ""); low = $1 }
    /^load average after/ { high = $4 }
    /^P=/ { key = $1 $2; run[key]++; r = run[key] == 1 ? "A" : "B"
            sub(/P=/, "", key); split(key, pt, ","); name = (pt[1] == 1 ? "One" : pt[1] == 2 ? "Two" : "Four") \
                                                    (pt[2] == 1 ? "One" : "Two")
            def("distStep" name r, fixed($(NF - 2), 2))
            if ($(NF - 1) != "-") {
                def("distComp" name r, fixed($(NF - 1), 0)); def("distComm" name r, fixed($NF, 0))
                if (pt[1] == 2) { share = 100 * $NF / ($(NF - 1) + $NF)   # the sum, of two ranks
                                  if (lo == "" || share < lo) lo = share; if (share > hi) hi = share }
            } }
    END { def("distLoadLow", fixed(low, 0)); def("distLoadHigh", fixed(high, 0))
          def("distSumShareMin", fixed(lo, 0)); def("distSumShareMax", fixed(hi, 0)) }' \
    bench/results/distributed-2026-11-24.txt
# The copy task's full model (N = 2, d_model = 512, V = 11): parameters and the gradient's bytes.
$T figure-data architecture --layers 2 --src-vocab 11 --tgt-vocab 11 | awk "$LIB"'
    /archTotal/ { n = $0; sub(/.*archTotal\}\{/, "", n); gsub(/[^0-9]/, "", n)
                  def("distCopyParametersMillion", fixed(n / 1e6, 1))
                  def("distCopyGradientMB", fixed(4 * n / 1e6, 0)) }'
# The base model's step from the speed benchmark (two threads, bfloat16 as tools/scaling-args
# takes it): its operations and their rate.
awk "$LIB"'
    /base threads=2: flops_per_step/ { f = $4 }
    FILENAME ~ /precision.dat$/ && $1 == "base" && $2 == 2 { rate = $13 }
    END {
        def("distBaseGflops", fixed(rate, 0))
        e = int(log(f) / log(10)); def("distBaseFlops", "\\ensuremath{" fixed(f / 10 ^ e, 2) " \\cdot 10^{" e "}}")
        def("distBaseSeconds", fixed(f / (rate * 1e9), 2))
    }' figures/bench/table.txt figures/bench/precision.dat
# The projection (figure-data scaling with the steps of tools/scaling-args): the models'
# sizes, the Multi30k step, the efficiencies at 64 processes.
$T figure-data scaling $(tools/scaling-args) | awk "$LIB"'
    /^# P, then/ { s = $0; sub(/.*base model \(/, "", s); base = s + 0
                   sub(/^[0-9]* parameters, /, "", s); basestep = s + 0
                   sub(/.*Multi30k model \(/, "", s); multi = s + 0; sub(/^[0-9]*, /, "", s); step = s + 0 }
    $1 == 64 { least = 1 - $9; most = 1 - $3; effbase = $3; effmulti = $7 }
    END {
        def("distBaseParametersMillion", fixed(base / 1e6, 1))
        def("distFigureMultiParametersMillion", fixed(multi / 1e6, 1))
        def("distFigureMultiSeconds", fixed(step, 2))
        def("distMultiParamsRatio", fixed(multi / base, 2)); def("distMultiStepRatio", fixed(step / basestep, 2))
        def("distBaseEfficiency", int(100 * effbase)); def("distMultiEfficiency", int(100 * effmulti))
        def("distOverheadLeast", fixed(100 * least, 0)); def("distOverheadMost", fixed(100 * most, 0))
    }'

# ---- layernorm.nw: the factor between the two standard deviations for d = 32.
awk "$LIB"'BEGIN { def("lnFactorPercentSmall", fixed(100 * (sqrt(32 / 31) - 1), 1)) }'

# ---- attention.nw: the worked example's weights of key 0 for query 0 (Section "A worked
# example", Q and K as there): one head (d_k = 4) and the two heads (d_k = 2), in per cent.
awk "$LIB"'
function dot(a, b, from, to,    i, s, x, y) {
    split(a, x, " "); split(b, y, " "); s = 0
    for (i = from; i <= to; i++) s += x[i] * y[i]
    return s
}
function weight0(from, to, dk) {   # query 0, key 0 against key 1: a softmax over two scores
    return 1 / (1 + exp((dot(q0, k1, from, to) - dot(q0, k0, from, to)) / sqrt(dk)))
}
BEGIN {
    q0 = "1 2 3 4"; k0 = "2 1 0 -1"; k1 = "4 3 2 1"
    def("attExampleHeadOne", fixed(100 * weight0(1, 2, 2), 1))
    def("attExampleHeadTwo", fixed(100 * weight0(3, 4, 2), 3))
    def("attExampleOneHead", fixed(100 * weight0(1, 4, 4), 4))
}'

# ---- text.nw: the longest raw line of the corpus, in bytes.
LC_ALL=C awk "$LIB"'{ if (length($0) > m) m = length($0) } END { def("tokLongestLineBytes", m) }' \
    data/multi30k/train.de data/multi30k/train.en data/multi30k/val.de data/multi30k/val.en \
    data/multi30k/test2016.de data/multi30k/test2016.en
