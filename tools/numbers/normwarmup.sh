#!/bin/sh
# The arms of figures/norm-warmup/run-multi30k.sh recorded in figures/norm-warmup/multi30k/
# (the copy chapter's table of warm-up and rate on translation): per run NORM-ARM-s1, the
# validation loss of its last epoch and its best with that epoch, and the run's identity
# (trainer commit, processor, threads) from NAME.run.txt. The build fails if a log the table
# reads is missing or shorter than its recipe's epochs.
set -eu
LIB="$(cat "$(dirname "$0")/lib.awk")"
D=figures/norm-warmup/multi30k
for norm in pre post; do
  for arm in w800 rpeak r0.001; do
    name=$norm-$arm-s1
    epochs=$(sed -n 's/^recipe:.*--epochs \([0-9]*\).*/\1/p' "$D/$name.run.txt")
    Macro=$(echo "$norm $arm" | awk '{ n = toupper(substr($1, 1, 1)) substr($1, 2)
                                         a = $2 == "w800" ? "Warm" : $2 == "rpeak" ? "Peak" : "Fixed"
                                         print n a }')
    awk -F, -v epochs="$epochs" -v name="$Macro" -v file="$D/$name.csv" "$LIB"'
      NR > 1 { last = $4; train = $3; n = $1; if (best == "" || $4 < best) { best = $4; at = $1 } }
      NR > 1 && $1 == 5 { five = $4 }
      END {
        if (n != epochs) { print "tools/numbers/normwarmup.sh: " file " has " n " of " epochs " epochs" > "/dev/stderr"; exit 1 }
        def("nwMt" name "Last", fixed(last, 3)); def("nwMt" name "Best", fixed(best, 3))
        def("nwMt" name "BestEpoch", at); def("nwMt" name "Five", fixed(five, 3))
        def("nwMt" name "TrainLast", fixed(train, 3))
      }' "$D/$name.csv"
  done
done
awk -F': ' "$LIB"'
  $1 == "commit" { commit = $2 } $1 == "processor" { cpu = $2 } $1 == "threads" { threads = $2 }
  $1 == "recipe" { match($2, /--subset [0-9]+/); subset = substr($2, RSTART + 9, RLENGTH - 9)
                   match($2, /--epochs [0-9]+/); epochs = substr($2, RSTART + 9, RLENGTH - 9) }
  END { gsub(/\(R\)/, "", cpu); def("nwMtCommit", commit); def("nwMtProcessor", cpu)
        def("nwMtThreads", threads); def("nwMtSubset", grouped(subset)); def("nwMtEpochs", epochs) }' \
  "$D/pre-w800-s1.run.txt"
# The arm at 10^-3 was run later, by another commit of the trainer (which trains as the first
# did: tools/same-bits), on the same machine.
awk -F': ' "$LIB"'$1 == "commit" { def("nwMtCommitFixed", $2) }' "$D/pre-r0.001-s1.run.txt"
# A second seed of two post-norm arms (the warm-up and 10^-3), run later still: the best
# validation loss with the warm-up, the last training and validation losses at 10^-3.
for name in post-w800-s2 post-r0.001-s2; do
  epochs=$(sed -n 's/^recipe:.*--epochs \([0-9]*\).*/\1/p' "$D/$name.run.txt")
  awk -F, -v epochs="$epochs" -v name="$name" -v file="$D/$name.csv" "$LIB"'
    NR > 1 { last = $4; train = $3; n = $1; if (best == "" || $4 < best) best = $4 }
    END {
      if (n != epochs) { print "tools/numbers/normwarmup.sh: " file " has " n " of " epochs " epochs" > "/dev/stderr"; exit 1 }
      if (name ~ /w800/) def("nwMtPostWarmBestSeedTwo", fixed(best, 3))
      else { def("nwMtPostFixedLastSeedTwo", fixed(last, 3)); def("nwMtPostFixedTrainLastSeedTwo", fixed(train, 3)) }
    }' "$D/$name.csv"
done
awk -F': ' "$LIB"'$1 == "commit" { def("nwMtCommitSeedTwo", $2) }' "$D/post-w800-s2.run.txt"
