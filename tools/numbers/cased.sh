#!/bin/sh
# Recaser or cased training (the chapter Capital letters, "Or train on cased text?"): the run
# of the recipe on machine C (figures/multi30k/spread/machine-c/, lowercase training and the
# recaser) against the same recipe, seed, machine and trainer trained on cased text
# (figures/multi30k/cased-training/, tests/exercises/cased-training.patch). \cs...: the cased
# run; \csBase...: the recaser's; both on test2016 with the beam, cased (sacreBLEU's default)
# and lowercased; \csP: the p-value of paired bootstrap resampling (cased, 1000 resamples).
# The chapter says the recaser's run scores higher both ways and significantly: checked here.
set -eu
T=${TRANSFORMER:-./transformer}
M=figures/multi30k
REF=data/multi30k/test2016.en
score() { "$T" bleu "$@" | awk '/^BLEU/ { print $3; exit }'; }
base=$M/spread/machine-c/test2016.beam4.en
cased=$M/cased-training/test2016.beam4.en
b=$(score "$base" $REF); bl=$(score "$base" $REF --lowercase)
c=$(score "$cased" $REF); cl=$(score "$cased" $REF --lowercase)
p=$("$T" bleu --paired-bs "$base" "$cased" $REF | awk '/^p = / { sub(/:$/, "", $3); print $3 }')
LIB="$(cat tools/numbers/lib.awk)
"
awk -F, -v b="$b" -v bl="$bl" -v c="$c" -v cl="$cl" -v p="$p" "$LIB"'
  FNR > 1 { epochs = $1; seconds = $6; if (best == "" || $4 < best) best = $4 }
  END {
    if (!(b + 0 > c + 0 && bl + 0 > cl + 0 && p + 0 < 0.05)) {
      print "cased.sh: the recaser no longer wins significantly (" b "/" bl " against " c "/" cl ", p = " p "); the chapter says it does" > "/dev/stderr"; exit 1 }
    def("csEpochs", epochs); def("csMinutes", fixed(seconds / 60, 0))
    def("csBleu", c); def("csBleuLower", cl); def("csBaseBleu", b); def("csBaseBleuLower", bl)
    def("csGap", fixed(b - c, 2)); def("csGapLower", fixed(bl - cl, 2)); def("csP", p)
  }' $M/cased-training/log.csv
