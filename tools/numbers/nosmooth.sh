#!/bin/sh
# The recipe without label smoothing (the translation chapter, What the loss does not say):
# `make multi30k` with --smoothing 0 on machine C, seed 1, recorded in
# figures/multi30k/no-smoothing/ (run.txt, log.csv with --validate-bleu, the test2016
# translations with the beam, and calibration.dat: `transformer calibration` of its best model
# rounded to bfloat16 as the shipped one is), against the same recipe with smoothing on the
# same machine, figures/multi30k/loss-bleu/.
# \nsEpochs, \nsMinutes; \nsBest and \nsBestEpoch: its lowest validation loss (with
# epsilon = 0 the plain negative log-likelihood per piece) and its epoch; \nsLast: the last
# epoch's loss; \nsBleuAtBest: the greedy validation BLEU at the best epoch, \nsBleuLast at
# the last; \nsRise: a sentence on the loss after its best epoch against BLEU;
# \nsTestBleuCased, \nsTestBleu: test2016 with the beam (cased, lowercased), \nsSmoothBleuCased
# the smoothed run's, \nsP their paired bootstrap p-value and \nsVerdict its reading;
# \nsNllPhrase: its negative log-likelihood against the shipped model's (the paper: smoothing
# "hurts perplexity"); \nsEcePhrase: its ECE against the shipped model's.
set -eu
T=${TRANSFORMER:-./transformer}
M=figures/multi30k
NS=$M/no-smoothing SM=$M/loss-bleu
LIB="$(cat tools/numbers/lib.awk)
"
grep -q -- '--smoothing 0' $NS/run.txt || { echo "nosmooth.sh: $NS/run.txt is not a run with --smoothing 0" >&2; exit 1; }
awk -F, "$LIB"'
  FNR == 1 { if ($9 != "validation_bleu") { print "nosmooth.sh: the log has no validation_bleu column" > "/dev/stderr"; exit 1 } next }
  { e = $1; loss[e] = $4; bleu[e] = $9; seconds = $6
    if (best == "" || $4 < best) { best = $4; at = e } }
  END {
    def("nsEpochs", e); def("nsMinutes", fixed(seconds / 60, 1))
    def("nsBest", fixed(best, 4)); def("nsBestEpoch", at); def("nsLast", fixed(loss[e], 4))
    def("nsBleuAtBest", fixed(bleu[at], 2)); def("nsBleuLast", fixed(bleu[e], 2))
    if (e - at <= 2) rise = sprintf("its validation loss, the plain negative log-likelihood, fell nearly to the end (lowest at epoch %d of %d, %s per piece), as the smoothed run\047s did: within this budget neither run shows the loss rising while BLEU goes on improving", at, e, fixed(best, 4))
    else {
      up = 0; for (k = at + 1; k <= e; k++) if (bleu[k] > bleu[at]) up++
      rise = sprintf("its validation loss, the plain negative log-likelihood, was lowest at epoch %d (%s per piece) and rose to %s by epoch %d, while the validation BLEU, %s at epoch %d, was higher than that in %d of the %d epochs after it (%s at the last)", at, fixed(best, 4), fixed(loss[e], 4), e, fixed(bleu[at], 2), at, up, e - at, fixed(bleu[e], 2))
    }
    def("nsRise", rise)
  }' $NS/log.csv
ref=data/multi30k/test2016.en
work=${TMPDIR:-/tmp}/nosmooth.$$
mkdir -p "$work"
"$T" recase < $NS/test2016.beam4.en > "$work/ns"
"$T" recase < $SM/test2016.beam4.en > "$work/sm"
"$T" bleu $NS/test2016.beam4.en $ref --lowercase | awk "$LIB"'/^BLEU/ { def("nsTestBleu", fixed($3, 2)) }'
"$T" bleu --paired-bs "$work/sm" "$work/ns" $ref | awk "$LIB"'
  /^BLEU = / { k++; if (k == 1) def("nsSmoothBleuCased", fixed($3, 2)); else def("nsTestBleuCased", fixed($3, 2)) }
  /^p = / { p = $3; sub(/:$/, "", p); def("nsP", p)
            def("nsVerdict", p < 0.05 ? "a significant difference" : "not a significant difference") }'
rm -rf "$work"
# The two reliability tables' totals (figures/calibration.dat, the shipped model's).
awk "$LIB"'
  FNR == 1 { file++ }
  /^# nll / { nll[file] = $3 } /^# ece / { ece[file] = $3 }
  END {
    if (nll[1] == "" || nll[2] == "") { print "nosmooth.sh: a calibration table has no totals" > "/dev/stderr"; exit 1 }
    def("nsNllPhrase", nll[2] < nll[1] ? "lower, as the paper says of smoothing that it hurts perplexity" : "higher: on this data smoothing did not cost likelihood, as the paper found it cost perplexity on its own, but the unsmoothed model\047s extra sureness cost it where it is wrong")
    def("nsEcePhrase", ece[2] > ece[1] ? "farther from the diagonal" : "no farther from the diagonal")
    better = (nll[2] >= nll[1]) + (ece[2] > ece[1])
    def("nsSummary", better == 2 ? "On this data and budget smoothing bought a model both better calibrated and more likely" : "Smoothing\047s gains on this data are mixed: the numbers above say which")
  }' figures/calibration.dat $NS/calibration.dat
