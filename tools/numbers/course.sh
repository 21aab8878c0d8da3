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
    # The floor of a label-smoothed cross-entropy (the chapter on label smoothing, Common mistakes), epsilon 0.1,
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

# The copy chapter's Two experiments (its table and figures/norm-warmup.gp): the small model,
# pre- and post-norm, in four arms of the learning rate, seeds 1 2 3 (figures/copy/run-small.sh):
#   Warm  w400    the schedule, warm-up 400;     Cold  w0      the schedule without warm-up;
#   Peak  rpeak   the schedule's peak, constant; Fixed r0.001  a constant 10^-3.
# Per norm and arm: the last epoch's validation loss of each seed, the exact copies of each,
# their sum and the sequences decoded (of the arm's three runs), and the mean of the three
# losses; post-norm's losses over pre-norm's (the sums of the seeds) with the warm-up and at
# the constant peak; the first epoch's training loss of the run that Figure 9.1 draws
# (pre-norm, warm-up 400, seed 1). The schedule's rates are computed
# from its settings (factor 0.5, d_model 32, warm-up 400; the learning-rate schedule): its peak, the rate of
# the first step without warm-up, and their ratio (w^1/2). The peak is also checked against
# the rate that the rpeak runs logged.
for norm in pre post; do
  for arm in w400 w0 rpeak r0.001; do
    for seed in 1 2 3; do
      name=$norm-$arm-s$seed
      echo "$norm $arm $seed $(tail -n 1 $C/experiments/$name.csv | cut -d, -f4) \
$(grep -c ' exact$' $C/experiments/$name.txt || true) $(grep -c '^ *source ' $C/experiments/$name.txt || true) $(sed -n 2p $C/experiments/$name.csv | cut -d, -f3) \
$(tail -n 1 $C/experiments/$name.csv | cut -d, -f5)"
    done
  done
done | awk "$LIB"'
  BEGIN { arm["w400"] = "Warm"; arm["w0"] = "Cold"; arm["rpeak"] = "Peak"; arm["r0.001"] = "Fixed"
          f = 0.5; d = 32; w = 400
          peak = f / sqrt(d * w); cold = f / sqrt(d) }
  { key = ($1 == "pre" ? "Pre" : "Post") arm[$2]
    loss[key] = loss[key] (loss[key] == "" ? "" : ", ") fixed($4, 3)
    copied[key] = copied[key] (copied[key] == "" ? "" : ", ") $5
    sum[key] += $4; exact[key] += $5; runs[key]++
    decoded[key] += $6
    if (key == "PreWarm" && $3 == 1) first = $7
    if ($2 == "rpeak" && ($8 - peak > 1e-5 * peak || peak - $8 > 1e-5 * peak)) {
      print "course.sh: the rpeak run " $1 " " $3 " logged the rate " $8 ", not the peak " peak > "/dev/stderr"
      bad = 1; exit 1 } }
  END {
    if (bad) exit 1
    for (k in loss) { def("copytask" k "Losses", loss[k]); def("copytask" k "Copied", copied[k])
                      def("copytask" k "CopiedTotal", exact[k]); def("copytask" k "Mean", fixed(sum[k] / runs[k], 3)) }
    def("copytaskRuns", runs["PreWarm"]); def("copytaskDecodedPerArm", decoded["PreWarm"])
    def("copytaskNormRatio", fixed(sum["PostWarm"] / sum["PreWarm"], 0))
    def("copytaskNormRatioPeak", fixed(sum["PostPeak"] / sum["PrePeak"], 0))
    def("copytaskSmallFirstLoss", fixed(first, 1))
    def("copytaskPeakRate", fixed(peak, 4))
    def("copytaskColdRate", fixed(cold, 3))
    def("copytaskColdRatio", fixed(cold / peak, 0))
  }'
