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
set -eu
LIB="$(cat tools/numbers/lib.awk)
"
awk "$LIB"'
  /^# predictions / { n = $3 } /^# accuracy / { acc = $3 } /^# confidence / { conf = $3 }
  /^# nll / { nll = $3 } /^# ece / { ece = $3 }
  /^[0-9]/ { last_low = $1; last_count = $3; last_conf = $4; last_acc = $5; count[++bins] = $3 }
  END {
    if (!n || !bins) { print "calibration.sh: figures/calibration.dat has no table" > "/dev/stderr"; exit 1 }
    # The chapter says the points lie close to the diagonal and the last bin is the fullest.
    if (ece > 0.05) { print "calibration.sh: ECE " ece " is not close to the diagonal (the text says so)" > "/dev/stderr"; exit 1 }
    for (b = 1; b < bins; b++) if (count[b] >= last_count) {
      print "calibration.sh: bin " b " holds as many as the last (the text says the last is the fullest)" > "/dev/stderr"; exit 1 }
    def("calPredictions", grouped(n)); def("calAccuracy", fixed(100 * acc, 1))
    def("calConfidence", fixed(100 * conf, 1)); def("calNll", fixed(nll, 3))
    def("calEce", fixed(100 * ece, 1)); def("calBins", bins)
    def("calTopShare", fixed(100 * last_count / n, 0)); def("calTopLow", fixed(last_low, 2))
    def("calTopConfidence", fixed(last_conf, 2)); def("calTopAccuracy", fixed(100 * last_acc, 0))
    def("calDirection", conf > acc ? "over-confident" : "under-confident")
  }' figures/calibration.dat
