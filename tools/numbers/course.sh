#!/bin/sh
# The numbers of the course's chapters (the big picture, the model, training, the copy task):
#   \copytask...  the recorded runs of `transformer copy` in figures/copy/ (its README names
#                 each command, the trainer's commit, the machine and the precision);
#   \course...    what the program itself prints: parameter counts of Table 6.1 and of the
#                 big picture (`transformer figure-data architecture`), the minimum of
#                 Figure 7.1's right panel (`transformer figure-data smoothing confidence`).
set -eu
T=${TRANSFORMER:-./transformer}
C=figures/copy
LIB="$(cat tools/numbers/lib.awk)
"

# total ARGS...: the parameter count that `figure-data architecture ARGS` prints (digits only).
total() { "$T" figure-data architecture "$@" | sed -n 's/^\\newcommand{\\archTotal}{\(.*\)}$/\1/p' | tr -d '\\,'; }
# arch NAME ARGS...: one macro of `figure-data architecture ARGS` (digits only).
arch() { name=$1; shift
         "$T" figure-data architecture "$@" | sed -n "s/^\\\\newcommand{\\\\arch$name}{\\(.*\\)}\$/\\1/p" | tr -d '\\,'; }

# Table 6.1: the three configurations, counted by the program (the test
# parameter_counts_match_pytorch compares the same counts with PyTorch's).
{
  echo "copy $(total --layers 2 --src-vocab 11 --tgt-vocab 11)"
  echo "small $(total --layers 3 --d-model 256 --d-ff 1024 --heads 8 --src-vocab 8000 --tgt-vocab 8000)"
  echo "base $(total)"
  # The big picture: the layers proper of the base model (all but the embeddings and the
  # generator), and its d_model and target vocabulary (the program's defaults, the course's).
  echo "layers $(( $(total) - $(arch EmbeddingTotal) - $(arch GeneratorTotal) ))"
  echo "dmodel $(arch DModel)"
  echo "tgtvocab $(arch TgtVocab)"
  echo "encoderlayer $(arch EncoderLayer)"
  echo "norm $(arch Norm)"
  echo "nlayers $(arch Layers)"
} | awk "$LIB"'
  { v[$1] = $2 }
  END {
    def("courseParametersCopy", grouped(v["copy"]))
    def("courseParametersSmall", grouped(v["small"]))
    def("courseParametersBase", grouped(v["base"]))
    # The paper shares one table of its joint vocabulary (a setting of the paper: about
    # 37 000 byte-pair tokens) among the embeddings and the generator.
    paper_vocab = 37000
    def("courseLayersMillion", fixed(v["layers"] / 1e6, 1))
    def("coursePaperTableMillion", fixed(paper_vocab * v["dmodel"] / 1e6, 1))
    def("coursePaperSumMillion", fixed((v["layers"] + paper_vocab * v["dmodel"]) / 1e6, 1))
    # The floor of a label-smoothed cross-entropy (Chapter 7, Common mistakes), epsilon 0.1,
    # over the course target vocabulary: the entropy of the smoothed target.
    e = 0.1; V = v["tgtvocab"]
    a = -(1 - e) * log(1 - e); b = -e * log(e / (V - 2))
    def("courseSmoothingFloorTarget", fixed(a, 2))
    def("courseSmoothingFloorRest", fixed(b, 2))
    def("courseSmoothingFloor", fixed(a + b, 2))
    # Exercise 1.4: a decoder-only model of the base sizes, N layers without
    # cross-attention (an encoder layer each) and a final norm, one table of the course target
    # vocabulary shared by the embedding and the generator, and the generator bias.
    stack = v["nlayers"] * v["encoderlayer"] + v["norm"]; table = V * v["dmodel"]
    def("courseDecoderOnlyStack", grouped(stack)); def("courseDecoderOnlyTable", grouped(table))
    def("courseDecoderOnlyParameters", grouped(stack + table + V))
  }'

# Figure 7.1, right: where the loss of the figure's data is smallest, and its value there.
"$T" figure-data smoothing confidence | awk "$LIB"'
  /^#/ { next }
  NF == 2 && (min == "" || $2 + 0 < min) { min = $2 + 0; at = $1 }
  END {
    def("courseSmoothingMinimumAt", at)
    s = sprintf("%.1e", min); split(s, part, "e")
    def("courseSmoothingMinimum", "\\ensuremath{" part[1] "\\cdot 10^{" part[2] + 0 "}}")
  }'

# run_macros PREFIX FILE: a run of `transformer copy` (its printed output): the evaluation
# loss, how many of the decoded sequences are exact copies and of how many, and the first
# sequence it did not copy with what it decoded instead.
run_macros() {
  awk -v p="$1" "$LIB"'
    /^evaluation loss/ { loss = $3 }
    $1 == "source" { n++
      if ($NF == "exact") exact++
      else if (bad == "") { src = $2; for (i = 3; i <= 11; i++) src = src " " $i
                            dec = $13; for (i = 14; i <= 22; i++) dec = dec " " $i; bad = 1 } }
    END {
      def(p "Loss", fixed(loss, loss < 1 ? 3 : 1)); def(p "Copied", exact + 0); def(p "Examples", n)
      def(p "Failures", n - exact)
      if (bad) { def(p "FailedSource", "\\mbox{\\texttt{" src "}}"); def(p "FailedDecoded", "\\mbox{\\texttt{" dec "}}") }
      if (n) { def(p "FirstDecoded", "\\mbox{\\texttt{" first "}}") }
    }
    $1 == "source" && n == 1 { first = $13; for (i = 14; i <= 22; i++) first = first " " $i }
  ' "$2"
}
run_macros copytaskFull $C/full.txt          # the course's recipe, bf16: make copy-full
run_macros copytaskDemo $C/demo.txt          # the reduced model of make demo
run_macros copytaskUntrained $C/untrained.txt   # transformer copy --epochs 0
run_macros copytaskNoScale $C/noscale.txt    # the recipe without 1/sqrt(d_k): --no-scale

# log_macros PREFIX LOG: of a run's log, the lowest validation loss and its epoch, the
# validation loss of epoch 7 and of the last epoch (the attention chapter compares the two
# full runs, with and without the scale).
log_macros() {
  awk -F, -v p="$1" "$LIB"'
    NR > 1 { last = $4; if (best == "" || $4 < best) { best = $4; at = $1 }
             if ($1 == 7) seventh = $4 }
    END { def(p "BestValidation", fixed(best, best < 0.1 ? 3 : 2)); def(p "BestEpoch", at)
          def(p "EpochSevenValidation", fixed(seventh, seventh < 0.1 ? 3 : 2))
          def(p "LastValidation", fixed(last, last < 0.1 ? 3 : 2)) }' "$2"
}
log_macros copytaskFull $C/full.csv
log_macros copytaskNoScale $C/noscale.csv

# Table 9.1: the small model, pre/post-norm, warm-up 400/0, seeds 1 2 3: the last epoch's
# validation loss and the count of exact copies; and the first epoch's training loss of the
# run that Figure 9.1 draws (pre-norm, warm-up 400, seed 1).
for norm in pre post; do
  for warmup in 400 0; do
    for seed in 1 2 3; do
      name=$norm-w$warmup-s$seed
      echo "$norm $warmup $seed $(tail -n 1 $C/experiments/$name.csv | cut -d, -f4) \
$(grep -c ' exact$' $C/experiments/$name.txt || true) $(sed -n 2p $C/experiments/$name.csv | cut -d, -f3)"
    done
  done
done | awk "$LIB"'
  { key = ($1 == "pre" ? "Pre" : "Post") ($2 == 0 ? "Cold" : "Warm")
    loss[key] = loss[key] (loss[key] == "" ? "" : ", ") fixed($4, 3)
    copied[key] = copied[key] (copied[key] == "" ? "" : ", ") $5
    sum[key] += $4
    if (key == "PreWarm" && $3 == 1) first = $6 }
  END {
    for (k in loss) { def("copytask" k "Losses", loss[k]); def("copytask" k "Copied", copied[k]) }
    def("copytaskNormRatio", fixed(sum["PostWarm"] / sum["PreWarm"], 0))
    def("copytaskSmallFirstLoss", fixed(first, 1))
  }'
