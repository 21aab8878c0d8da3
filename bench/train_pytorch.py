#!/usr/bin/python3
"""The PyTorch side of bench/bench.py: the reference model's training step and greedy
decoding, timed. The model and the training pieces are those of bench/copy_pytorch.py
(the Annotated Transformer's 2022 notebook code, restated); nothing here redefines them.

    train_pytorch.py train --layers N --d-model D --d-ff F --heads H --batch B --len L
        --vocab V --steps S --warmup-steps W --threads T [--seed 1] [--smoothing 0.1]
        [--dropout 0.1] [--precision fp32|bf16]
    train_pytorch.py decode --layers N --d-model D --d-ff F --heads H --vocab V --len L
        --sentences K --warmup-sentences W --threads T [--seed 1]

train: every step draws a fresh batch as the notebook's data_gen does, with sequences of
length L (B rows of symbols in 1..V-1, the first one 1; padding 0 never occurs), so the
decoder reads L-1 symbols and there are B*(L-1) target tokens per step. One step is the
notebook's run_epoch body: forward, LabelSmoothing + KLDivLoss(sum) through
SimpleLossCompute with norm = ntokens, backward, Adam(lr 0.5, betas (0.9, 0.98),
eps 1e-9), zero_grad(set_to_none=True), LambdaLR(rate(step, D, 1, 400)). W untimed
warm-up steps, then S timed steps; drawing the batch is inside the timed loop. With
--precision bf16 the forward pass and the loss run under
torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's mixed precision on processors
(products in bfloat16 through oneDNN, master weights and Adam in float).

decode: the model in eval mode under torch.no_grad(); each sentence is a random source of
L symbols (the first one 1) decoded by the notebook's greedy_decode (which recomputes the
whole decoder for every new symbol) to max_len L from start symbol 1. W untimed warm-up
sentences, then K timed ones.

Output: one line on stdout, key=value pairs, e.g.
    pytorch train tokens_per_s=1234.5 step_ms=64.8 steps=20 tokens_per_step=720
        peak_rss_mib=812.3 params=14720011 threads=2
    pytorch decode sentences_per_s=3.21 peak_rss_mib=700.1 threads=1
"""

import argparse
import os
import resource
import sys
import time

sys.dont_write_bytecode = True    # no bench/__pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.optim.lr_scheduler import LambdaLR  # noqa: E402

from copy_pytorch import (  # noqa: E402,F401  (subsequent_mask: used by Batch, greedy_decode)
    Batch, LabelSmoothing, SimpleLossCompute, greedy_decode, make_model, rate,
    subsequent_mask, positive)

PAD = 0
START = 1


def natural(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def param_count(model):
    return sum(p.numel() for p in model.parameters())


def set_dropout(model, p):
    """make_model's dropout argument reaches every Dropout but the attention's, which the
    notebook builds with MultiHeadedAttention's own default 0.1; --dropout sets them all."""
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = p


def timed(work, warmup, count):
    """Run work() warmup times untimed, then count times; return the seconds of those."""
    for _ in range(warmup):
        work()
    start = time.perf_counter()
    for _ in range(count):
        work()
    return time.perf_counter() - start


def random_sequences(rows, length, vocab):
    data = torch.randint(1, vocab, (rows, length))
    data[:, 0] = START
    return data


def train(args):
    V, D = args.vocab, args.d_model
    model = make_model(V, V, args.layers, D, args.d_ff, args.heads, args.dropout)
    set_dropout(model, args.dropout)
    model.train()
    criterion = LabelSmoothing(V, padding_idx=PAD, smoothing=args.smoothing)
    loss_compute = SimpleLossCompute(model.generator, criterion)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    scheduler = LambdaLR(optimizer=optimizer,
                         lr_lambda=lambda step: rate(step, D, 1.0, 400))

    bf16 = args.precision == "bf16"

    def step():
        data = random_sequences(args.batch, args.len, V)
        batch = Batch(src=data, tgt=data, pad=PAD)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
            loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
        loss_node.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        value = float(loss)          # materialize the loss every step
        if value != value:
            raise SystemExit("train_pytorch.py: the loss is NaN")
        return value

    seconds = timed(step, args.warmup_steps, args.steps)

    tokens_per_step = args.batch * (args.len - 1)
    print("pytorch train tokens_per_s=%.1f step_ms=%.2f steps=%d tokens_per_step=%d "
          "peak_rss_mib=%.1f params=%d threads=%d precision=%s"
          % (args.steps * tokens_per_step / seconds, 1000.0 * seconds / args.steps,
             args.steps, tokens_per_step, peak_rss_mib(), param_count(model),
             torch.get_num_threads(), args.precision), flush=True)


def decode(args):
    V = args.vocab
    model = make_model(V, V, args.layers, args.d_model, args.d_ff, args.heads)
    model.eval()

    def sentence():
        src = random_sequences(1, args.len, V)
        src_mask = (src != PAD).unsqueeze(-2)
        ys = greedy_decode(model, src, src_mask, max_len=args.len, start_symbol=START)
        assert ys.shape == (1, args.len)

    with torch.no_grad():
        seconds = timed(sentence, args.warmup_sentences, args.sentences)

    print("pytorch decode sentences_per_s=%.3f sentences=%d peak_rss_mib=%.1f params=%d "
          "threads=%d"
          % (args.sentences / seconds, args.sentences, peak_rss_mib(), param_count(model),
             torch.get_num_threads()), flush=True)


def main():
    parser = argparse.ArgumentParser(
        description="The PyTorch side of bench/bench.py: the reference's training step "
                    "or greedy decoding, timed; prints one key=value line.")
    sub = parser.add_subparsers(dest="mode", required=True)

    def model_flags(p):
        p.add_argument("--layers", type=positive, required=True)
        p.add_argument("--d-model", type=positive, required=True)
        p.add_argument("--d-ff", type=positive, required=True)
        p.add_argument("--heads", type=positive, required=True)
        p.add_argument("--vocab", type=positive, required=True)
        p.add_argument("--len", type=positive, required=True)
        p.add_argument("--threads", type=positive, required=True,
                       help="torch.set_num_threads (OpenMP); OpenBLAS reads its own count "
                            "from OPENBLAS_NUM_THREADS, which bench.py sets to the same")
        p.add_argument("--seed", type=int, default=1, help="torch.manual_seed (default 1)")

    p = sub.add_parser("train", help="time training steps")
    model_flags(p)
    p.add_argument("--batch", type=positive, required=True)
    p.add_argument("--steps", type=positive, required=True)
    p.add_argument("--warmup-steps", type=natural, required=True)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: forward and loss under torch.autocast (default fp32)")

    p = sub.add_parser("decode", help="time greedy decoding of single sentences")
    model_flags(p)
    p.add_argument("--sentences", type=positive, required=True)
    p.add_argument("--warmup-sentences", type=natural, required=True)

    args = parser.parse_args()
    if args.d_model % args.heads or args.d_model % 2:
        parser.error("--d-model must be even and a multiple of --heads")
    if args.vocab < 3:
        parser.error("--vocab must be at least 3 (padding 0, start 1, and one more)")
    if args.mode == "train" and args.len < 2:
        parser.error("--len must be at least 2 for training")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.mode == "train":
        train(args)
    else:
        decode(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
