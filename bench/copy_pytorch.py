#!/usr/bin/python3
"""The copy task of the Annotated Transformer (2022 notebook), in PyTorch, for timing.

This script states the reference's copy task (the notebook's `example_simple_model`)
so that bench/copy.sh can run it beside `./transformer copy` and compare them. The
model is the notebook's: make_model with xavier_uniform_ initialization,
EncoderDecoder, pre-norm SublayerConnection with the notebook's LayerNorm
(a_2 (x - mean) / (std + eps) + b_2, unbiased std, eps 1e-6), MultiHeadedAttention,
PositionwiseFeedForward, Embeddings times sqrt(d_model), PositionalEncoding with
dropout, and Generator with log_softmax. The training code is the notebook's too:
LabelSmoothing with KLDivLoss(reduction="sum"), SimpleLossCompute, Batch, data_gen,
run_epoch, rate with LambdaLR, and greedy_decode. The structure is that of
tools/make-golden.py, reduced to the pre-norm, annotated-LayerNorm variant.

The recipe is the notebook's, and that of `./transformer copy`: vocabulary 11, N = 2,
d_model 512, d_ff 2048, 8 heads, dropout 0.1, 20 epochs of 20 batches of 80 random
sequences of length 10 with symbol 1 first, no label smoothing, Adam with betas
(0.9, 0.98) and eps 1e-9, base lr 0.5, and LambdaLR(rate(step, d_model, 1, 400)).
After training, 5 fresh batches measure the loss without dropout, and the model
greedily decodes 1..10 and 7 random sequences.

Two things differ from the notebook, in the same way as in the C command:
  - decoding starts from symbol 1 and copies 1..10. The 2022 notebook decodes
    0..9 from start symbol 0, neither of which the model sees in training.
  - the 5-batch evaluation runs once, after training. The notebook runs one after
    every epoch. That only draws different random batches; no evaluation changes
    the weights.

Output, in the form of the C command when stdout is not a terminal:
    epoch E  loss L  lr R  T s                  (T: seconds since the start of training)
    evaluation loss X after N steps in T s
      source ...  decoded ...  exact|DIFFERENT   (8 lines)
and then a summary line that the C command does not print:
    training: N steps in T s, K target tokens/s, threads P
with K = N * batch_size * (len - 1) / T. The C command's progress line defines the
rate in the same way. The exit status is 0 if every decoding is exact, 1 otherwise.

    /usr/bin/python3 bench/copy_pytorch.py [--epochs N] [--batches N] [--batch-size N]
        [--layers N] [--d-model N] [--d-ff N] [--heads N] [--threads N] [--seed N]
        [--layernorm annotated|standard]

One more difference is optional: the C trainer's default LayerNorm is the standard
formula (biased variance, eps under the square root), not the notebook's.
--layernorm standard makes this script use it too. The default is the notebook's.
"""

import argparse
import copy
import math
import os
import sys
import time

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR

SEQ_LEN = 10      # the notebook's data_gen: sequences of 10 symbols
VOCAB = 11        # symbol 0 is padding and never occurs; symbol 1 comes first
PAD = 0
START = 1


# ---------------------------------------------------------------------------
# The model (the notebook's, as in tools/make-golden.py: pre-norm, annotated LayerNorm)
# ---------------------------------------------------------------------------

def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.src_embed = src_embed
        self.tgt_embed = tgt_embed
        self.generator = generator

    def forward(self, src, tgt, src_mask, tgt_mask):
        return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

    def encode(self, src, src_mask):
        return self.encoder(self.src_embed(src), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)


class Generator(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, x):
        return torch.log_softmax(self.proj(x), dim=-1)


LAYERNORM = "annotated"   # --layernorm standard: the C trainer's default formula instead


class LayerNorm(nn.Module):
    """The notebook's: a_2 (x - mean) / (std + eps) + b_2, std unbiased. With
    --layernorm standard: a_2 (x - mean) / sqrt(var + eps) + b_2, var biased."""

    def __init__(self, features, eps=1e-6):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps
        self.kind = LAYERNORM

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        if self.kind == "standard":
            var = x.var(-1, keepdim=True, unbiased=False)
            return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class SublayerConnection(nn.Module):
    """x + dropout(sublayer(norm(x))): the notebook's pre-norm residual."""

    def __init__(self, size, dropout):
        super().__init__()
        self.norm = LayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer):
        return x + self.dropout(sublayer(self.norm(x)))


class Encoder(nn.Module):
    def __init__(self, layer, n):
        super().__init__()
        self.layers = clones(layer, n)
        self.norm = LayerNorm(layer.size)

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class EncoderLayer(nn.Module):
    def __init__(self, size, self_attn, feed_forward, dropout):
        super().__init__()
        self.self_attn = self_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout), 2)
        self.size = size

    def forward(self, x, mask):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
        return self.sublayer[1](x, self.feed_forward)


class Decoder(nn.Module):
    def __init__(self, layer, n):
        super().__init__()
        self.layers = clones(layer, n)
        self.norm = LayerNorm(layer.size)

    def forward(self, x, memory, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return self.norm(x)


class DecoderLayer(nn.Module):
    def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
        super().__init__()
        self.size = size
        self.self_attn = self_attn
        self.src_attn = src_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout), 3)

    def forward(self, x, memory, src_mask, tgt_mask):
        m = memory
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
        x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
        return self.sublayer[2](x, self.feed_forward)


def subsequent_mask(size):
    attn_shape = (1, size, size)
    mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return mask == 0


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super().__init__()
        assert d_model % h == 0
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)            # the same mask for every head
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value))
        ]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        del query, key, value
        return self.linears[-1](x)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(self.w_1(x).relu()))


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.lut = nn.Embedding(vocab, d_model)
        self.d_model = d_model

    def forward(self, x):
        return self.lut(x) * math.sqrt(self.d_model)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)].requires_grad_(False)
        return self.dropout(x)


def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
    c = copy.deepcopy
    attn = MultiHeadedAttention(h, d_model)
    ff = PositionwiseFeedForward(d_model, d_ff, dropout)
    position = PositionalEncoding(d_model, dropout)
    model = EncoderDecoder(
        Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
        Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
        nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
        nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
        Generator(d_model, tgt_vocab),
    )
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    return model


# ---------------------------------------------------------------------------
# Training (the notebook's Batch, data_gen, LabelSmoothing, SimpleLossCompute,
# rate, run_epoch, greedy_decode)
# ---------------------------------------------------------------------------

class Batch:
    """Holds a batch of data with masks during training."""

    def __init__(self, src, tgt=None, pad=2):
        self.src = src
        self.src_mask = (src != pad).unsqueeze(-2)
        if tgt is not None:
            self.tgt = tgt[:, :-1]
            self.tgt_y = tgt[:, 1:]
            self.tgt_mask = self.make_std_mask(self.tgt, pad)
            self.ntokens = (self.tgt_y != pad).data.sum()

    @staticmethod
    def make_std_mask(tgt, pad):
        tgt_mask = (tgt != pad).unsqueeze(-2)
        tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)
        return tgt_mask


def data_gen(V, batch_size, nbatches):
    """Random data for a src-tgt copy task: 10 symbols in 1..V-1, the first one 1."""
    for _ in range(nbatches):
        data = torch.randint(1, V, size=(batch_size, SEQ_LEN))
        data[:, 0] = 1
        src = data.requires_grad_(False).clone().detach()
        tgt = data.requires_grad_(False).clone().detach()
        yield Batch(src, tgt, 0)


class LabelSmoothing(nn.Module):
    def __init__(self, size, padding_idx, smoothing=0.0):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size
        self.true_dist = None

    def forward(self, x, target):
        assert x.size(1) == self.size
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        mask = torch.nonzero(target.data == self.padding_idx)
        if mask.dim() > 0:
            true_dist.index_fill_(0, mask.squeeze(), 0.0)
        self.true_dist = true_dist
        return self.criterion(x, true_dist.clone().detach())


class SimpleLossCompute:
    def __init__(self, generator, criterion):
        self.generator = generator
        self.criterion = criterion

    def __call__(self, x, y, norm):
        x = self.generator(x)
        sloss = self.criterion(x.contiguous().view(-1, x.size(-1)),
                               y.contiguous().view(-1)) / norm
        return sloss.data * norm, sloss


def rate(step, model_size, factor, warmup):
    """The notebook's schedule; LambdaLR calls it with step 0 first, which becomes 1."""
    if step == 0:
        step = 1
    return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))


def run_epoch(data_iter, model, loss_compute, optimizer=None, scheduler=None, train=True):
    """The notebook's run_epoch (accum_iter 1), without its progress print; returns
    the loss per target token and the learning rate of the last update."""
    total_tokens = 0
    total_loss = 0
    last_lr = float("nan")
    for batch in data_iter:
        out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
        if train:
            loss_node.backward()
            last_lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
        total_loss += loss
        total_tokens += batch.ntokens
        del loss
        del loss_node
    return float(total_loss / total_tokens), last_lr


def greedy_decode(model, src, src_mask, max_len, start_symbol):
    memory = model.encode(src, src_mask)
    ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
    for _ in range(max_len - 1):
        out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
        prob = model.generator(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.data[0]
        ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
    return ys


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------

def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main():
    parser = argparse.ArgumentParser(
        description="The Annotated Transformer's copy task in PyTorch (the reference "
                    "beside ./transformer copy; the same flags and output).")
    parser.add_argument("--epochs", type=positive, default=20)
    parser.add_argument("--batches", type=positive, default=20)
    parser.add_argument("--batch-size", type=positive, default=80)
    parser.add_argument("--layers", type=positive, default=2)
    parser.add_argument("--d-model", type=positive, default=512)
    parser.add_argument("--d-ff", type=positive, default=2048)
    parser.add_argument("--heads", type=positive, default=8)
    parser.add_argument("--threads", type=positive, default=None,
                        help="torch.set_num_threads (default: the value of "
                             "OPENBLAS_NUM_THREADS if set, else torch's default); "
                             "OpenBLAS, which torch calls for its matrix products, reads "
                             "its own count from OPENBLAS_NUM_THREADS")
    parser.add_argument("--seed", type=int, default=1, help="torch.manual_seed (default 1)")
    parser.add_argument("--layernorm", choices=("annotated", "standard"), default="annotated",
                        help="annotated (the notebook's, default) or standard (biased "
                             "variance, eps under the square root: the C trainer's default)")
    args = parser.parse_args()
    global LAYERNORM
    LAYERNORM = args.layernorm
    if args.d_model % args.heads or args.d_model % 2:
        parser.error("--d-model must be even and a multiple of --heads")

    threads = args.threads
    if threads is None and os.environ.get("OPENBLAS_NUM_THREADS"):
        threads = int(os.environ["OPENBLAS_NUM_THREADS"])
    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(args.seed)

    V = VOCAB
    criterion = LabelSmoothing(size=V, padding_idx=PAD, smoothing=0.0)
    model = make_model(V, V, N=args.layers, d_model=args.d_model, d_ff=args.d_ff,
                       h=args.heads)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    lr_scheduler = LambdaLR(
        optimizer=optimizer,
        lr_lambda=lambda step: rate(step, model_size=model.src_embed[0].d_model,
                                    factor=1.0, warmup=400))
    loss_compute = SimpleLossCompute(model.generator, criterion)

    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        loss, lr = run_epoch(data_gen(V, args.batch_size, args.batches), model, loss_compute,
                             optimizer, lr_scheduler, train=True)
        print("epoch %d  loss %.4f  lr %.2e  %.1f s"
              % (epoch, loss, lr, time.perf_counter() - start), flush=True)
    train_seconds = time.perf_counter() - start
    total_steps = args.epochs * args.batches

    model.eval()
    with torch.no_grad():
        eval_loss, _ = run_epoch(data_gen(V, args.batch_size, 5), model, loss_compute,
                                 train=False)
        examples = min(args.batch_size, 8)
        data = torch.randint(1, V, size=(examples, SEQ_LEN))
        data[:, 0] = START
        data[0] = torch.arange(1, SEQ_LEN + 1)      # the course's example: 1 2 ... 10
        decoded = []
        for b in range(examples):
            src = data[b: b + 1]
            src_mask = torch.ones(1, 1, SEQ_LEN, dtype=torch.bool)
            decoded.append(greedy_decode(model, src, src_mask, max_len=SEQ_LEN,
                                         start_symbol=START)[0])
    print("evaluation loss %.4f after %d steps in %.1f s"
          % (eval_loss, total_steps, time.perf_counter() - start))
    exact = True
    for b in range(examples):
        same = torch.equal(decoded[b], data[b])
        exact = exact and same
        print("  source %s decoded %s %s" % (
            "".join("%2d " % v for v in data[b].tolist()),
            "".join("%2d " % v for v in decoded[b].tolist()),
            "exact" if same else "DIFFERENT"))
    tokens = total_steps * args.batch_size * (SEQ_LEN - 1)
    print("training: %d steps in %.3f s, %.0f target tokens/s, threads %d (torch %s)"
          % (total_steps, train_seconds, tokens / train_seconds, torch.get_num_threads(),
             torch.__version__))
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
