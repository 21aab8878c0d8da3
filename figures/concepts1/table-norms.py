# The norms of the shipped model's shared table (tgt_embed.0.lut.weight, which with --tie-all
# is also the source embedding and the generator's weight) and of its generator bias, read from
# data/multi30k-de-en.safetensors (bfloat16) with the standard library only. Run from the
# repository's root:  /usr/bin/python3 figures/concepts1/table-norms.py > figures/concepts1/table-norms.txt
import json, math, struct

path = "data/multi30k-de-en.safetensors"
with open(path, "rb") as f:
    size = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(size))
    base = 8 + size

    def tensor(name):
        info = header[name]
        assert info["dtype"] == "BF16"
        start, end = info["data_offsets"]
        f.seek(base + start)
        raw = f.read(end - start)
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return info["shape"], [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]

    shape, table = tensor("tgt_embed.0.lut.weight")
    rows, d = shape
    norms = sorted(math.sqrt(sum(x * x for x in table[r * d:(r + 1) * d])) for r in range(rows))
    total = sum(x * x for x in table)
    print("# the shared table tgt_embed.0.lut.weight of", path)
    print("# key value")
    print("rows", rows)
    print("d_model", d)
    print("tied_source", header["__metadata__"].get("tied_source", "0"))
    print("tied", header["__metadata__"].get("tied", "0"))
    print("entry_rms %.6f" % math.sqrt(total / (rows * d)))
    print("row_norm_mean %.6f" % (sum(norms) / rows))
    print("row_norm_median %.6f" % norms[rows // 2])
    print("row_norm_min %.6f" % norms[0])
    print("row_norm_max %.6f" % norms[-1])
    print("frobenius %.6f" % math.sqrt(total))
