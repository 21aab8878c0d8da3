#!/usr/bin/python3
"""Training and decoding speed, the C trainer against the PyTorch reference.

For each configuration and each thread count, runs `transformer benchmark ...` (C) and
bench/train_pytorch.py (PyTorch, the notebook's model from bench/copy_pytorch.py) R
times each, in turns: repetition r runs C first when r is odd and PyTorch first when r
is even. Each run prints one key=value line; this script keeps them all and prints a
table of medians, the ratio C/PyTorch, the C trainer's model FLOP rate against the rate
of OpenBLAS's sgemm on the same product shapes, peak memory, and whether the targets
are met. See bench/BENCH.md.

    bench/bench.py [--configs copy,small,base,decode] [--threads 1,2] [--repeats 3]
                   [--steps S] [--warmup-steps W] [--sentences K] [--warmup-sentences W]
                   [--binary ./transformer] [--unset-openblas-env]
                   [--omp-wait-policy PASSIVE] [--out DIR] [--dat FILE]
                   [--precisions fp32[,bf16]] [--precision-dat FILE]

With --precisions fp32,bf16 every training configuration also runs the C trainer with
--precision bf16 and PyTorch under torch.autocast(bfloat16), and a second table compares
the four (see BENCH.md).

Exit status: 0 when every run succeeded (whether or not the targets are met: this is a
measurement), 1 when a run failed (its stderr is shown), 2 for bad options.
"""

import argparse
import datetime
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"
PYTORCH_SCRIPT = os.path.join(HERE, "train_pytorch.py")

# name: layers, d_model, d_ff, heads, batch, len, vocab, and the default steps and
# warm-up steps, chosen so that one PyTorch run takes about 5-15 s on the 2-core machine
# (PyTorch 1.13, 2026-11: copy 0.55-0.8 s a step, small 1.6-1.7 s, base 2.6-4.4 s).
TRAIN_CONFIGS = {
    "copy":  dict(layers=2, d_model=512, d_ff=2048, heads=8, batch=80, len=10, vocab=11,
                  steps=10, warmup=3),
    "small": dict(layers=3, d_model=256, d_ff=1024, heads=8, batch=64, len=32, vocab=8000,
                  steps=5, warmup=2),
    "base":  dict(layers=6, d_model=512, d_ff=2048, heads=8, batch=32, len=32, vocab=8000,
                  steps=2, warmup=1),
}
# greedy decoding of single sentences with the base model: 0.4-0.5 s a sentence
DECODE_CONFIG = dict(layers=6, d_model=512, d_ff=2048, heads=8, batch=1, len=20,
                     vocab=8000, sentences=10, warmup=2)
ALL_CONFIGS = list(TRAIN_CONFIGS) + ["decode"]

TRAIN_KEYS = ("tokens_per_s", "step_ms", "steps", "tokens_per_step", "peak_rss_mib",
              "params", "threads")
C_TRAIN_KEYS = TRAIN_KEYS + ("flops_per_step", "sgemm_gflops")
DECODE_KEYS = ("sentences_per_s", "peak_rss_mib", "threads")

# The goals of the speed chapter (Making it fast), each against one baseline: training at
# least twice PyTorch's speed in float (judged for C in fp32 and in bf16), a model FLOP rate
# of at least 55% of the sgemm rate (fp32), no more peak memory than PyTorch, and translating
# at least ten times as fast as the reference's greedy_decode (make bench-translate; the
# decode rows here time one sentence at a time, which is bound by memory, and are shown
# against the same ratio for reference only).
TARGET_TRAIN_RATIO = 2.0
TARGET_DECODE_RATIO = 10.0
TARGET_PCT_SGEMM = 55.0
TARGET_BF16_OVER_PT_FP32 = TARGET_TRAIN_RATIO


class RunFailed(Exception):
    pass


def progress(text):
    print(text, file=sys.stderr, flush=True)


def model_flops_per_step(c):
    """Matrix-product FLOPs of one training step of the notebook's model, counted densely
    (2*m*n*k per product, masked attention scores included): the forward products, and
    in the backward pass two products of the same size for each (the gradients of both
    operands: every operand is a weight or an activation that needs its gradient, down
    to the embeddings). So 3 times the forward count."""
    B, L, D, F, V, N = c["batch"], c["len"], c["d_model"], c["d_ff"], c["vocab"], c["layers"]
    Ls, Lt = L, L - 1
    ns, nt = B * Ls, B * Lt
    enc = 4 * 2 * ns * D * D + 2 * 2 * B * Ls * Ls * D + 2 * 2 * ns * D * F
    dec = (4 * 2 * nt * D * D + 2 * 2 * B * Lt * Lt * D            # self-attention
           + 2 * 2 * nt * D * D + 2 * 2 * ns * D * D + 2 * 2 * B * Lt * Ls * D  # source
           + 2 * 2 * nt * D * F)
    gen = 2 * nt * D * V
    return 3 * (N * (enc + dec) + gen)


def parse_line(stdout, prefix, keys, what):
    lines = [l for l in stdout.splitlines() if l.split()[:2] == prefix.split()]
    if not lines:
        raise RunFailed("%s: no line starting with '%s' on stdout" % (what, prefix))
    values = {}
    for field in lines[-1].split()[2:]:
        if "=" in field:
            k, v = field.split("=", 1)
            try:
                values[k] = float(v)
            except ValueError:
                values[k] = v
    missing = [k for k in keys if k not in values]
    if missing:
        raise RunFailed("%s: the line '%s' lacks %s" % (what, lines[-1], ", ".join(missing)))
    return values, lines[-1]


def sha256_prefix(path, n=12):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:n]


def command_output(cmd, default="?"):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, timeout=60).stdout.strip() or default
    except (OSError, subprocess.SubprocessError):
        return default


def shown(path):
    """A path as the recorded output names it: relative to the repository when inside it
    (recorded files must not name the directory of a checkout), else its last component."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return "%s (outside the repository)" % os.path.basename(path.rstrip(os.sep))
    return rel if os.sep in rel else os.path.join(os.curdir, rel)


def processor():
    """The processor's model name (lscpu), which a recorded table names."""
    for line in command_output(["lscpu"], "").splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "?"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def fmt_rate(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def fmt_opt(x, spec):
    return "-" if x is None else spec % x


class Bench:
    def __init__(self, args):
        self.args = args
        self.out = args.out
        self.runs_log = open(os.path.join(self.out, "runs.txt"), "a")
        base = dict(os.environ)
        if args.unset_openblas_env:
            base.pop("OPENBLAS_CORETYPE", None)
            base.pop("OPENBLAS_L2_SIZE", None)
        if args.omp_wait_policy == "unset":
            base.pop("OMP_WAIT_POLICY", None)
        else:
            base["OMP_WAIT_POLICY"] = args.omp_wait_policy
        self.base_env = base

    def env(self, threads):
        env = dict(self.base_env)
        env["OMP_NUM_THREADS"] = str(threads)
        env["OPENBLAS_NUM_THREADS"] = str(threads)
        return env

    def commands(self, name, threads, precision="fp32"):
        a = self.args
        if name == "decode":
            c = DECODE_CONFIG
            common = ["--layers", c["layers"], "--d-model", c["d_model"], "--d-ff", c["d_ff"],
                      "--heads", c["heads"], "--vocab", c["vocab"], "--len", c["len"],
                      "--sentences", a.sentences or c["sentences"],
                      "--warmup-sentences",
                      c["warmup"] if a.warmup_sentences is None else a.warmup_sentences,
                      "--threads", threads]
            mode = "decode"
        else:
            c = TRAIN_CONFIGS[name]
            common = ["--layers", c["layers"], "--d-model", c["d_model"], "--d-ff", c["d_ff"],
                      "--heads", c["heads"], "--batch", c["batch"], "--len", c["len"],
                      "--vocab", c["vocab"], "--steps", a.steps or c["steps"],
                      "--warmup-steps", c["warmup"] if a.warmup_steps is None else a.warmup_steps,
                      "--threads", threads]
            mode = "train"
        common = [str(x) for x in common]
        # the C trainer's default precision depends on the processor: always say which
        c_extra = ["--precision", precision]
        pt_extra = ["--precision", precision] if mode == "train" else []
        return {"c": [self.binary, "benchmark", mode] + common + c_extra,
                "pytorch": [PYTHON, PYTORCH_SCRIPT, mode] + common + pt_extra}

    def run(self, name, threads, side, rep, precision="fp32"):
        mode = "decode" if name == "decode" else "train"
        cmd = self.commands(name, threads, precision)[side]
        label = "%s threads=%d %s %s rep %d/%d" % (name, threads,
                                                  "C" if side == "c" else "PyTorch",
                                                  precision, rep, self.args.repeats)
        progress("bench: %s ..." % label)
        suffix = "" if precision == "fp32" else "-" + precision
        stem = os.path.join(self.out, "%s-t%d-%s%s-%d" % (name, threads, side, suffix, rep))
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=self.env(threads), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=self.args.timeout)
            stdout, stderr, status = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or ""))
            stderr += "\n(killed after %d s: --timeout)\n" % self.args.timeout
            status = "timeout"
        except OSError as e:
            stdout, stderr, status = "", str(e) + "\n", "not started"
        wall = time.perf_counter() - t0
        with open(stem + ".out", "w") as f:
            f.write(stdout)
        with open(stem + ".err", "w") as f:
            f.write(stderr)
        with open(stem + ".cmd", "w") as f:
            f.write(" ".join(cmd) + "\n")
        what = "the %s run" % label
        if status != 0:
            raise RunFailed("%s failed (status %s): %s\n--- its stderr (%s.err) ---\n%s"
                            % (what, status, " ".join(cmd), stem, stderr.rstrip()))
        prefix = ("c " if side == "c" else "pytorch ") + mode
        keys = (C_TRAIN_KEYS if side == "c" else TRAIN_KEYS) if mode == "train" else DECODE_KEYS
        try:
            values, line = parse_line(stdout, prefix, keys, what)
        except RunFailed as e:
            raise RunFailed("%s\n--- its stderr (%s.err) ---\n%s" % (e, stem, stderr.rstrip()))
        if int(values["threads"]) != threads:
            progress("bench: warning: %s reports threads=%s, asked for %d"
                     % (what, values["threads"], threads))
        self.runs_log.write("%s threads=%d precision=%s rep=%d wall_s=%.2f | %s\n"
                            % (name, threads, precision, rep, wall, line))
        self.runs_log.flush()
        rate = values["tokens_per_s" if mode == "train" else "sentences_per_s"]
        progress("bench:   %s %s (%.1f s wall)" % (fmt_rate(rate),
                                                  "tok/s" if mode == "train" else "sentences/s",
                                                  wall))
        return values

    def measure(self, name, threads):
        """Every side of the configuration R times, in turns (the order reversed in even
        repetitions). runs["c"], runs["pytorch"]: fp32; runs["c-bf16"], runs["pytorch-bf16"]
        with --precisions fp32,bf16 (training configurations only)."""
        sides = [("c", "fp32"), ("pytorch", "fp32")]
        if "bf16" in self.args.precisions and name != "decode":
            sides += [("c", "bf16"), ("pytorch", "bf16")]
        runs = {}
        for rep in range(1, self.args.repeats + 1):
            order = sides if rep % 2 else sides[::-1]
            for side, precision in order:
                key = side if precision == "fp32" else side + "-" + precision
                runs.setdefault(key, []).append(self.run(name, threads, side, rep, precision))
        return runs


def summarize(name, threads, runs):
    train = name != "decode"
    key = "tokens_per_s" if train else "sentences_per_s"
    c_vals = [r[key] for r in runs["c"]]
    p_vals = [r[key] for r in runs["pytorch"]]
    row = dict(config=name, threads=threads, train=train,
               c_median=statistics.median(c_vals), c_min=min(c_vals), c_max=max(c_vals),
               pt_median=statistics.median(p_vals), pt_min=min(p_vals), pt_max=max(p_vals),
               c_rss=max(r["peak_rss_mib"] for r in runs["c"]),
               pt_rss=max(r["peak_rss_mib"] for r in runs["pytorch"]),
               c_gflops=None, sgemm_gflops=None, pct_sgemm=None, pt_gflops=None, notes=[])
    row["ratio"] = row["c_median"] / row["pt_median"]
    if train:
        flops = [r["flops_per_step"] for r in runs["c"]]
        fps = flops[0]
        if len(set(flops)) > 1:
            row["notes"].append("flops_per_step differs between C runs: %s"
                                % ", ".join("%.0f" % f for f in flops))
        c_step_s = statistics.median(r["step_ms"] for r in runs["c"]) / 1000.0
        p_step_s = statistics.median(r["step_ms"] for r in runs["pytorch"]) / 1000.0
        row["c_gflops"] = fps / c_step_s / 1e9
        row["pt_gflops"] = fps / p_step_s / 1e9
        row["sgemm_gflops"] = statistics.median(r["sgemm_gflops"] for r in runs["c"])
        row["pct_sgemm"] = 100.0 * row["c_gflops"] / row["sgemm_gflops"]
        row["flops_per_step"] = fps
        expected = model_flops_per_step(TRAIN_CONFIGS[name])
        if fps != expected:
            row["notes"].append("C's flops_per_step %.0f differs from the dense count %.0f "
                                "(%+.2f%%)" % (fps, expected, 100.0 * (fps / expected - 1)))
        for k in ("tokens_per_step", "params"):
            cv = {r[k] for r in runs["c"]}
            pv = {r[k] for r in runs["pytorch"]}
            if cv != pv:
                row["notes"].append("%s: C %s, PyTorch %s"
                                    % (k, "/".join("%.0f" % v for v in sorted(cv)),
                                       "/".join("%.0f" % v for v in sorted(pv))))
    return row


def print_table(rows, file):
    head = ["config", "threads", "C tok/s median (min-max)", "PyTorch tok/s median (min-max)",
            "C/PyTorch", "C model GFLOP/s", "sgemm GFLOP/s", "% of sgemm", "C RSS MiB",
            "PyTorch RSS MiB"]
    body = []
    for r in rows:
        unit = "" if r["train"] else " sent/s"
        body.append([
            r["config"], str(r["threads"]),
            "%s (%s-%s)%s" % (fmt_rate(r["c_median"]), fmt_rate(r["c_min"]),
                              fmt_rate(r["c_max"]), unit),
            "%s (%s-%s)%s" % (fmt_rate(r["pt_median"]), fmt_rate(r["pt_min"]),
                              fmt_rate(r["pt_max"]), unit),
            "%.2f" % r["ratio"],
            fmt_opt(r["c_gflops"], "%.1f"), fmt_opt(r["sgemm_gflops"], "%.1f"),
            fmt_opt(r["pct_sgemm"], "%.0f"),
            "%.0f" % r["c_rss"], "%.0f" % r["pt_rss"]])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    for i, line in enumerate([head] + body):
        cells = [line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:])]
        print("  ".join(cells).rstrip(), file=file)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=file)
    if any(not r["train"] for r in rows):
        print("(decode: sentences/s, greedy decoding of one sentence at a time)", file=file)


def print_notes(rows, file):
    lines = []
    for r in rows:
        if r["train"]:
            lines.append("  %s threads=%d: flops_per_step %.4g (C's count); PyTorch model "
                         "GFLOP/s %.1f (%.0f%% of sgemm); C/PyTorch if C ran at the sgemm "
                         "rate and did nothing else: %.2f"
                         % (r["config"], r["threads"], r["flops_per_step"], r["pt_gflops"],
                            100.0 * r["pt_gflops"] / r["sgemm_gflops"],
                            r["sgemm_gflops"] / r["pt_gflops"]))
        for n in r["notes"]:
            lines.append("  %s threads=%d: NOTE %s" % (r["config"], r["threads"], n))
    if lines:
        print("\nNotes", file=file)
        for l in lines:
            print(l, file=file)


def print_targets(rows, file):
    print("\nTargets", file=file)

    def mark(ok):
        return "met" if ok else "NOT met"

    for r in rows:
        parts = []
        goal = TARGET_TRAIN_RATIO if r["train"] else TARGET_DECODE_RATIO
        parts.append("C/PyTorch %.2f >= %g: %s%s" % (r["ratio"], goal, mark(r["ratio"] >= goal),
                     "" if r["train"] else " (one sentence at a time; the goal is judged "
                     "on translation, make bench-translate)"))
        if r["train"]:
            parts.append("%% of sgemm %.0f >= %g: %s"
                         % (r["pct_sgemm"], TARGET_PCT_SGEMM, mark(r["pct_sgemm"] >= TARGET_PCT_SGEMM)))
        parts.append("C RSS %.0f <= PyTorch RSS %.0f MiB: %s"
                     % (r["c_rss"], r["pt_rss"], mark(r["c_rss"] <= r["pt_rss"])))
        print("  %-6s threads=%d  %s" % (r["config"], r["threads"], ";  ".join(parts)), file=file)


def summarize_precision(name, threads, runs):
    """The four training sides of one configuration: C and PyTorch, each in fp32 and bf16."""
    med = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in runs.items()}
    spread = {k: (min(r["tokens_per_s"] for r in v), max(r["tokens_per_s"] for r in v))
              for k, v in runs.items()}
    c = runs["c"]
    fps = c[0]["flops_per_step"]
    row = dict(config=name, threads=threads, med=med, spread=spread,
               c_fp32=med["c"], c_bf16=med["c-bf16"], pt_fp32=med["pytorch"],
               pt_bf16=med["pytorch-bf16"],
               sgemm_gflops=statistics.median(r["sgemm_gflops"] for r in c),
               bf16_gflops=statistics.median(r.get("bf16_gflops", float("nan"))
                                             for r in c + runs["c-bf16"]),
               c_bf16_rss=max(r["peak_rss_mib"] for r in runs["c-bf16"]),
               pt_bf16_rss=max(r["peak_rss_mib"] for r in runs["pytorch-bf16"]))
    step_s = statistics.median(r["step_ms"] for r in runs["c-bf16"]) / 1000.0
    row["c_bf16_gflops"] = fps / step_s / 1e9
    row["bf16_over_fp32"] = row["c_bf16"] / row["c_fp32"]
    row["bf16_over_pt_fp32"] = row["c_bf16"] / row["pt_fp32"]
    row["bf16_over_pt_bf16"] = row["c_bf16"] / row["pt_bf16"]
    row["fp32_over_pt_fp32"] = row["c_fp32"] / row["pt_fp32"]
    row["pt_bf16_over_pt_fp32"] = row["pt_bf16"] / row["pt_fp32"]
    return row


PRECISION_COLUMNS = ["config", "threads", "c_fp32", "c_bf16", "pt_fp32", "pt_bf16",
                     "bf16_over_fp32", "bf16_over_pt_fp32", "bf16_over_pt_bf16",
                     "fp32_over_pt_fp32", "sgemm_gflops", "bf16_gflops", "c_bf16_gflops",
                     "c_bf16_rss", "pt_bf16_rss"]


def print_precision_table(rows, file):
    print("\nPrecision (training, target tokens/s, medians; C bf16: --precision bf16, "
          "PyTorch bf16: torch.autocast)", file=file)
    head = ["config", "threads", "C fp32", "C bf16", "PT fp32", "PT bf16", "Cbf16/Cfp32",
            "Cbf16/PTfp32", "Cbf16/PTbf16", "Cfp32/PTfp32", "sgemm GF/s", "bf16 GF/s",
            "C bf16 model GF/s", "RSS C/PT bf16"]
    body = []
    for r in rows:
        body.append([r["config"], str(r["threads"]), fmt_rate(r["c_fp32"]),
                     fmt_rate(r["c_bf16"]), fmt_rate(r["pt_fp32"]), fmt_rate(r["pt_bf16"]),
                     "%.2f" % r["bf16_over_fp32"], "%.2f" % r["bf16_over_pt_fp32"],
                     "%.2f" % r["bf16_over_pt_bf16"], "%.2f" % r["fp32_over_pt_fp32"],
                     "%.1f" % r["sgemm_gflops"], "%.1f" % r["bf16_gflops"],
                     "%.1f" % r["c_bf16_gflops"],
                     "%.0f/%.0f" % (r["c_bf16_rss"], r["pt_bf16_rss"])])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    for i, line in enumerate([head] + body):
        cells = [line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:])]
        print("  ".join(cells).rstrip(), file=file)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=file)
    print("\nTargets (precision)", file=file)
    for r in rows:
        def mark(ok):
            return "met" if ok else "NOT met"
        print("  %-6s threads=%d  C bf16/PyTorch fp32 %.2f >= %g: %s;  C bf16 RSS %.0f <= "
              "PyTorch bf16 RSS %.0f MiB: %s  (no goal: C bf16/PyTorch bf16 %.2f)"
              % (r["config"], r["threads"], r["bf16_over_pt_fp32"], TARGET_BF16_OVER_PT_FP32,
                 mark(r["bf16_over_pt_fp32"] >= TARGET_BF16_OVER_PT_FP32),
                 r["c_bf16_rss"], r["pt_bf16_rss"], mark(r["c_bf16_rss"] <= r["pt_bf16_rss"]),
                 r["bf16_over_pt_bf16"]),
              file=file)


def write_precision_dat(rows, path, header_lines):
    with open(path, "w") as f:
        for h in header_lines:
            f.write("# %s\n" % h)
        f.write("# training rates in target tokens/s (medians); ratios of medians; GFLOP/s\n")
        f.write("# " + " ".join(PRECISION_COLUMNS) + "\n")
        for r in rows:
            f.write(" ".join([r["config"], "%d" % r["threads"]]
                             + ["%.6g" % r[k] for k in PRECISION_COLUMNS[2:]]) + "\n")


def write_dat(rows, path, header_lines):
    cols = ["config", "threads", "c_median", "c_min", "c_max", "pt_median", "pt_min",
            "pt_max", "ratio", "c_gflops", "sgemm_gflops", "pct_sgemm", "c_rss", "pt_rss"]
    with open(path, "w") as f:
        for h in header_lines:
            f.write("# %s\n" % h)
        f.write("# train rows: target tokens/s; decode rows: sentences/s; '-': not applicable\n")
        f.write("# " + " ".join(cols) + "\n")
        for r in rows:
            vals = [r["config"], "%d" % r["threads"]]
            for k in cols[2:]:
                v = r[k]
                vals.append("-" if v is None else "%.6g" % v)
            f.write(" ".join(vals) + "\n")


def main():
    p = argparse.ArgumentParser(
        description="Training and decoding speed: the C trainer (transformer benchmark) "
                    "against the PyTorch reference (bench/train_pytorch.py), side by side. "
                    "See bench/BENCH.md.")
    p.add_argument("--configs", default=",".join(ALL_CONFIGS),
                   help="comma-separated subset of %s (default: all)" % ",".join(ALL_CONFIGS))
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each side (default 3)")
    p.add_argument("--steps", type=int, default=None,
                   help="timed training steps of every train config (default per config: %s)"
                        % ", ".join("%s %d" % (k, c["steps"]) for k, c in TRAIN_CONFIGS.items()))
    p.add_argument("--warmup-steps", type=int, default=None,
                   help="untimed warm-up steps, at least 1 (default per config: %s)"
                        % ", ".join("%s %d" % (k, c["warmup"]) for k, c in TRAIN_CONFIGS.items()))
    p.add_argument("--sentences", type=int, default=None,
                   help="timed sentences of decode (default %d)" % DECODE_CONFIG["sentences"])
    p.add_argument("--warmup-sentences", type=int, default=None,
                   help="untimed warm-up sentences (default %d)" % DECODE_CONFIG["warmup"])
    p.add_argument("--binary", default=os.path.join(ROOT, "transformer"),
                   help="the C trainer (default: ./transformer of this repository); it is "
                        "copied into the output directory first, so that a rebuild during "
                        "the benchmark does not change it")
    p.add_argument("--unset-openblas-env", action="store_true",
                   help="run both sides without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE "
                        "(default: the environment's values, passed to both)")
    p.add_argument("--omp-wait-policy", default="PASSIVE",
                   help="OMP_WAIT_POLICY of both sides (default PASSIVE; 'unset' removes it). "
                        "Only PyTorch uses OpenMP; under libgomp's default its idle workers "
                        "spin and take the cores from OpenBLAS's threads (see BENCH.md)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds after which a run is killed and counts as failed (default 900)")
    p.add_argument("--out", default=None,
                   help="directory for every run's output (default: a new /tmp/bench.* dir)")
    p.add_argument("--dat", default=None,
                   help="also write the table as a whitespace-separated data file (gnuplot)")
    p.add_argument("--precisions", default="fp32",
                   help="fp32 (default), or fp32,bf16: training configurations also run "
                        "C with --precision bf16 and PyTorch under bf16 autocast")
    p.add_argument("--precision-dat", default=None,
                   help="with --precisions fp32,bf16: write the precision table as data")
    args = p.parse_args()

    args.precisions = [x for x in args.precisions.split(",") if x]
    if not args.precisions or set(args.precisions) - {"fp32", "bf16"} or \
            "fp32" not in args.precisions:
        p.error("--precisions: fp32 or fp32,bf16")
    configs = [c for c in args.configs.split(",") if c]
    bad = [c for c in configs if c not in ALL_CONFIGS]
    if bad or not configs:
        p.error("--configs: unknown %s (choose from %s)" % (",".join(bad) or "(empty)",
                                                            ",".join(ALL_CONFIGS)))
    try:
        threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        threads = []
    if not threads or min(threads) < 1:
        p.error("--threads: a comma-separated list of positive integers")
    for opt in ("repeats", "steps", "sentences"):
        v = getattr(args, opt)
        if v is not None and v < 1:
            p.error("--%s must be at least 1" % opt)
    if args.warmup_steps is not None and args.warmup_steps < 1:
        p.error("--warmup-steps must be at least 1 (the C side records the product shapes "
                "of its first warm-up step)")
    if args.warmup_sentences is not None and args.warmup_sentences < 0:
        p.error("--warmup-sentences must be at least 0")
    binary = os.path.abspath(args.binary)
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        p.error("no C trainer at %s (make build, or --binary PATH)" % binary)
    if not os.access(PYTHON, os.X_OK):
        p.error("%s not found (Debian's python3 with python3-torch)" % PYTHON)

    if args.out:
        os.makedirs(args.out, exist_ok=True)
    else:
        args.out = tempfile.mkdtemp(prefix="bench.", dir="/tmp")
    args.out = os.path.abspath(args.out)

    bench = Bench(args)
    bench.binary = os.path.join(args.out, "transformer")
    shutil.copy2(binary, bench.binary)

    torch_version = command_output([PYTHON, "-c", "import torch; print(torch.__version__)"])
    openblas = command_output(["dpkg-query", "-W", "-f=${Package} ${Version}",
                               "libopenblas0-pthread"])
    commit = command_output(["git", "-C", ROOT, "log", "-1", "--format=%h"])
    env = bench.base_env
    header = [
        "speed benchmark, %s" % datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "machine: %s, nproc %s, load average %s"
        % (processor(), command_output(["nproc"]), loadavg()),
        "C: %s (sha256 %s, built %s; repository at %s)"
        % (shown(binary), sha256_prefix(binary),
           datetime.datetime.fromtimestamp(os.path.getmtime(binary), datetime.timezone.utc)
           .strftime("%Y-%m-%d %H:%M UTC"), commit),
        "PyTorch: torch %s (%s %s)" % (torch_version, PYTHON, os.path.relpath(PYTORCH_SCRIPT, ROOT)),
        "OpenBLAS: %s; env as passed: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s "
        "OMP_WAIT_POLICY=%s; OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=threads"
        % (openblas, env.get("OPENBLAS_CORETYPE", "(unset)"),
           env.get("OPENBLAS_L2_SIZE", "(unset)"), env.get("OMP_WAIT_POLICY", "(unset)")),
        "configs %s; threads %s; repeats %d (C first in odd repetitions); outputs in %s"
        % (",".join(configs), ",".join(map(str, threads)), args.repeats, shown(args.out)),
    ]
    try:
        if float(loadavg().split()[0]) > 0.5:
            header.append("warning: load average above 0.5 before the first run: the "
                          "timings share the cores")
    except ValueError:
        pass
    with open(os.path.join(args.out, "header.txt"), "w") as f:
        for h in header:
            print(h)
            f.write(h + "\n")
    sys.stdout.flush()

    rows, precision_rows = [], []
    try:
        for name in configs:
            for t in threads:
                runs = bench.measure(name, t)
                rows.append(summarize(name, t, runs))
                if "c-bf16" in runs:
                    precision_rows.append(summarize_precision(name, t, runs))
    except RunFailed as e:
        print("bench: %s" % e, file=sys.stderr)
        print("bench: outputs in %s" % args.out, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted; outputs in %s" % args.out, file=sys.stderr)
        return 130

    after = "load average after: %s" % loadavg()
    header.append(after)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        for file in (sys.stdout, f):
            print(after, file=file)
            print(file=file)
            print_table(rows, file)
            print_notes(rows, file)
            print_targets(rows, file)
            if precision_rows:
                print_precision_table(precision_rows, file)
    if args.dat:
        write_dat(rows, args.dat, header)
    if args.precision_dat and precision_rows:
        write_precision_dat(precision_rows, args.precision_dat, header)
    return 0


if __name__ == "__main__":
    sys.exit(main())
