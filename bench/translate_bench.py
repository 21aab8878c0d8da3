#!/usr/bin/python3
"""Translation speed on Multi30k test2016: the C program against the reference.

Translates the first N sentences of data/multi30k/test2016.de (all 1000 by default) with
one trained model three ways and prints sentences per second and BLEU (lowercased, as
`transformer bleu --lowercase` scores it) of each:

  c-greedy   transformer translate --beam 1 (batches of 32 lines, sorted by length)
  c-beam4    transformer translate --beam 4
  reference  the notebook's greedy_decode (bench/copy_pytorch.py), one sentence at a time,
             max_len 72 as in the notebook's examples, with the same weights loaded into
             its make_model; its output is cut after </s> and detokenized by the C program

The reference sees exactly the C program's tokens: the source sentences are tokenized and
lowercased by `transformer tokenize`, numbered with the model file's own vocabulary, and
framed by <s> and </s>, as `transformer translate` does. Each side runs R times in turns
(default 3) and the median time is reported; both use T threads (default 1).

    bench/translate_bench.py [--model data/multi30k-de-en.safetensors] [--sentences N]
                             [--threads T] [--repeats R] [--binary ./transformer]
                             [--unset-openblas-env]
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def read_model(path):
    """The tensors (as float32 torch tensors) and metadata of a model file (F32 or BF16)."""
    import torch
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__")
    tensors = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        raw = bytearray(data[begin:end])
        if e["dtype"] == "F32":
            t = torch.frombuffer(raw, dtype=torch.float32)
        elif e["dtype"] == "BF16":
            t = torch.frombuffer(raw, dtype=torch.bfloat16).float()
        else:
            raise SystemExit(f"{path}: tensor {name} of dtype {e['dtype']}")
        tensors[name] = t.reshape(e["shape"]).clone()
    return tensors, meta


def reference_model(tensors, meta):
    import copy_pytorch as at
    at.LAYERNORM = meta["layernorm"]
    if meta["norm"] != "pre":
        raise SystemExit("the reference model has pre-norm sublayers only")
    model = at.make_model(int(meta["src_vocab"]), int(meta["tgt_vocab"]),
                          N=int(meta["layers"]), d_model=int(meta["d_model"]),
                          d_ff=int(meta["d_ff"]), h=int(meta["heads"]), dropout=0.0)
    state = dict(tensors)
    if meta["tied"] == "1":
        state["generator.proj.weight"] = state["tgt_embed.0.lut.weight"]
    if meta.get("tied_source") == "1":   # one table of both languages (train --tie-all)
        state["src_embed.0.lut.weight"] = state["tgt_embed.0.lut.weight"]
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith(".pe")]
    if missing or unexpected:
        raise SystemExit(f"weights do not fit the reference: missing {missing}, "
                         f"unexpected {unexpected}")
    model.eval()
    return model, at


def run(cmd, stdin_path=None, env=None):
    with open(stdin_path or os.devnull, "rb") as stdin:
        r = subprocess.run(cmd, stdin=stdin, capture_output=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: status {r.returncode}\n{r.stderr.decode()}")
    return r.stdout.decode()


def bleu(binary, hyp, ref, env):
    out = run([binary, "bleu", hyp, ref, "--lowercase"], env=env)
    return float(out.split()[2])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.path.join(ROOT, "data", "multi30k-de-en.safetensors"))
    p.add_argument("--sentences", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--binary", default=os.path.join(ROOT, "transformer"))
    p.add_argument("--unset-openblas-env", action="store_true",
                   help="run both sides without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE")
    args = p.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    if args.unset_openblas_env:
        env.pop("OPENBLAS_CORETYPE", None), env.pop("OPENBLAS_L2_SIZE", None)
        os.environ.pop("OPENBLAS_CORETYPE", None), os.environ.pop("OPENBLAS_L2_SIZE", None)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import torch
    torch.set_num_threads(args.threads)

    work = tempfile.mkdtemp(prefix="translate-bench-")
    src = os.path.join(work, "src.de")
    ref = os.path.join(work, "ref.en")
    with open(os.path.join(ROOT, "data/multi30k/test2016.de")) as f:
        lines = f.readlines()[:args.sentences]
    with open(src, "w") as f:
        f.writelines(lines)
    with open(os.path.join(ROOT, "data/multi30k/test2016.en")) as f:
        with open(ref, "w") as out:
            out.writelines(f.readlines()[:args.sentences])
    n = len(lines)

    tensors, meta = read_model(args.model)
    model, at = reference_model(tensors, meta)
    src_vocab = meta["vocab.src"].split("\n")[:-1]
    tgt_vocab = meta["vocab.tgt"].split("\n")[:-1]
    index = {t: i for i, t in enumerate(src_vocab)}
    START, END, UNK = 0, 1, 3
    # A model of subwords (train --subwords) cuts the words into its pieces ("…@@"), and its
    # output is joined back, as translate does: through tokenize --subwords with its vocabulary.
    subwords = []
    if any(t.endswith("@@") for t in src_vocab):
        pieces = os.path.join(work, "subwords.txt")
        with open(pieces, "w") as f:
            f.write(meta["vocab.src"])
        subwords = ["--subwords", pieces]
    tokens = run([args.binary, "tokenize", "--language", "de", "--lowercase"] + subwords,
                 src, env)
    sources = [[START] + [index.get(t, UNK) for t in line.split()] + [END]
               for line in tokens.splitlines()]

    def reference_pass():
        hyps = []
        with torch.no_grad():
            for ids in sources:
                s = torch.tensor([ids])
                mask = (s != 2).unsqueeze(-2)
                ys = at.greedy_decode(model, s, mask, 72, START)[0].tolist()[1:]
                if END in ys:
                    ys = ys[:ys.index(END)]
                hyps.append(" ".join(tgt_vocab[i] for i in ys) or ".")
        return hyps

    def c_pass(beam):
        out = os.path.join(work, f"c{beam}.en")
        with open(out, "w") as f:
            f.write(run([args.binary, "translate", "--model", args.model, "--beam", str(beam),
                         "--precision", "fp32"], src, env))
        return out

    times = {"c-greedy": [], "c-beam4": [], "reference": []}
    outputs = {}
    for r in range(args.repeats):
        for name in (["c-greedy", "c-beam4", "reference"] if r % 2 == 0
                     else ["reference", "c-beam4", "c-greedy"]):
            start = time.perf_counter()
            if name == "reference":
                hyps = reference_pass()
            else:
                outputs[name] = c_pass(1 if name == "c-greedy" else 4)
            times[name].append(time.perf_counter() - start)
            print(f"  {name} run {r + 1}: {times[name][-1]:.2f} s", file=sys.stderr, flush=True)
    joined = os.path.join(work, "reference.tok")
    with open(joined, "w") as f:
        f.write("\n".join(hyps) + "\n")
    outputs["reference"] = os.path.join(work, "reference.en")
    with open(outputs["reference"], "w") as f:
        f.write(run([args.binary, "tokenize", "--detokenize"] + subwords, joined, env))

    rate = {k: n / statistics.median(v) for k, v in times.items()}
    print(f"translation of test2016 ({n} sentences), {args.threads} thread(s), "
          f"model {os.path.basename(args.model)}, median of {args.repeats}, OPENBLAS "
          f"{'unset' if args.unset_openblas_env else os.environ.get('OPENBLAS_CORETYPE', 'unset')}")
    print(f"{'decoder':<12} {'sentences/s':>12} {'x reference':>12} {'BLEU (lc)':>10}")
    for k in ("c-greedy", "c-beam4", "reference"):
        print(f"{k:<12} {rate[k]:>12.2f} {rate[k] / rate['reference']:>12.1f} "
              f"{bleu(args.binary, outputs[k], ref, env):>10.2f}")


if __name__ == "__main__":
    main()
