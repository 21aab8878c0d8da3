#!/bin/sh
# How sure the shipped translator is against how often it is right (the translation chapter,
# What the loss does not say): the totals that `transformer calibration` writes as comment
# lines of figures/calibration.dat, the data of the reliability diagram (one run for both).
# \calPredictions: pieces of the validation set predicted; \calAccuracy, \calConfidence: the
# share of them right and the mean confidence, in percent; \calNll: the negative
# log-likelihood per piece; \calEce: the expected calibration error, in points of percent;
# \calTopShare: the percentage of predictions in the last bin, \calTopLow its lower bound,
# \calTopConfidence their mean confidence, \calTopAccuracy the percentage of them right;
# \calDirection: over-confident or under-confident (mean confidence above or below accuracy).
# The same of the recipe trained without label smoothing, recorded in
# figures/multi30k/no-smoothing/calibration.dat: \calNs... .
set -eu
LIB="$(cat tools/numbers/lib.awk)
"
table() {   # table FILE PREFIX CHECK: the macros of one table; CHECK 1: the chapter's claims
awk -v k="$2" -v check="$3" "$LIB"'
  /^# predictions / { n = $3 } /^# accuracy / { acc = $3 } /^# confidence / { conf = $3 }
  /^# nll / { nll = $3 } /^# ece / { ece = $3 }
  /^[0-9]/ { last_low = $1; last_count = $3; last_conf = $4; last_acc = $5; count[++bins] = $3 }
  END {
    if (!n || !bins) { print "calibration.sh: " FILENAME " has no table" > "/dev/stderr"; exit 1 }
    # The chapter says the points lie close to the diagonal and the last bin is the fullest.
    if (check && ece > 0.05) { print "calibration.sh: ECE " ece " is not close to the diagonal (the text says so)" > "/dev/stderr"; exit 1 }
    for (b = 1; b < bins; b++) if (check && count[b] >= last_count) {
      print "calibration.sh: bin " b " holds as many as the last (the text says the last is the fullest)" > "/dev/stderr"; exit 1 }
    def(k "Predictions", grouped(n)); def(k "Accuracy", fixed(100 * acc, 1))
    def(k "Confidence", fixed(100 * conf, 1)); def(k "Nll", fixed(nll, 3))
    def(k "Ece", fixed(100 * ece, 1)); def(k "Bins", bins)
    def(k "TopShare", fixed(100 * last_count / n, 0)); def(k "TopLow", fixed(last_low, 2))
    def(k "TopConfidence", fixed(last_conf, 2)); def(k "TopAccuracy", fixed(100 * last_acc, 0))
    def(k "Direction", conf > acc ? "over-confident" : "under-confident")
  }' "$1"
}
table figures/calibration.dat cal 1
table figures/multi30k/no-smoothing/calibration.dat calNs 0
