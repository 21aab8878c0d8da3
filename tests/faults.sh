#!/bin/bash
# tests/faults.sh -- fault injection (issue 19): what a killed laptop, a full disk and two
# runs at once do to the checkpoint and the model. Run by `make check`; about a minute.
#
#   1. kill -9 at a random moment of copy training that checkpoints every step (most of a
#      step's time is the save's fsync, so many kills land inside a save): the checkpoint
#      left behind must load and the run must resume; the temporary file of an interrupted
#      save must be gone after the resume.
#   2. kill -9 at a random moment of translation training (the model is saved at the end of
#      each epoch): the model left behind must translate; the model's temporary files must be
#      gone after the next run starts.
#   3. Write failures: the log on /dev/full (ENOSPC); the checkpoint and the model past a
#      file-size limit (ulimit -f, EFBIG, SIGXFSZ ignored): one line, status 1, and the
#      previous checkpoint or model unchanged and usable.
#   4. Two runs started at once on one checkpoint: one is refused with one line, status 1;
#      the checkpoint left loads.
#
# Usage: tests/faults.sh [KILL_TRIALS [MODEL_TRIALS]]   (defaults 40 and 12)
# Prints one summary line per part; exits 1 at the first broken promise.
set -u
T=${TRANSFORMER:-./transformer}
T=$(cd "$(dirname "$T")" && pwd)/$(basename "$T")
DATA=$(pwd)/data/multi30k
KILLS=${1:-40}
MODEL_KILLS=${2:-12}
WORK=$(mktemp -d /tmp/transformer-faults-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
RANDOM=19   # a fixed sequence of moments: the same trials every time
fail() { echo "faults.sh: $*" >&2; exit 1; }
COPY=(copy --epochs 30 --batches 20 --batch-size 8 --layers 1 --d-model 16 --d-ff 32 --heads 2)

# ---- 1. kill -9 during copy training and its saves
in_save=0 with_checkpoint=0
for ((trial = 1; trial <= KILLS; trial++)); do
  rm -f c.st c.st.*
  "$T" "${COPY[@]}" --checkpoint c.st --checkpoint-every 1 > /dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 6))$((RANDOM % 10))"   # 0 to 0.59 s
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  ls c.st.?????? > /dev/null 2>&1 && in_save=$((in_save + 1))
  [ -e c.st ] || continue   # killed before the first save: nothing to resume
  with_checkpoint=$((with_checkpoint + 1))
  out=$("$T" "${COPY[@]}" --resume c.st --stop-after 1 2>&1) \
    || fail "kill trial $trial: the resume failed: $out"
  case "$out" in *"stopped after step"*) ;; *) fail "kill trial $trial: $out" ;; esac
  ! ls c.st.?????? > /dev/null 2>&1 || fail "kill trial $trial: a temporary file is left"
done
echo "kill -9 during training: $KILLS trials, $in_save inside a save, $with_checkpoint resumed"

# ---- 2. kill -9 during translation training and its model saves
head -40 "$DATA/train.de" > train.de && cp train.de val.de
head -40 "$DATA/train.en" > train.en && cp train.en val.en
TRAIN=(train --data . --layers 1 --d-model 16 --d-ff 32 --heads 2 --token-budget 200
       --model m.st --checkpoint t.st)
model_saves=0 models=0
for ((trial = 1; trial <= MODEL_KILLS; trial++)); do
  rm -f t.st t.st.lock
  "$T" "${TRAIN[@]}" --epochs 200 > /dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 5 + 1))$((RANDOM % 10))"   # 0.1 to 0.59 s
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  ls m.st.?????? > /dev/null 2>&1 && model_saves=$((model_saves + 1))
  if [ -e m.st ]; then
    models=$((models + 1))
    echo "ein Hund" | "$T" translate --model m.st > /dev/null 2> err.txt \
      || fail "model trial $trial: the model does not load: $(cat err.txt)"
  fi
  "$T" "${TRAIN[@]}" --epochs 1 --stop-after 1 > /dev/null 2> err.txt \
    || fail "model trial $trial: the next run failed: $(cat err.txt)"
  ! ls m.st.?????? > /dev/null 2>&1 || fail "model trial $trial: a temporary model is left"
done
echo "kill -9 during translation training: $MODEL_KILLS trials, $model_saves inside a" \
     "model save, $models models loaded"

# ---- 3. write failures: log, checkpoint, model
out=$("$T" "${COPY[@]}" --epochs 1 --log /dev/full 2>&1 > /dev/null) && fail "log on /dev/full: status 0"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == *"/dev/full: cannot write the log: No space left on device"* ]] \
  || fail "log on /dev/full: '$out'"
rm -f c.st && "$T" "${COPY[@]}" --epochs 1 --checkpoint c.st > /dev/null 2>&1
[ -e c.st ] || fail "no checkpoint to start from"
cp c.st c.bak
size=$(( $(stat -c %s c.st) / 1024 / 2 ))   # half the checkpoint, in ulimit's kB
out=$( (trap '' XFSZ; ulimit -f "$size"; "$T" "${COPY[@]}" --epochs 2 --resume c.st) 2>&1 > /dev/null) \
  && fail "checkpoint past the size limit: status 0"
[[ $out == *"c.st: cannot write: File too large"* ]] || fail "checkpoint write failure: '$out'"
cmp -s c.st c.bak || fail "the checkpoint changed after a failed save"
"$T" "${COPY[@]}" --resume c.st --stop-after 1 > /dev/null 2>&1 || fail "no resume after a failed save"
"$T" "${TRAIN[@]}" --epochs 1 > /dev/null 2>&1 && [ -e m.st ] || fail "no model to start from"
cp m.st m.bak
size=$(( $(stat -c %s m.st) / 1024 / 2 ))
out=$( (trap '' XFSZ; ulimit -f "$size"; "$T" "${TRAIN[@]}" --epochs 1 --checkpoint t2.st) 2>&1 > /dev/null) \
  && fail "model past the size limit: status 0"
[[ $out == *"m.st: cannot write: File too large"* ]] || fail "model write failure: '$out'"
cmp -s m.st m.bak || fail "the model changed after a failed save"
echo "ein Hund" | "$T" translate --model m.st > /dev/null 2>&1 || fail "the model no longer loads"
echo "write failures: log on /dev/full, checkpoint and model past a size limit: refused" \
     "with one line, previous files intact"

# ---- 4. two runs at once on one checkpoint
refused=0
for ((round = 1; round <= 5; round++)); do
  rm -f c.st
  "$T" "${COPY[@]}" --epochs 3 --checkpoint c.st > a.out 2> a.err &
  a=$!
  "$T" "${COPY[@]}" --epochs 3 --checkpoint c.st > b.out 2> b.err &
  b=$!
  wait $a; sa=$?
  wait $b; sb=$?
  for x in a b; do
    if grep -q "c.st is in use by another run" $x.err; then
      refused=$((refused + 1))
      status=$([ $x = a ] && echo $sa || echo $sb)
      [ "$(wc -l < $x.err)" = 1 ] && [ "$status" = 1 ] && [ ! -s $x.out ] \
        || fail "round $round: refused with status $status: $(cat $x.err)"
    fi
  done
  "$T" "${COPY[@]}" --epochs 4 --resume c.st --stop-after 1 > /dev/null 2> err.txt \
    || fail "round $round: the checkpoint does not load: $(cat err.txt)"
done
[ $refused -ge 4 ] || fail "two runs at once: only $refused of 5 second runs were refused"
echo "two runs on one checkpoint: 5 rounds, $refused second runs refused, checkpoint loads"
trials=$((KILLS + MODEL_KILLS + 3 + 5))
echo "faults.sh: $trials trials passed"
