#!/usr/bin/python3
# A model file of "The Annotated Transformer in C" in plain PyTorch: load any model file of
# the program (format versions 2 and 3, weights F32 or BF16, tied tensors filled in, either
# LayerNorm, pre- or post-norm) into the Annotated Transformer's modules, and translate
# greedily as `transformer translate --beam 1` does; and save such a model as a model file
# (version 3, every key of data/FORMAT.md, the checksum of its contents) that the program
# loads. PyTorch and the standard library only.
#
#   transformer tokenize --language de --lowercase < in.de \
#     | tools/transformer_torch.py translate MODEL [--logprobs] \
#     | transformer tokenize --language en --detokenize
#
# Standard input: tokenized German, a sentence a line (the program's tokenizer: the rules of
# the book's chapter on text are not repeated here); standard output: the English tokens,
# subword pieces joined, a sentence a line (with --logprobs, the sum of the chosen tokens'
# log-probabilities before each, and a tab). `check MODEL` verifies the checksum.
import json
import math
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FORMAT = "annotated-transformer-c model"
SPECIALS = ["<s>", "</s>", "<blank>", "<unk>"]     # numbers 0 to 3
MAX_EXTRA = 50                                     # decode.limit: source numbers + 50
DTYPE_BYTES = {"F32": 4, "BF16": 2, "I32": 4}


# ---- The file: header, tensors, checksum (data/FORMAT.md) --------------------------------
def fnv1a(hash_, data):
    for byte in data:
        hash_ = ((hash_ ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return hash_


def content_checksum(tensors, metadata):
    """Version 3: tensors {name: (dtype, shape, bytes)} in name order, then the metadata."""
    h = 0xcbf29ce484222325
    for name in sorted(tensors, key=lambda n: n.encode()):
        dtype, shape, data = tensors[name]
        h = fnv1a(h, b"%s\0%s\0%s\0" % (name.encode(), dtype.encode(),
                                         ",".join(map(str, shape)).encode()))
        h = fnv1a(h, data)
    for key, value in sorted(metadata.items(), key=lambda kv: (kv[0].encode(), kv[1].encode())):
        if key != "checksum":
            h = fnv1a(h, key.encode() + b"\0" + value.encode() + b"\0")
    return "%016x" % h


def read_file(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    metadata = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {name: (e["dtype"], e["shape"], data[e["data_offsets"][0]:e["data_offsets"][1]])
               for name, e in header.items()}
    return metadata, tensors, data


def to_float(dtype, shape, data):
    if dtype == "BF16":       # the high half of a float32
        bits = torch.frombuffer(bytearray(data), dtype=torch.int16).to(torch.int32) << 16
        return bits.view(torch.float32).reshape(shape)
    return torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(shape).clone()


def settings(metadata):
    """The model's settings, with the defaults of version 2 for the keys it lacks."""
    if metadata.get("format") != FORMAT or metadata.get("version") not in ("2", "3"):
        sys.exit("not a model file of version 2 or 3")
    s = {k: int(metadata[k]) for k in ("src_vocab", "tgt_vocab", "layers", "d_model", "d_ff",
                                        "heads", "max_len")}
    s["pre_norm"] = metadata["norm"] == "pre"
    s["annotated"] = metadata["layernorm"] == "annotated"
    s["epsilon"] = float(metadata.get("layernorm.epsilon", "1e-06"))
    s["tied"] = metadata["tied"] == "1"
    s["tied_source"] = metadata.get("tied_source", "0") == "1"
    return s


# ---- The Annotated Transformer's modules (Rush et al., 2018), with the file's choices -------
class LayerNorm(nn.Module):
    def __init__(self, size, eps, annotated):
        super().__init__()
        self.a_2, self.b_2 = nn.Parameter(torch.ones(size)), nn.Parameter(torch.zeros(size))
        self.eps, self.annotated = eps, annotated

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        if self.annotated:    # the reference's: unbiased std, epsilon added to it
            return self.a_2 * (x - mean) / (x.std(-1, keepdim=True) + self.eps) + self.b_2
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.a_2 * (x - mean) / torch.sqrt(var + self.eps) + self.b_2


class SublayerConnection(nn.Module):
    def __init__(self, size, s):
        super().__init__()
        self.norm, self.pre = LayerNorm(size, s["epsilon"], s["annotated"]), s["pre_norm"]

    def forward(self, x, sublayer):
        return x + sublayer(self.norm(x)) if self.pre else self.norm(x + sublayer(x))


def attention(query, key, value, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    scores = scores.masked_fill(mask == 0, -1e9)
    return scores.softmax(dim=-1) @ value


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model):
        super().__init__()
        self.d_k, self.h = d_model // h, h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])

    def forward(self, query, key, value, mask):
        b = query.size(0)
        q, k, v = [lin(x).view(b, -1, self.h, self.d_k).transpose(1, 2)
                   for lin, x in zip(self.linears, (query, key, value))]
        x = attention(q, k, v, mask.unsqueeze(1)).transpose(1, 2).reshape(b, -1, self.h * self.d_k)
        return self.linears[-1](x)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(self.w_1(x).relu())


class EncoderLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.self_attn = MultiHeadedAttention(s["heads"], s["d_model"])
        self.feed_forward = PositionwiseFeedForward(s["d_model"], s["d_ff"])
        self.sublayer = nn.ModuleList([SublayerConnection(s["d_model"], s) for _ in range(2)])

    def forward(self, x, mask):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
        return self.sublayer[1](x, self.feed_forward)


class DecoderLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.self_attn = MultiHeadedAttention(s["heads"], s["d_model"])
        self.src_attn = MultiHeadedAttention(s["heads"], s["d_model"])
        self.feed_forward = PositionwiseFeedForward(s["d_model"], s["d_ff"])
        self.sublayer = nn.ModuleList([SublayerConnection(s["d_model"], s) for _ in range(3)])

    def forward(self, x, memory, src_mask, tgt_mask):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
        x = self.sublayer[1](x, lambda x: self.src_attn(x, memory, memory, src_mask))
        return self.sublayer[2](x, self.feed_forward)


class Stack(nn.Module):
    """The Encoder or the Decoder: N layers, then a LayerNorm when pre-norm."""
    def __init__(self, layer, s):
        super().__init__()
        self.layers = nn.ModuleList([layer(s) for _ in range(s["layers"])])
        self.norm = (LayerNorm(s["d_model"], s["epsilon"], s["annotated"])
                     if s["pre_norm"] else nn.Identity())

    def forward(self, x, *arguments):
        for layer in self.layers:
            x = layer(x, *arguments)
        return self.norm(x)


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.lut, self.d_model = nn.Embedding(vocab, d_model), d_model

    def forward(self, x):
        return self.lut(x) * math.sqrt(self.d_model)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        angle = position * torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64)
                                     / d_model)
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
        self.register_buffer("pe", pe.float().unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class Generator(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, x):
        return self.proj(x).log_softmax(dim=-1)


class EncoderDecoder(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.encoder, self.decoder = Stack(EncoderLayer, s), Stack(DecoderLayer, s)
        self.src_embed = nn.Sequential(Embeddings(s["d_model"], s["src_vocab"]),
                                       PositionalEncoding(s["d_model"], s["max_len"]))
        self.tgt_embed = nn.Sequential(Embeddings(s["d_model"], s["tgt_vocab"]),
                                       PositionalEncoding(s["d_model"], s["max_len"]))
        self.generator = Generator(s["d_model"], s["tgt_vocab"])
        self.settings = s

    def encode(self, src, src_mask):
        return self.encoder(self.src_embed(src), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)


def load(path):
    """The model (float32, evaluation mode) and the two vocabularies of a model file."""
    metadata, tensors, _ = read_file(path)
    s = settings(metadata)
    model = EncoderDecoder(s)
    state = {name: to_float(*t) for name, t in tensors.items()}
    for absent, present in (p.split("=") for p in tied_tensors(s).split(",") if p):
        state[absent] = state[present]          # the tensors the file leaves out
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not m.endswith(".pe") for m in missing):
        sys.exit("%s: tensors %s missing, %s unexpected" % (path, missing, unexpected))
    vocabs = [metadata[k].split("\n")[:-1] for k in ("vocab.src", "vocab.tgt")]
    return model.eval(), vocabs, metadata


# ---- The pipeline: pieces, greedy decoding -------------------------------------------------
def cut(word, index, subwords):
    """A token's numbers: itself, or (subwords) the greedy longest match from the left."""
    if not subwords:
        return [index.get(word, 3)]
    ids, start, raw = [], 0, word.encode()
    while start < len(raw):
        for end in range(len(raw), start, -1):
            if end < len(raw) and raw[end] & 0xC0 == 0x80:
                continue                            # inside a character
            piece = raw[start:end].decode() + ("@@" if end < len(raw) else "")
            if index.get(piece, 3) >= 4:
                ids.append(index[piece])
                break
        else:                                       # no piece: <unk> for one character
            end = start + 1
            while end < len(raw) and raw[end] & 0xC0 == 0x80:
                end += 1
            ids.append(3)
        start = end
    return ids


def numbered(line, index, subwords, max_len):
    ids = [0]
    for token in line.split():
        ids += cut(token, index, subwords)[:max_len - 1 - len(ids)]
        if len(ids) >= max_len - 1:
            break
    return ids + [1]


@torch.no_grad()
def greedy(model, src):
    """The start symbol, then the most probable token after each prefix until </s>; the
    tokens and the sum of their log-probabilities."""
    src = torch.tensor([src])
    src_mask = torch.ones(1, 1, src.size(1), dtype=torch.bool)
    memory = model.encode(src, src_mask)
    limit = min(model.settings["max_len"] - 1, src.size(1) + MAX_EXTRA)
    ys, total = [0], 0.0
    while len(ys) <= limit and (len(ys) == 1 or ys[-1] != 1):
        tgt = torch.tensor([ys])
        tgt_mask = torch.tril(torch.ones(1, len(ys), len(ys), dtype=torch.bool))
        out = model.decode(memory, src_mask, tgt, tgt_mask)
        logprobs = model.generator(out[:, -1])[0]
        best = int(logprobs.argmax())                # the first of equal maxima
        ys.append(best)
        total += float(logprobs[best])
    return ys[1:], total


def translate(path, show_logprobs):
    model, (src_vocab, tgt_vocab), _ = load(path)
    index = {token: i for i, token in enumerate(src_vocab)}
    subwords = any(t.endswith("@@") for t in src_vocab)
    for line in sys.stdin:
        if not line.strip():
            print()
            continue
        ids, total = greedy(model, numbered(line, index, subwords, model.settings["max_len"]))
        words = " ".join(tgt_vocab[i] for i in ids if i != 1)
        text = (words + " ").replace("@@ ", "").rstrip(" ")
        print(("%.6f\t" % total if show_logprobs else "") + text, flush=True)


# ---- Saving: a PyTorch model as a model file of version 3 ----------------------------------
def tied_tensors(s):
    tied = ["generator.proj.weight=tgt_embed.0.lut.weight"] if s["tied"] else []
    if s["tied_source"]:
        tied.append("src_embed.0.lut.weight=tgt_embed.0.lut.weight")
    return ",".join(tied)


def description(s, subwords):
    """Every key of data/FORMAT.md but the vocabularies and the checksum, as the program
    writes them."""
    d = {"format": FORMAT, "version": "3"}
    d.update({k: str(s[k]) for k in ("src_vocab", "tgt_vocab", "layers", "d_model", "d_ff",
                                      "heads", "max_len")})
    d["norm"] = "pre" if s["pre_norm"] else "post"
    d["layernorm"] = "annotated" if s["annotated"] else "standard"
    d["layernorm.epsilon"] = "%g" % s["epsilon"]
    d["tied"], d["tied_source"] = str(int(s["tied"])), str(int(s["tied_source"]))
    d["norm.formula"] = (
        "x + dropout(sublayer(LayerNorm(x))) in every sublayer; a LayerNorm (encoder.norm, "
        "decoder.norm) after the last layer of each stack" if s["pre_norm"] else
        "LayerNorm(x + dropout(sublayer(x))) in every sublayer; no LayerNorm after the stacks")
    d["layernorm.formula"] = (
        "a_2 * (x - mean) / (std + epsilon) + b_2, std = sqrt(sum((x - mean)^2) / "
        "(d_model - 1))" if s["annotated"] else
        "a_2 * (x - mean) / sqrt(var + epsilon) + b_2, var = sum((x - mean)^2) / d_model "
        "(torch.nn.LayerNorm)")
    d["embedding.formula"] = ("lut.weight[token] * sqrt(d_model) + the sinusoidal positional "
                              "encoding of position (max_len rows)")
    d["tied.tensors"] = tied_tensors(s)
    for role, token in zip(("start", "end", "pad", "unknown"), SPECIALS):
        d["special." + role], d["special.%s.id" % role] = token, str(SPECIALS.index(token))
    d["source.form"] = "<s> pieces </s>, at most max_len numbers (the pieces cut short)"
    d["decode.start"] = "<s>"
    d["decode.limit"] = (
        "at most min(max_len - 1, source numbers + %d) tokens after the start symbol; greedy: "
        "the most probable (of equal ones the lowest number) until the end symbol" % MAX_EXTRA)
    d["tokenizer"] = ("annotated-transformer-c: the Moses-style rules of the book's chapter "
                      "on text")
    d["tokenizer.source"], d["tokenizer.target"], d["tokenizer.lowercase"] = "de", "en", "1"
    d["subword.marker"] = "@@" if subwords else ""
    d["subword.cut"] = (
        "greedy longest match from the left; a piece that does not end its word ends in the "
        "marker; a character with no piece is <unk>" if subwords else
        "none: a token is one number, <unk> when absent")
    return d


def save(model, src_vocab, tgt_vocab, path):
    """Write model (an EncoderDecoder) and its vocabularies (lists of tokens, the four
    specials first) as a model file of version 3, in float32."""
    s = model.settings
    absent = {p.split("=")[0] for p in tied_tensors(s).split(",") if p}
    tensors = {}
    for name, value in model.state_dict().items():
        if name.endswith(".pe") or name in absent:
            continue
        numbers = value.detach().float().flatten().tolist()
        tensors[name] = ("F32", list(value.shape), struct.pack("<%df" % len(numbers), *numbers))
    subwords = any(t.endswith("@@") for t in src_vocab)
    metadata = description(s, subwords)
    metadata["vocab.src"] = "".join(t + "\n" for t in src_vocab)
    metadata["vocab.tgt"] = "".join(t + "\n" for t in tgt_vocab)
    metadata["checksum"] = content_checksum(tensors, metadata)
    header, offset = {"__metadata__": metadata}, 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text)
        for _, _, data in tensors.values():
            out.write(data)


def check(path):
    metadata, tensors, data = read_file(path)
    if metadata.get("version") == "2":             # the data section, then the metadata in order
        h = fnv1a(0xcbf29ce484222325, data)
        for key, value in metadata.items():
            if key != "checksum":
                h = fnv1a(h, key.encode() + b"=" + value.encode() + b"\n")
        expected = "%016x" % h
    else:
        expected = content_checksum(tensors, metadata)
    print("%s: checksum %s" % (path, "ok" if expected == metadata.get("checksum") else
                                "MISMATCH (expected %s)" % expected))
    return expected == metadata.get("checksum")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "translate":
        translate(sys.argv[2], "--logprobs" in sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(0 if check(sys.argv[2]) else 1)
    else:
        sys.exit(__doc__ or "usage: transformer_torch.py translate MODEL [--logprobs] | "
                 "check MODEL")
