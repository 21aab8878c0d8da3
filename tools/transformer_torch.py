#!/usr/bin/python3
# A model file of "The Annotated Transformer in C" in plain PyTorch: load any model file of
# the program (format versions 2 and 3, weights F32 or BF16, tied tensors filled in, either
# LayerNorm, pre- or post-norm) into the Annotated Transformer's modules, and translate
# greedily as `transformer translate --beam 1` does, tokenizing and detokenizing as the program
# does (its tokenizer, the rules of the book's chapter on text, ported rule for rule); and save
# such a model as a model file (version 3, every key of data/FORMAT.md, the checksum of its
# contents) that the program loads. PyTorch and the standard library only.
#
#   tools/transformer_torch.py translate MODEL --raw [--logprobs] [--lowercase] < in.de > out.en
#   tools/transformer_torch.py translate MODEL [--logprobs] < in.tok.de > out.tok.en
#   tools/transformer_torch.py tokenize de|en [--lowercase] < in > in.tok
#   tools/transformer_torch.py pieces VOCAB de|en [--lowercase] < in > in.pieces
#   tools/transformer_torch.py detokenize en|de < tokens > text
#   tools/transformer_torch.py check MODEL
#
# translate --raw: German text in, a sentence a line, lowercased and tokenized as
# `transformer translate` does (a line over 1000 bytes cut, with a warning, to its first 1000
# at most); English text out, detokenized as it does (a blank line gives a blank line).
# Without --raw: the program's German tokens in, the English tokens out, subword pieces
# joined. With --logprobs, the sum of the chosen tokens' log-probabilities before each
# line, and a tab. tokenize and detokenize: `transformer tokenize --language L [--lowercase]`
# and `transformer tokenize --language L --detokenize`, byte for byte; pieces: `transformer
# tokenize --language L [--lowercase] --subwords VOCAB` (VOCAB a token a line, as the text of
# a model file's vocab.src), the tokens cut into the vocabulary's pieces. check verifies the
# checksum.
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


def has_subwords(vocab):
    """Whether a vocabulary is of subwords: a token longer than the marker ends in it."""
    return any(len(t) > 2 and t.endswith("@@") for t in vocab)


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


# ---- Text: the program's tokenizer and detokenizer (the book's chapter on text) -----------
# A port of tangled/text.c, rule for rule: normalize the characters (lowercased for the
# translator), move quotes past full stops and commas, split the punctuation off, cut a final
# full stop off unless its word is an abbreviation; and the detokenizer's joining rules.
MAX_LINE_BYTES = 1000


def is_space(c):
    return (c == 0x20 or 0x09 <= c <= 0x0D or c in (0x85, 0xA0, 0x1680) or 0x2000 <= c <= 0x200A
            or c in (0x2028, 0x2029, 0x202F, 0x205F, 0x3000))


def is_invisible(c):
    return c < 0x20 or 0x7F <= c < 0xA0 or 0x200B <= c <= 0x200F or c in (0x2060, 0xFEFF)


def is_number(c):
    return 0x30 <= c <= 0x39 or c in (0xB2, 0xB3, 0xB9) or 0xBC <= c <= 0xBE


def is_letter(c):
    if c < 0x80:
        return 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A
    if c < 0x100:
        return c in (0xAA, 0xB5, 0xBA) or (c >= 0xC0 and c not in (0xD7, 0xF7))
    return not (is_space(c) or is_invisible(c) or 0x2000 <= c <= 0x2BFF or 0x2E00 <= c <= 0x2E7F
                or 0x3000 <= c <= 0x303F or 0xFE30 <= c <= 0xFE6F or 0xFF01 <= c <= 0xFF20
                or 0x1F000 <= c <= 0x1FAFF)


def to_lowercase(c):
    return c + 0x20 if 0x41 <= c <= 0x5A or (0xC0 <= c <= 0xDE and c != 0xD7) else c


def is_lowercase(c):
    return 0x61 <= c <= 0x7A or c in (0xAA, 0xB5, 0xBA) or (0xDF <= c <= 0xFF and c != 0xF7)


def normalize_characters(p, language, lowercase):
    out = []

    def space():
        if out and out[-1] != 0x20:
            out.append(0x20)
    n, i, Q, A = len(p), 0, ord('"'), ord("'")
    while i < n:
        c = to_lowercase(p[i]) if lowercase else p[i]
        before, after = p[i - 1] if i > 0 else 0, p[i + 1] if i + 1 < n else 0
        if c == ord('&') and i + 4 < n and p[i + 1:i + 5] == [ord(x) for x in "amp;"]:
            out.append(c)
            i += 4
        elif c == 0xA0 and 0x30 <= before <= 0x39 and 0x30 <= after <= 0x39:
            out.append(ord(',' if language == "de" else '.'))
        elif is_space(c):
            space()
        elif is_invisible(c):
            i += 1
            continue
        elif c in (A, 0x60) and after in (A, 0x60):
            space()
            out += [Q, 0x20]
            i += 1
        elif c in (0x201E, 0x201C, 0x201D, 0x201A):
            out.append(Q)
        elif c in (0x2018, 0x2019):
            out.append(A if is_letter(before) and is_letter(after) else Q)
        elif c in (0x60, 0xB4):
            out.append(A)
        elif c == 0x2013:
            out.append(ord('-'))
        elif c == 0x2014:
            space()
            out += [ord('-'), 0x20]
        elif c == 0x2026:
            out += [ord('.')] * 3
        else:
            out.append(c)
        if len(out) >= 2 and out[-1] == A and out[-2] == A:
            out.pop()
            out[-1] = Q
        i += 1
    if out and out[-1] == 0x20:
        out.pop()
    return out


def rotate(p, frm, to):
    p.insert(frm, p.pop(to))


def move_quotes(p, language):
    n, Q, S = len(p), ord('"'), ord('.')
    if language == "en":
        i = 0
        while i < n:
            if p[i] == Q:
                end = i
                while end + 1 < n and p[end + 1] in (ord(','), S):
                    end += 1
                rotate(p, end, i)
                i = end
            i += 1
        return
    i = 0
    while i + 1 < n:
        if p[i] == ord(',') and p[i + 1] == Q:
            p[i], p[i + 1] = Q, ord(',')
            i += 1
        i += 1
    i = 0
    while i < n:
        if p[i] == S:
            end = i
            while end + 1 < n and p[end + 1] == S:
                end += 1
            if end + 1 < n and p[end + 1] == Q:
                end += 1
                rotate(p, i, end)
            i = end
        i += 1


def separate_punctuation(p, language):
    out, n, i = [], len(p), 0
    while i < n:
        c, before, after = p[i], p[i - 1] if i > 0 else 0, p[i + 1] if i + 1 < n else 0
        spaced = [0x20, c, 0x20]
        if c in (0x20, ord('-')) or is_letter(c) or is_number(c):
            out.append(c)
        elif c == ord('.'):
            end = i
            while end + 1 < n and p[end + 1] == c:
                end += 1
            out += ([0x20] if end > i else []) + [c] * (end - i + 1) + ([0x20] if end > i else [])
            i = end
        elif c == ord(','):
            if ((before and not is_number(before)) or (after and not is_number(after))
                    or (before and not after)):
                out += spaced
            else:
                out.append(c)
        elif c == ord("'") and language == "en":
            lb, la = is_letter(before), is_letter(after)
            if (lb and la) or (is_number(before) and after == ord('s')):
                out += [0x20, c]
            elif ((before and after and not lb and not la)
                  or (before and not lb and not is_number(before) and la)
                  or (lb and after and not la)):
                out += spaced
            else:
                out.append(c)
        else:
            out += spaced
        i += 1
    return out


ABBREVIATIONS = {
    "en": "Mr Mrs Ms Dr Prof Rev St Sr Jr Gen Capt Lt Col Sgt Jan Feb Mar Apr Jun Jul Aug Sep "
          "Oct Nov Dec Nr v vs i.e e.g".split(),
    "en before numbers": "No Art pp".split(),
    "de": "Nr Mr Mrs Ms Dr Prof St Mio Mrd bzw usw vgl ca pp etc evtl ggf sog usf zzt dgl ff v "
          "vs".split()}


def abbreviation(word, language):
    """1: a full stop after word stays with it; 2 (English): it does before a number; 0."""
    if len(word) >= 8 or any(c >= 0x80 for c in word):
        return 0
    text = "".join(map(chr, word))
    if language == "en":
        return (1 if (len(text) == 1 and "A" <= text <= "Z") or text in ABBREVIATIONS["en"]
                else 2 if text in ABBREVIATIONS["en before numbers"] else 0)
    number = text.isdigit() and len(text) <= 2 and text[0] != "0"
    roman = set(text) <= set("ivx") or set(text) <= set("IVX")
    return int((len(word) == 1 and is_letter(word[0])) or number or (roman and len(text) <= 5)
               or text in ABBREVIATIONS["de"])


def write_tokens(p, language):
    tokens, n, i, S = [], len(p), 0, ord('.')
    while i < n:
        while i < n and p[i] == 0x20:
            i += 1
        if i == n:
            break
        end = i
        while end < n and p[end] != 0x20:
            end += 1
        nxt = end
        while nxt < n and p[nxt] == 0x20:
            nxt += 1
        keep, length = end, end - i
        only_periods = all(c == S for c in p[i:end])
        has_period = S in p[i:end - 1]
        has_letter = any(is_letter(c) for c in p[i:end - 1])
        if length >= 2 and p[end - 1] == S and not only_periods:
            kind = abbreviation(p[i:end - 1], language)
            following = p[nxt] if nxt < n else 0
            if (not (has_period and has_letter) and kind != 1 and not is_lowercase(following)
                    and not (kind == 2 and 0x30 <= following <= 0x39)):
                keep = end - 1
        elif length >= 2 and nxt == n and p[end - 2] == S and p[end - 1] == ord("'"):
            keep = end - 2
        for a, b in ((i, keep), (keep, min(keep + 1, end)), (min(keep + 1, end), end)):
            if a < b:
                tokens.append("".join(map(chr, p[a:b])))
        i = end
    return tokens


def tokenize(line, language="de", lowercase=True):
    """A line (bytes, no newline) as the program's tokens separated by single spaces; "" for
    a blank line; ValueError for a line the program refuses."""
    if len(line) > MAX_LINE_BYTES:
        raise ValueError("line too long: %d bytes (at most %d)" % (len(line), MAX_LINE_BYTES))
    if b"\0" in line:
        raise ValueError("a NUL byte at byte %d" % (line.index(b"\0") + 1))
    p = normalize_characters([ord(c) for c in line.decode("utf-8")], language, lowercase)
    move_quotes(p, language)
    return " ".join(write_tokens(separate_punctuation(p, language), language))


def detokenize(line, language="en"):
    """Tokens (str, separated by spaces or tabs) joined back into text as the program does."""
    apostrophes = sum(1 for i, c in enumerate(line) if c == "'" and (i == 0 or line[i - 1] == " ")
                      and (i + 1 == len(line) or line[i + 1] == " "))
    tokens = [t for t in line.replace("\t", " ").split(" ") if t]
    out, last, glue_next, double_open, single_open = [], "", True, False, False
    for k, token in enumerate(tokens):
        following = tokens[k + 1] if k + 1 < len(tokens) else ""
        glue, glue_next = glue_next, False
        if token == ":" and "0" <= last <= "9" and "0" <= following[:1] <= "9":
            glue = glue_next = True                     # 11:27
        elif token in (".", ",", "!", "?", ";", ":", "%", ")", "]", "}", "..."):
            glue = True
        elif token in ("(", "[", "{", "$", "#"):
            glue_next = True
        elif token == '"':
            if double_open:
                glue = True
            else:
                glue_next = True
            double_open = not double_open
        elif token == "'" and apostrophes % 2 == 1:
            if following in ("s", "re", "ve", "ll", "m", "d", "t", "em"):
                glue_next = True                        # they 're
            else:
                glue = True                             # the dogs' bowls
        elif token == "'":
            if single_open:
                glue = True
            else:
                glue_next = True
            single_open = not single_open
        elif language == "en" and token[0] == "'" and len(token) > 1 and token[1] < "\x80" \
                and is_letter(ord(token[1])):
            glue = True                                 # 's 're 't
        out.append(token if glue else " " + token)
        last = token.encode()[-1:]
        last = chr(last[0]) if last else ""
    return "".join(out)


def input_lines(stream):
    """The lines of a byte stream as the program reads them: LF, CR or CR LF ends a line."""
    data = stream.read()
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


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


def recase(words, table):
    """The recaser (the book's chapter Capital letters): each word of the tokens in its form
    from the file's table, then the first letter of the first token that starts with a letter
    or digit raised (a-z, U+00E0-U+00FE but U+00F7), as `transformer translate` does."""
    out = [table.get(w, w) for w in words.split(" ")]
    for i, w in enumerate(out):
        c = ord(w[0]) if w else 0
        if 0x61 <= c <= 0x7A or (0xE0 <= c <= 0xFE and c != 0xF7):
            out[i] = chr(c - 32) + w[1:]
            break
        if (0x41 <= c <= 0x5A or 0x30 <= c <= 0x39 or c >= 0xC0) and not 0x2000 <= c <= 0x2FFF:
            break
    return " ".join(out)


def translate(path, show_logprobs, raw, lowercase=False):
    """Tokenized German in, English tokens out; with raw, text in and text out, tokenized and
    detokenized as `transformer translate` does, with the capitals of the file's recaser
    unless lowercase."""
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    model, (src_vocab, tgt_vocab), metadata = load(path)
    table = dict(line.split(" ") for line in metadata.get("recaser", "").split("\n") if line)
    index = {token: i for i, token in enumerate(src_vocab)}
    subwords = has_subwords(src_vocab)
    lines = input_lines(sys.stdin.buffer) if raw else sys.stdin
    for number, line in enumerate(lines, 1):
        if raw and len(line) > MAX_LINE_BYTES:   # cut at a character's start, as it does
            cut = MAX_LINE_BYTES
            while cut > 0 and line[cut] & 0xC0 == 0x80:
                cut -= 1
            print("transformer_torch.py: standard input:%d: warning: a line of %d bytes, "
                  "translated from its first %d (at most %d)"
                  % (number, len(line), cut, MAX_LINE_BYTES), file=sys.stderr)
            line = line[:cut]
        if raw:
            try:
                line = tokenize(line, "de", True)
            except ValueError as error:
                sys.exit("standard input:%d: %s" % (number, error))
        if not line.strip():
            print()
            continue
        ids, total = greedy(model, numbered(line, index, subwords, model.settings["max_len"]))
        words = " ".join(tgt_vocab[i] for i in ids if i != 1)
        text = (words + " ").replace("@@ ", "").rstrip(" ")
        if raw and text:
            text = detokenize(text if lowercase or not table else recase(text, table), "en")
        print(("%.6f\t" % total if show_logprobs else "") + text, flush=True)


def text_filter(arguments):
    """tokenize LANGUAGE [--lowercase], detokenize LANGUAGE, pieces VOCAB LANGUAGE
    [--lowercase]: standard input to output, a line a line, as `transformer tokenize
    --language LANGUAGE [--lowercase | --detokenize | --subwords VOCAB]`."""
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    index = subwords = None
    if arguments[0] == "pieces":
        with open(arguments[1], "rb") as f:
            vocab = [t.decode("utf-8") for t in input_lines(f)]
        index, subwords = {t: i for i, t in enumerate(vocab)}, has_subwords(vocab)
        arguments = arguments[1:]
    for number, line in enumerate(input_lines(sys.stdin.buffer), 1):
        try:
            if arguments[0] == "detokenize":
                out = detokenize(line.decode("utf-8"), arguments[1])
            else:
                out = tokenize(line, arguments[1], "--lowercase" in arguments[2:])
        except ValueError as error:
            sys.exit("standard input:%d: %s" % (number, error))
        if not out:
            sys.exit("standard input:%d: empty line" % number)
        if index is not None:
            out = " ".join(vocab[i] for t in out.split(" ") for i in cut(t, index, subwords))
        print(out)


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
    subwords = has_subwords(src_vocab)
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


def usable(a):
    """Whether the command line a (sys.argv) is one of the usage lines: a typing slip, an
    option a command does not take or a language other than de and en is not ignored."""
    flags = {"translate": ("--raw", "--logprobs", "--lowercase"), "tokenize": ("--lowercase",),
             "pieces": ("--lowercase",), "detokenize": (), "check": ()}
    operands = {"translate": 1, "tokenize": 1, "pieces": 2, "detokenize": 1, "check": 1}
    if len(a) < 2 or a[1] not in flags or len(a) < 2 + operands[a[1]]:
        return False
    rest = a[2 + operands[a[1]]:]
    language = a[1 + operands[a[1]]] if a[1] in ("tokenize", "pieces", "detokenize") else "de"
    return language in ("de", "en") and all(f in flags[a[1]] for f in rest) \
        and len(set(rest)) == len(rest)


if __name__ == "__main__":
    if not usable(sys.argv):
        sys.exit(__doc__ or "usage: transformer_torch.py translate MODEL [--raw] [--logprobs] "
                 "[--lowercase] | tokenize de|en [--lowercase] | pieces VOCAB de|en "
                 "[--lowercase] | detokenize en|de | check MODEL")
    elif sys.argv[1] == "translate":
        translate(sys.argv[2], "--logprobs" in sys.argv[3:], "--raw" in sys.argv[3:],
                  "--lowercase" in sys.argv[3:])
    elif sys.argv[1] in ("tokenize", "pieces", "detokenize"):
        text_filter(sys.argv[1:])
    else:
        sys.exit(0 if check(sys.argv[2]) else 1)
