#!/usr/bin/python3
"""Golden fixtures for the C Annotated Transformer, computed with PyTorch.

Writes into tests/golden/ (relative to the repository root, found from this
file's location):

  model-pre-annotated.safetensors    pre-norm sublayers, Annotated-Transformer LayerNorm
  model-pre-standard.safetensors     pre-norm sublayers, standard LayerNorm
  model-post-annotated.safetensors   post-norm sublayers (paper), Annotated LayerNorm
  model-post-standard.safetensors    post-norm sublayers (paper), standard LayerNorm
  model-pre-standard-tied.safetensors  pre/standard with the generator tied to the target embedding
  parameter-counts.txt               parameter counts of three pre-norm configurations
  README.md                          what the files hold, how they were made, tolerances

Each .safetensors file holds every parameter of a small model (float32,
PyTorch state_dict names), a fixed batch (input.src, input.tgt, input.tgt_y,
int32), the expected encoder output, decoder output and generator
log-probabilities, the summed negative log-likelihood of input.tgt_y
(expected.loss) and its gradient with respect to every stored parameter
(grad.NAME), all computed in float64 from the float32 weights and stored as
float32.

Run from anywhere, with Debian's system Python and python3-torch:

    /usr/bin/python3 tools/make-golden.py

The script is deterministic (fixed seeds, one thread): a second run rewrites
every file byte for byte. After writing, it reads each file back with its own
safetensors reader, rebuilds the model from the stored tensors and checks that
it reproduces every expected.* and grad.* tensor bit for bit, that exp(logprobs)
sums to 1 per row, that expected.loss follows from expected.logprobs and
input.tgt_y, that sampled gradient entries agree with central finite
differences, and (tied file) that the shared tensor's gradient is the sum of
the two gradients of an untied copy.
"""

import copy
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "golden")

SEED = 1234          # torch.manual_seed before building each variant's model
BATCH_SEED = 2022    # seed of the separate generator that draws the batch
TARGET_SEED = 2023   # seed of the separate generator that draws the last target of each row
CHECK_SEED = 2024    # seed of the generator that picks the gradient entries checked by finite differences
FD_STEP = 1e-6       # central differences: (L(w + h) - L(w - h)) / 2h, in float64
FD_RTOL = 1e-6       # required relative agreement of finite differences and autograd
FD_MIN_GRAD = 1e-2   # only entries with |grad| >= this are checked (the rounding noise of the
                     # difference quotient, ~1 ulp(loss) / 2h ~ 4e-9, would dominate below)
FD_ENTRIES = 16      # entries checked per file
EPS = 1e-6
PAD = 0
START = 1

CONFIG = dict(src_vocab=11, tgt_vocab=13, layers=2, d_model=32, d_ff=64, heads=4)
SRC_LENGTHS = [7, 5, 3]   # real lengths of the source rows, Ts = 7
TGT_LENGTHS = [6, 4, 2]   # real lengths of the target-input rows (start symbol included), Tt = 6

VARIANTS = [("pre", "annotated"), ("pre", "standard"),
            ("post", "annotated"), ("post", "standard")]
TIED_VARIANT = ("pre", "standard")

COUNT_CONFIGS = [  # name, src_vocab, tgt_vocab, layers, d_model, d_ff, heads
    ("copy", 11, 11, 2, 512, 2048, 8),
    ("small", 8000, 8000, 3, 256, 1024, 8),
    ("base", 8315, 6384, 6, 512, 2048, 8),
]


# ---------------------------------------------------------------------------
# The model, in the structure of the Annotated Transformer
# ---------------------------------------------------------------------------

def clones(module, n):
    """n independent deep copies of module."""
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
        return F.log_softmax(self.proj(x), dim=-1)


class LayerNorm(nn.Module):
    """kind "annotated": a_2 (x - mean) / (std + eps) + b_2 with the unbiased std;
    kind "standard":  a_2 (x - mean) / sqrt(var + eps) + b_2 with the biased var."""

    def __init__(self, features, kind, eps=EPS):
        super().__init__()
        assert kind in ("annotated", "standard")
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.kind = kind
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        if self.kind == "annotated":
            std = x.std(-1, keepdim=True, unbiased=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2


class SublayerConnection(nn.Module):
    """placement "pre": x + dropout(sublayer(norm(x)));
    placement "post": norm(x + dropout(sublayer(x)))."""

    def __init__(self, size, dropout, placement, kind):
        super().__init__()
        assert placement in ("pre", "post")
        self.norm = LayerNorm(size, kind)
        self.dropout = nn.Dropout(dropout)
        self.placement = placement

    def forward(self, x, sublayer):
        if self.placement == "pre":
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class Encoder(nn.Module):
    def __init__(self, layer, n, placement, kind):
        super().__init__()
        self.layers = clones(layer, n)
        if placement == "pre":          # post-norm has no final norm at all
            self.norm = LayerNorm(layer.size, kind)

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x) if hasattr(self, "norm") else x


class EncoderLayer(nn.Module):
    def __init__(self, size, self_attn, feed_forward, dropout, placement, kind):
        super().__init__()
        self.self_attn = self_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout, placement, kind), 2)
        self.size = size

    def forward(self, x, mask):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
        return self.sublayer[1](x, self.feed_forward)


class Decoder(nn.Module):
    def __init__(self, layer, n, placement, kind):
        super().__init__()
        self.layers = clones(layer, n)
        if placement == "pre":
            self.norm = LayerNorm(layer.size, kind)

    def forward(self, x, memory, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return self.norm(x) if hasattr(self, "norm") else x


class DecoderLayer(nn.Module):
    def __init__(self, size, self_attn, src_attn, feed_forward, dropout, placement, kind):
        super().__init__()
        self.size = size
        self.self_attn = self_attn
        self.src_attn = src_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout, placement, kind), 3)

    def forward(self, x, memory, src_mask, tgt_mask):
        m = memory
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
        x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
        return self.sublayer[2](x, self.feed_forward)


def subsequent_mask(size):
    """[1, size, size] boolean, True on and below the diagonal."""
    return torch.tril(torch.ones(1, size, size, dtype=torch.bool))


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


def positional_table(max_len, d_model, dtype):
    """pe[pos, 2i] = sin(pos * exp(2i * -(ln 10000 / d))), pe[pos, 2i+1] = cos(same)."""
    pe = torch.zeros(max_len, d_model, dtype=dtype)
    position = torch.arange(0, max_len, dtype=dtype).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=dtype)
                         * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.unsqueeze(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("pe", positional_table(max_len, d_model, torch.float32))

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)].requires_grad_(False)
        return self.dropout(x)


def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1,
               placement="pre", kind="annotated", init=True):
    c = copy.deepcopy
    attn = MultiHeadedAttention(h, d_model)
    ff = PositionwiseFeedForward(d_model, d_ff, dropout)
    position = PositionalEncoding(d_model, dropout)
    model = EncoderDecoder(
        Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout, placement, kind), N,
                placement, kind),
        Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout, placement, kind), N,
                placement, kind),
        nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
        nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
        Generator(d_model, tgt_vocab),
    )
    if init:
        for p in model.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
    return model


def randomize_layernorms(model):
    """a_2 <- 1 + 0.1 randn, b_2 <- 0.1 randn, so that the tests see them.

    The norms inside the layers are drawn first, in module order, and the final
    encoder/decoder norms (pre-norm only) last, so that pre and post variants
    built from the same seed share every parameter they both have."""
    inner, final = [], []
    for name, module in model.named_modules():
        if isinstance(module, LayerNorm):
            (final if name in ("encoder.norm", "decoder.norm") else inner).append(module)
    with torch.no_grad():
        for module in inner + final:
            module.a_2.copy_(1.0 + 0.1 * torch.randn(module.a_2.shape))
            module.b_2.copy_(0.1 * torch.randn(module.b_2.shape))


def build(placement, kind, init=True):
    return make_model(CONFIG["src_vocab"], CONFIG["tgt_vocab"], N=CONFIG["layers"],
                      d_model=CONFIG["d_model"], d_ff=CONFIG["d_ff"], h=CONFIG["heads"],
                      dropout=0.1, placement=placement, kind=kind, init=init)


def to_float64(model):
    """A float64 copy of a float32 model. The pe buffers are recomputed in float64
    rather than widened from float32, so the reference is float64 throughout."""
    m = copy.deepcopy(model).double()
    for seq in (m.src_embed, m.tgt_embed):
        pe = seq[1].pe
        seq[1].pe = positional_table(pe.size(1), pe.size(2), torch.float64)
    return m.eval()


# ---------------------------------------------------------------------------
# Batch and masks
# ---------------------------------------------------------------------------

def make_batch():
    g = torch.Generator().manual_seed(BATCH_SEED)
    ts, tt = max(SRC_LENGTHS), max(TGT_LENGTHS)
    src = torch.full((len(SRC_LENGTHS), ts), PAD, dtype=torch.int64)
    tgt = torch.full((len(TGT_LENGTHS), tt), PAD, dtype=torch.int64)
    for b, n in enumerate(SRC_LENGTHS):
        src[b, :n] = torch.randint(2, CONFIG["src_vocab"], (n,), generator=g)
    for b, n in enumerate(TGT_LENGTHS):
        tgt[b, 0] = START
        tgt[b, 1:n] = torch.randint(2, CONFIG["tgt_vocab"], (n - 1,), generator=g)
    return src, tgt


def make_targets(tgt):
    """The prediction targets of the decoder inputs tgt, as the reference's Batch makes them
    (tgt = full[:, :-1], tgt_y = full[:, 1:]), per row: a row with real length n (start
    symbol included) is the first n tokens of a sentence of n + 1 tokens whose last token
    is drawn here, in 2..tgt_vocab-1, from a separate generator. So
    tgt_y[b, :n-1] = tgt[b, 1:n], tgt_y[b, n-1] = that token, tgt_y[b, n:] = PAD."""
    g = torch.Generator().manual_seed(TARGET_SEED)
    tgt_y = torch.full_like(tgt, PAD)
    for b, n in enumerate(TGT_LENGTHS):
        assert (tgt[b, :n] != PAD).all() and (tgt[b, n:] == PAD).all()
        tgt_y[b, : n - 1] = tgt[b, 1:n]
        tgt_y[b, n - 1] = torch.randint(2, CONFIG["tgt_vocab"], (1,), generator=g)
    return tgt_y


def make_masks(src, tgt):
    src_mask = (src != PAD).unsqueeze(-2)                                   # [B, 1, Ts]
    tgt_mask = (tgt != PAD).unsqueeze(-2) & subsequent_mask(tgt.size(-1))   # [B, Tt, Tt]
    return src_mask, tgt_mask


def run(model, src, tgt):
    src_mask, tgt_mask = make_masks(src, tgt)
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        decoded = model.decode(memory, src_mask, tgt, tgt_mask)
        logprobs = model.generator(decoded)
    return memory, decoded, logprobs


def nll(logprobs, tgt_y):
    """Summed negative log-likelihood of the targets, PAD targets ignored."""
    return F.nll_loss(logprobs.reshape(-1, logprobs.size(-1)), tgt_y.reshape(-1),
                      reduction="sum", ignore_index=PAD)


def loss_and_grads(model, src, tgt, tgt_y):
    """Forward with autograd; returns (logprobs, loss, {name: d loss / d parameter}).
    A parameter shared by two modules appears once, under the name named_parameters
    gives it (the first module that holds it), with its total gradient."""
    src_mask, tgt_mask = make_masks(src, tgt)
    logprobs = model.generator(model.decode(model.encode(src, src_mask), src_mask,
                                            tgt, tgt_mask))
    loss = nll(logprobs, tgt_y)
    named = list(model.named_parameters())
    grads = torch.autograd.grad(loss, [p for _, p in named])
    return logprobs.detach(), loss.detach(), {n: g for (n, _), g in zip(named, grads)}


def loss_only(model, src, tgt, tgt_y):
    with torch.no_grad():
        return nll(run(model, src, tgt)[2], tgt_y).item()


def tie(model):
    """The paper's weight sharing: the generator projection is the target embedding table."""
    model.generator.proj.weight = model.tgt_embed[0].lut.weight
    return model


# ---------------------------------------------------------------------------
# safetensors, by hand
# ---------------------------------------------------------------------------

DTYPES = {"F32": np.dtype("<f4"), "I32": np.dtype("<i4"), "F64": np.dtype("<f8"),
          "I64": np.dtype("<i8")}


def write_safetensors(path, tensors, metadata):
    """tensors: dict name -> (dtype string, numpy array). Laid out sorted by name."""
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    chunks, offset = [], 0
    for name in sorted(tensors):
        dtype, array = tensors[name]
        data = np.ascontiguousarray(array, dtype=DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")
    text += b" " * ((-(8 + len(text))) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in chunks:
            f.write(data)
    os.replace(tmp, path)


def read_safetensors(path):
    """Returns (metadata dict, dict name -> numpy array), checking the layout."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert (8 + n) % 8 == 0, "header not padded to a multiple of 8"
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = blob[8 + n :]
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in metadata.values())
    tensors, spans = {}, []
    for name, info in header.items():
        dt = DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"], dtype=np.int64))
        assert end - begin == count * dt.itemsize, name
        spans.append((begin, end))
        tensors[name] = np.frombuffer(data[begin:end], dtype=dt).reshape(info["shape"]).copy()
    spans.sort()
    pos = 0
    for begin, end in spans:                 # contiguous, no holes, no overlap
        assert begin == pos
        pos = end
    assert pos == len(data), "trailing bytes after the last tensor"
    return metadata, tensors


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

def variant_file(placement, kind, tied=False):
    return os.path.join(OUT_DIR, "model-%s-%s%s.safetensors"
                        % (placement, kind, "-tied" if tied else ""))


def generate_variant(placement, kind, src, tgt, tgt_y, tied=False):
    torch.manual_seed(SEED)
    model = build(placement, kind)
    if tied:        # after the init, as the reference does; draws nothing from the RNG
        tie(model)
    randomize_layernorms(model)
    model.eval()
    model64 = to_float64(model)
    memory, decoded, logprobs = run(model64, src, tgt)
    logprobs_ad, loss, grads = loss_and_grads(model64, src, tgt, tgt_y)
    assert torch.equal(logprobs_ad, logprobs)

    tensors = {}
    for name, value in model.state_dict().items():
        if name.endswith(".pe") or (tied and name == "generator.proj.weight"):
            continue
        tensors[name] = ("F32", value.detach().numpy())
    assert set(grads) == set(tensors), "parameters and stored tensors differ"
    tensors["input.src"] = ("I32", src.numpy().astype(np.int32))
    tensors["input.tgt"] = ("I32", tgt.numpy().astype(np.int32))
    tensors["input.tgt_y"] = ("I32", tgt_y.numpy().astype(np.int32))
    tensors["expected.memory"] = ("F32", memory.numpy().astype(np.float32))
    tensors["expected.decoded"] = ("F32", decoded.numpy().astype(np.float32))
    tensors["expected.logprobs"] = ("F32", logprobs.numpy().astype(np.float32))
    tensors["expected.loss"] = ("F32", loss.reshape(1).numpy().astype(np.float32))
    for name, grad in grads.items():
        tensors["grad." + name] = ("F32", grad.numpy().astype(np.float32))
    metadata = dict(src_vocab=CONFIG["src_vocab"], tgt_vocab=CONFIG["tgt_vocab"],
                    layers=CONFIG["layers"], d_model=CONFIG["d_model"], d_ff=CONFIG["d_ff"],
                    heads=CONFIG["heads"], norm=placement, layernorm=kind, eps=repr(EPS),
                    pad=PAD, torch=str(torch.__version__))
    if tied:
        metadata["tied"] = "1"
    path = variant_file(placement, kind, tied)
    write_safetensors(path, tensors, metadata)
    return path


def finite_difference_check(model64, grads, src, tgt, tgt_y, always=()):
    """Central differences in float64 for FD_ENTRIES entries: one random entry with
    |grad| >= FD_MIN_GRAD from each of the parameters in always, then from parameters
    drawn at random. Returns the largest relative error seen."""
    g = torch.Generator().manual_seed(CHECK_SEED)
    params = dict(model64.named_parameters())
    names = sorted(params)
    order = [n for n in always if n in params]
    order += [names[i] for i in torch.randperm(len(names), generator=g).tolist()
              if names[i] not in order]
    worst, checked = 0.0, 0
    for name in order:
        if checked == FD_ENTRIES:
            break
        candidates = torch.nonzero(grads[name].reshape(-1).abs() >= FD_MIN_GRAD).reshape(-1)
        if len(candidates) == 0:
            continue
        i = candidates[torch.randint(len(candidates), (1,), generator=g)].item()
        flat = params[name].data.reshape(-1)
        assert flat.data_ptr() == params[name].data.data_ptr()
        w = flat[i].item()
        flat[i] = w + FD_STEP
        up = loss_only(model64, src, tgt, tgt_y)
        flat[i] = w - FD_STEP
        down = loss_only(model64, src, tgt, tgt_y)
        flat[i] = w
        fd = (up - down) / (2 * FD_STEP)
        ad = grads[name].reshape(-1)[i].item()
        rel = abs(fd - ad) / abs(ad)
        assert rel <= FD_RTOL, "%s[%d]: finite difference %.12g, autograd %.12g" % (
            name, i, fd, ad)
        worst = max(worst, rel)
        checked += 1
    assert checked == FD_ENTRIES
    return worst


def check_variant(path):
    """Rebuild the model from the file alone and compare. Returns measured errors."""
    metadata, t = read_safetensors(path)
    placement, kind = metadata["norm"], metadata["layernorm"]
    assert metadata["eps"] == repr(EPS) and metadata["pad"] == str(PAD)
    tied = metadata.get("tied", "0") == "1"
    model = make_model(int(metadata["src_vocab"]), int(metadata["tgt_vocab"]),
                       N=int(metadata["layers"]), d_model=int(metadata["d_model"]),
                       d_ff=int(metadata["d_ff"]), h=int(metadata["heads"]),
                       placement=placement, kind=kind, init=False)
    if tied:
        tie(model)
    state = {k: v for k, v in model.state_dict().items() if k.endswith(".pe")}
    params = {k: torch.from_numpy(v) for k, v in t.items()
              if not k.startswith(("input.", "expected.", "grad."))}
    assert not set(params) & set(state)
    assert set("grad." + k for k in params) == set(k for k in t if k.startswith("grad."))
    for k in params:
        assert t["grad." + k].shape == t[k].shape, k
    if tied:
        assert "generator.proj.weight" not in params
        params["generator.proj.weight"] = params["tgt_embed.0.lut.weight"]
    state.update(params)
    model.load_state_dict(state, strict=True)
    model.eval()
    if tied:
        assert model.generator.proj.weight is model.tgt_embed[0].lut.weight
    for k, v in t.items():
        if not k.startswith("input."):
            assert v.dtype == np.float32, k
    src = torch.from_numpy(t["input.src"]).long()
    tgt = torch.from_numpy(t["input.tgt"]).long()
    tgt_y = torch.from_numpy(t["input.tgt_y"]).long()
    for k in ("input.src", "input.tgt", "input.tgt_y"):
        assert t[k].dtype == np.int32, k
    # tgt_y is tgt shifted left by one, with one more token, and padded where tgt is.
    assert tgt_y.shape == tgt.shape
    assert torch.equal(tgt_y != PAD, tgt != PAD)
    assert torch.equal(tgt_y[:, :-1][tgt[:, 1:] != PAD], tgt[:, 1:][tgt[:, 1:] != PAD])

    # float64 again: must give the stored float32 numbers.
    exp64 = run(to_float64(model), src, tgt)
    # float32 forward pass, as a float32 consumer would compute it.
    got32 = run(model, src, tgt)
    errs = {}
    for name, ref64, out32 in zip(("memory", "decoded", "logprobs"), exp64, got32):
        stored = t["expected." + name].astype(np.float64)
        d64 = np.abs(ref64.numpy().astype(np.float32).astype(np.float64) - stored).max()
        assert d64 == 0.0, "%s: float64 rerun differs from file by %g" % (name, d64)
        errs[name] = np.abs(out32.numpy().astype(np.float64) - stored).max()
        errs[name + "_rel"] = errs[name] / np.abs(stored).max()
    lp = t["expected.logprobs"].astype(np.float64)
    errs["rowsum"] = np.abs(np.exp(lp).sum(-1) - 1.0).max()
    assert errs["rowsum"] < 1e-5, errs["rowsum"]
    assert errs["logprobs"] < 1e-4, errs["logprobs"]

    # The loss from the stored log-probabilities and targets, by hand.
    y = t["input.tgt_y"]
    real = y != PAD
    loss_stored = float(t["expected.loss"][0])
    loss_from_lp = -np.take_along_axis(lp, y[..., None].astype(np.int64), -1)[..., 0][real].sum()
    errs["loss"] = loss_stored
    errs["loss_from_logprobs_rel"] = abs(loss_from_lp - loss_stored) / abs(loss_stored)
    assert errs["loss_from_logprobs_rel"] < 1e-6, errs["loss_from_logprobs_rel"]

    # float64 loss and gradients again: must give the stored float32 numbers.
    model64 = to_float64(model)
    if tied:
        assert model64.generator.proj.weight is model64.tgt_embed[0].lut.weight
    lp64, loss64, grads64 = loss_and_grads(model64, src, tgt, tgt_y)
    assert np.array_equal(lp64.numpy().astype(np.float32), t["expected.logprobs"])
    assert np.array_equal(loss64.reshape(1).numpy().astype(np.float32), t["expected.loss"])
    manual = -lp64.gather(-1, tgt_y.unsqueeze(-1)).squeeze(-1)[tgt_y != PAD].sum().item()
    assert abs(manual - loss64.item()) <= 1e-12 * abs(loss64.item())
    assert set(grads64) == set(params) - ({"generator.proj.weight"} if tied else set())
    for name, grad in grads64.items():
        assert np.array_equal(grad.numpy().astype(np.float32), t["grad." + name]), name

    # Finite differences in float64 for a few entries.
    errs["fd_rel"] = finite_difference_check(
        model64, grads64, src, tgt, tgt_y,
        always=("tgt_embed.0.lut.weight", "generator.proj.weight"))

    # Tied: the shared tensor's gradient is the sum of the two of an untied copy.
    if tied:
        untied = copy.deepcopy(model64)
        untied.generator.proj.weight = nn.Parameter(
            untied.tgt_embed[0].lut.weight.detach().clone())
        assert untied.generator.proj.weight is not untied.tgt_embed[0].lut.weight
        _, loss_u, grads_u = loss_and_grads(untied, src, tgt, tgt_y)
        assert loss_u.item() == loss64.item()
        total = grads_u["tgt_embed.0.lut.weight"] + grads_u["generator.proj.weight"]
        errs["tied_sum"] = (total - grads64["tgt_embed.0.lut.weight"]).abs().max().item()
        assert errs["tied_sum"] <= 1e-12, errs["tied_sum"]
        for name, grad in grads64.items():
            if name != "tgt_embed.0.lut.weight":
                assert (grads_u[name] - grad).abs().max().item() <= 1e-12, name

    # float32 autograd, as a float32 consumer would compute it.
    _, loss32, grads32 = loss_and_grads(model, src, tgt, tgt_y)
    errs["loss32"] = abs(loss32.item() - loss_stored)
    errs["grad32"] = max(np.abs(g.numpy().astype(np.float64)
                                - t["grad." + n].astype(np.float64)).max()
                         for n, g in grads32.items())
    errs["grad32_mixed"] = max((np.abs(g.numpy().astype(np.float64)
                                       - t["grad." + n].astype(np.float64))
                                / np.maximum(1.0, np.abs(t["grad." + n]))).max()
                               for n, g in grads32.items())
    return errs


# ---------------------------------------------------------------------------
# Parameter counts
# ---------------------------------------------------------------------------

def count_formula(sv, tv, n, d, ff, h):
    attn = 4 * (d * d + d)
    ffn = d * ff + ff + ff * d + d
    ln = 2 * d
    enc = attn + ffn + 2 * ln
    dec = 2 * attn + ffn + 3 * ln
    return n * (enc + dec) + 2 * ln + sv * d + tv * d + d * tv + tv


def write_counts():
    lines = ["# name src_vocab tgt_vocab layers d_model d_ff heads parameters"
             " (pre-norm, untied generator, pe buffers not counted)"]
    counts = []
    for name, sv, tv, n, d, ff, h in COUNT_CONFIGS:
        model = make_model(sv, tv, N=n, d_model=d, d_ff=ff, h=h, placement="pre",
                           kind="annotated", init=False)
        count = sum(p.numel() for p in model.parameters())
        assert count == count_formula(sv, tv, n, d, ff, h), name
        del model
        lines.append("%s %d %d %d %d %d %d %d" % (name, sv, tv, n, d, ff, h, count))
        counts.append((name, count))
    with open(os.path.join(OUT_DIR, "parameter-counts.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return counts


README = """\
# Golden fixtures (generated)

Everything in this directory is written by `tools/make-golden.py`; do not edit by hand.
Regenerate with

    /usr/bin/python3 tools/make-golden.py

(Debian's system Python with `python3-torch`; made with torch {torch}, numpy {numpy}).
The script is deterministic: a second run rewrites every file byte for byte.

## Files

| file | holds |
|---|---|
| `model-pre-annotated.safetensors` | pre-norm sublayers `x + sublayer(norm(x))`, final encoder/decoder norm; Annotated LayerNorm |
| `model-pre-standard.safetensors` | pre-norm, final norms; standard LayerNorm |
| `model-post-annotated.safetensors` | post-norm sublayers `norm(x + sublayer(x))` (paper), no final norms; Annotated LayerNorm |
| `model-post-standard.safetensors` | post-norm, no final norms; standard LayerNorm |
| `model-pre-standard-tied.safetensors` | as pre-standard, but the generator projection is tied to the target embedding (see below) |
| `parameter-counts.txt` | `name src_vocab tgt_vocab layers d_model d_ff heads count` for copy, small and base |

LayerNorm, eps = 1e-6 in both:

* annotated: `a_2 * (x - mean) / (std + eps) + b_2`, `std` unbiased (divides by n-1);
* standard: `a_2 * (x - mean) / sqrt(var + eps) + b_2`, `var` biased (divides by n).

## Contents of each .safetensors file

Standard safetensors layout: 8-byte little-endian header length N, N bytes of JSON (keys
sorted, no spaces, padded with trailing spaces so that 8 + N is a multiple of 8), then the
tensors, little-endian, contiguous, in sorted-name order.

* every model parameter under its PyTorch `state_dict` name, F32
  (`encoder.layers.0.self_attn.linears.0.weight`, `...sublayer.0.norm.a_2`,
  `src_embed.0.lut.weight`, `generator.proj.bias`, ...). `nn.Linear` weights are
  `[out, in]` (y = x W^T + b). `encoder.norm.*`/`decoder.norm.*` exist only in the pre files.
  The positional-encoding buffers `src_embed.1.pe`/`tgt_embed.1.pe` are not stored.
* `input.src` I32 [3,7]: real lengths 7, 5, 3, tokens in 2..10, padding 0.
* `input.tgt` I32 [3,6]: decoder input, each row starts with 1, then tokens in 2..12,
  real lengths 6, 4, 2 (start symbol included), padding 0. Here `{tgt}`.
* `input.tgt_y` I32 [3,6]: the prediction target of each decoder input position, the
  reference's `tgt_y`. A row of `input.tgt` with real length n is the first n tokens of a
  sentence of n + 1 tokens, and `input.tgt_y` holds its last n: `tgt_y[b, :n-1] = tgt[b, 1:n]`,
  `tgt_y[b, n-1]` = the sentence's last token (drawn in 2..12 from a separate generator, seed
  {tseed}), `tgt_y[b, n:] = 0`, so `tgt_y` is padding exactly where `tgt` is. Here
  `{tgt_y}`. (The reference's `Batch` slices the whole padded batch,
  `tgt = full[:, :-1]`, `tgt_y = full[:, 1:]`; that agrees with the above for the longest row,
  and for the shorter ones would leave the last token in `tgt` too. Slicing each row keeps
  `input.tgt` as it was.) The batch is the same in all five files.
* `expected.memory` F32 [3,7,32]: encoder output (after the final norm in pre).
* `expected.decoded` F32 [3,6,32]: decoder output (after the final norm in pre).
* `expected.logprobs` F32 [3,6,13]: generator output, log_softmax(proj(decoded)).
* `expected.loss` F32 [1]: the summed negative log-likelihood of the targets, padding
  ignored: `-sum over (b,t) with tgt_y[b,t] != 0 of logprobs[b, t, tgt_y[b,t]]`, i.e.
  `nn.NLLLoss(reduction="sum", ignore_index=0)` on the generator output (12 terms, not
  divided by anything).
* `grad.NAME` F32, the shape of `NAME`, for every stored parameter `NAME` (not the `pe`
  buffers): d `expected.loss` / d `NAME`, by autograd.
* `__metadata__`: src_vocab, tgt_vocab, layers, d_model, d_ff, heads, norm (pre/post),
  layernorm (annotated/standard), eps, pad, torch - all strings; the tied file also has
  tied = "1" (the other files have no `tied` key: read its absence as untied).

Masks are as in the Annotated Transformer: `src_mask = (src != 0)` over keys, shape [B,1,Ts];
`tgt_mask = (tgt != 0)[:, None, :] & tril(ones(Tt, Tt))`, shape [B,Tt,Tt]; masked scores are
set to -1e9 before the softmax. No row is fully masked. Rows at padded positions are still
computed and compared (they attend to the real keys only). The model is in eval mode
(no dropout).

Some gradients are zero or rounding noise, by the mathematics, not by accident:

* rows of `grad.src_embed.0.lut.weight` and `grad.tgt_embed.0.lut.weight` of tokens absent
  from the batch, and row 0 (padding) of both: padded positions are masked out as keys
  (weight exactly 0 after the -1e9) and padded decoder positions have no target, so nothing
  depends on them. Exactly 0.0 in the files.
* the key-projection biases `*.self_attn.linears.1.bias` and `*.src_attn.linears.1.bias`:
  they add the same `q . b` to every score of a query row, and the softmax ignores that.
  The stored values are float64 rounding noise, below 1e-15 in magnitude; compare them with
  an absolute tolerance.

### The tied file

`model-pre-standard-tied.safetensors` is the pre-norm, standard-LayerNorm model with the
paper's weight sharing: after the init, `model.generator.proj.weight =
model.tgt_embed[0].lut.weight` (one [13,32] tensor; the embedding multiplies it by
sqrt(d_model), the generator does not). The shared tensor is stored once, as
`tgt_embed.0.lut.weight`; there is no `generator.proj.weight` and no
`grad.generator.proj.weight`. `grad.tgt_embed.0.lut.weight` is the total gradient of the
shared tensor, the sum of its gradient as embedding and as projection (autograd accumulates
both uses). Tying draws nothing from the random generator, so every stored parameter equals
the one of `model-pre-standard.safetensors` with the same name, and so does the batch; the
outputs, loss and gradients differ because the generator weight does.

## How the numbers were made

Config N=2, d_model=32, heads=4, d_ff=64, src_vocab=11, tgt_vocab=13. Per file:
`torch.manual_seed({seed})`, build the model (PyTorch default init, then
`xavier_uniform_` on every parameter with dim > 1, as the reference; then the tie, in the
tied file), then every LayerNorm
`a_2 = 1 + 0.1*randn`, `b_2 = 0.1*randn` (inner norms first, final norms last). So pre and
post files share every parameter they both have, and annotated/standard files with the same
placement have identical weights. The batch comes from a separate generator (seed {bseed}),
the last target token of each row from another one (seed {tseed}).

The expected outputs, the loss and the gradients were computed in float64: the float32
weights were widened to float64 (the positional table recomputed in float64) and run on the
batch, autograd differentiated the float64 loss, and the results were rounded to float32.

The script checks, after writing, from the files alone: a float64 rerun reproduces every
`expected.*` and `grad.*` tensor bit for bit; `expected.loss` equals the loss recomputed from
the stored `expected.logprobs` and `input.tgt_y` (relative 1e-6); for {fd_entries} gradient
entries per file (one of each embedding/generator weight, the others from random
parameters, seed {cseed}, entries with |grad| >= {fd_min:g}) central finite differences in
float64, h = {fd_step:g}, agree with autograd to relative {fd_rtol:g} (largest seen:
{fd_rel:.1e}; below |grad| ~ 1e-2 the rounding noise of the difference quotient, about
4e-9, would dominate); and, for the tied file, the shared gradient equals the sum of the
`tgt_embed.0.lut.weight` and `generator.proj.weight` gradients of an untied float64 copy with
the same values (largest difference {tied_sum:.1e}, required <= 1e-12).

## Tolerances

A consumer computing in float32 should compare with a mixed tolerance, e.g.
`|got - expected| <= 1e-4 + 1e-4 * |expected|`, for all three outputs. For reference,
PyTorch's own float32 forward pass (one thread) differs from the stored values by at most:

| file | memory | decoded | logprobs |
|---|---|---|---|
{errtable}

A float64 consumer should agree to about float32 rounding (relative 1e-6). max |sum(exp(logprobs)) - 1|
over all rows of all files: {rowsum:.2e}.

Loss and gradients: PyTorch's float32 autograd (one thread) differs from the stored values by
at most (mixed = max |got - expected| / max(1, |expected|)):

| file | expected.loss | float32 loss abs | grad abs | grad mixed | finite differences rel |
|---|---|---|---|---|---|
{gradtable}

A float32 consumer can use `|got - expected| <= 1e-5 max(1, |expected|)` for the gradients
and relative 1e-5 for the loss.
"""


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT_DIR, exist_ok=True)
    src, tgt = make_batch()
    tgt_y = make_targets(tgt)
    paths = [generate_variant(p, k, src, tgt, tgt_y) for p, k in VARIANTS]
    paths.append(generate_variant(*TIED_VARIANT, src, tgt, tgt_y, tied=True))
    errtable, gradtable, rowsum, fd_rel, tied_sum = [], [], 0.0, 0.0, None
    for path in paths:
        e = check_variant(path)
        rowsum = max(rowsum, e["rowsum"])
        fd_rel = max(fd_rel, e["fd_rel"])
        tied_sum = e.get("tied_sum", tied_sum)
        name = os.path.basename(path)
        errtable.append("| `%s` | %.1e | %.1e | %.1e |" % (
            name, e["memory"], e["decoded"], e["logprobs"]))
        gradtable.append("| `%s` | %.9g | %.1e | %.1e | %.1e | %.1e |" % (
            name, e["loss"], e["loss32"], e["grad32"], e["grad32_mixed"], e["fd_rel"]))
        print("%s: ok; float32 vs stored max abs: memory %.2e decoded %.2e logprobs %.2e;"
              " max |rowsum-1| %.2e" % (name, e["memory"], e["decoded"],
                                        e["logprobs"], e["rowsum"]))
        print("%s: loss %.9g; float32 vs stored: loss %.2e, grad max abs %.2e, mixed %.2e;"
              " finite differences max rel %.2e%s" % (
                  name, e["loss"], e["loss32"], e["grad32"], e["grad32_mixed"], e["fd_rel"],
                  "; tied grad vs untied sum %.2e" % e["tied_sum"] if "tied_sum" in e else ""))
    counts = write_counts()
    for name, count in counts:
        print("parameters %s: %d" % (name, count))
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README.format(torch=torch.__version__, numpy=np.__version__, seed=SEED,
                              bseed=BATCH_SEED, tseed=TARGET_SEED, cseed=CHECK_SEED,
                              errtable="\n".join(errtable), gradtable="\n".join(gradtable),
                              rowsum=rowsum, fd_rel=fd_rel, fd_entries=FD_ENTRIES,
                              fd_step=FD_STEP, fd_rtol=FD_RTOL, fd_min=FD_MIN_GRAD,
                              tied_sum=tied_sum,
                              tgt_y=format_rows(tgt_y), tgt=format_rows(tgt)))
    return 0


def format_rows(x):
    return "[" + ", ".join("[" + ", ".join(str(v) for v in row) + "]"
                           for row in x.tolist()) + "]"


if __name__ == "__main__":
    sys.exit(main())
