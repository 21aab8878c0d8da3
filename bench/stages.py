#!/usr/bin/python3
"""What each optimization of the chapter Making it fast bought: the C trainer alone, three settings.

Runs `transformer benchmark` for each configuration of bench/bench.py and each thread
count with the optimizations of the chapter switched on one after the other, through the
environment switches of the trainer:

  openblas   TRANSFORMER_PRODUCTS=openblas TRANSFORMER_KERNELS=reference
             (OpenBLAS threads its products itself; the chapters' first kernels)
  split      TRANSFORMER_KERNELS=reference
             (the products cut between our own OpenMP threads; the first kernels)
  fast       (the default: split products and the faster kernels)

R repetitions of each, the three settings in turns (rotated each repetition), and prints
the median rate of each, in tokens/s (sentences/s for decode). --dat writes the table for
gnuplot (figures/bench-stages.gp): config threads openblas split fast.

    bench/stages.py [--configs copy,small,base,decode] [--threads 1,2] [--repeats 2]
                    [--binary ./transformer] [--dat FILE]
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
from bench import TRAIN_CONFIGS, DECODE_CONFIG, ALL_CONFIGS, ROOT, parse_line, progress, shown

STAGES = (("openblas", {"TRANSFORMER_PRODUCTS": "openblas", "TRANSFORMER_KERNELS": "reference"}),
          ("split", {"TRANSFORMER_KERNELS": "reference"}),
          ("fast", {}))


def command(binary, name, threads):
    if name == "decode":
        c = DECODE_CONFIG
        return [binary, "benchmark", "decode", "--layers", str(c["layers"]),
                "--d-model", str(c["d_model"]), "--d-ff", str(c["d_ff"]),
                "--heads", str(c["heads"]), "--vocab", str(c["vocab"]), "--len", str(c["len"]),
                "--sentences", str(c["sentences"]), "--warmup-sentences", str(c["warmup"]),
                "--threads", str(threads)], "c decode", "sentences_per_s"
    c = TRAIN_CONFIGS[name]
    return [binary, "benchmark", "train", "--layers", str(c["layers"]),
            "--d-model", str(c["d_model"]), "--d-ff", str(c["d_ff"]), "--heads", str(c["heads"]),
            "--vocab", str(c["vocab"]), "--batch", str(c["batch"]), "--len", str(c["len"]),
            "--steps", str(c["steps"]), "--warmup-steps", str(c["warmup"]),
            "--threads", str(threads), "--precision", "fp32"], "c train", "tokens_per_s"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default=",".join(ALL_CONFIGS))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--binary", default=os.path.join(ROOT, "transformer"))
    p.add_argument("--dat", default=None)
    args = p.parse_args()
    rows = []
    for name in args.configs.split(","):
        for threads in [int(t) for t in args.threads.split(",")]:
            argv, prefix, key = command(args.binary, name, threads)
            rates = {stage: [] for stage, _ in STAGES}
            for r in range(args.repeats):
                for s in range(len(STAGES)):
                    stage, extra = STAGES[(s + r) % len(STAGES)]
                    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **extra)
                    progress("%s threads=%d %s rep=%d" % (name, threads, stage, r + 1))
                    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
                    if done.returncode != 0:
                        sys.exit("run failed: %s\n%s" % (" ".join(argv), done.stderr))
                    values, _ = parse_line(done.stdout, prefix, (key,), name)
                    rates[stage].append(values[key])
            rows.append((name, threads, [statistics.median(rates[s]) for s, _ in STAGES]))
    print("environment: " + " ".join("%s=%s" % (k, os.environ.get(k, "(unset)")) for k in
          ("OMP_WAIT_POLICY", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")) + "; binary " + shown(args.binary))
    print("%-7s %7s  %10s %10s %10s   %s" % ("config", "threads", "openblas", "split", "fast",
                                            "(median tokens/s; sentences/s for decode)"))
    for name, threads, medians in rows:
        print("%-7s %7d  %10.1f %10.1f %10.1f" % ((name, threads) + tuple(medians)))
    if args.dat:
        with open(args.dat, "w") as f:
            f.write("# bench/stages.py: config threads openblas split fast "
                    "(median tokens/s; sentences/s for decode)\n")
            for name, threads, medians in rows:
                f.write("%s %d %.2f %.2f %.2f\n" % ((name, threads) + tuple(medians)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
