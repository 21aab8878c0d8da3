# Set one metadata value of a safetensors header and make its checksum agree again, so that
# the changed value is the only thing wrong with the file (tools/refusals, for the table of
# the appendix What the program refuses):
#
#   LC_ALL=C KEY=k VALUE=v awk -v kind=model|checkpoint -f tools/st-metadata.awk HEADER
#
# HEADER is the file's JSON header (the bytes after its 8-byte length); VALUE is written as
# JSON writes it (\n for a newline). Prints the new header, padded with spaces so that with
# its 8-byte length in front it fills a multiple of 8 bytes, without a newline.
#
# The checksum is FNV-1a, 64 bits (book/safetensors.nw), over the tensors and then the
# metadata: a model's (kind model) over each pair "key\0value\0" in sorted order, a
# checkpoint's over each "key=value\n" in the header's order; the "checksum" pair is left out.
# The metadata come last, so the hash of the tensors is the stored checksum with the old
# metadata taken off again (FNV-1a undone byte by byte: XOR, then times the inverse of the
# prime mod 2^64), and the new metadata are hashed on from there; the tensors are never read.
# 64-bit numbers are four limbs of 16 bits (limb 0 the lowest); POSIX awk has no XOR, so
# xor8 takes the bits one at a time.

function fail(msg) { print "tools/st-metadata.awk: " msg > "/dev/stderr"; failed = 1; exit 1 }

function xor8(a, b,    r, bit) {
    r = 0
    for (bit = 1; bit < 256; bit *= 2) {
        if ((int(a / bit) % 2) != (int(b / bit) % 2)) r += bit
    }
    return r
}

# H = H * C mod 2^64 (C one of the constants below, by its name)
function multiply(c,    r, k, i, carry) {
    for (k = 0; k < 4; k++) {
        r[k] = 0
        for (i = 0; i <= k; i++) r[k] += H[i] * C[c, k - i]
    }
    carry = 0
    for (k = 0; k < 4; k++) { r[k] += carry; carry = int(r[k] / 65536); H[k] = r[k] % 65536 }
}

function xor_byte(b,    low) { low = H[0] % 256; H[0] = H[0] - low + xor8(low, b) }
function forward(s,    i) { for (i = 1; i <= length(s); i++) { xor_byte(ord[substr(s, i, 1)]); multiply("p") } }
function backward(s,    i) { for (i = length(s); i >= 1; i--) { multiply("inverse"); xor_byte(ord[substr(s, i, 1)]) } }
function forward_byte(b) { xor_byte(b); multiply("p") }
function backward_byte(b) { multiply("inverse"); xor_byte(b) }

function from_hex(s,    k, j, v) {
    if (s !~ /^[0-9a-f]+$/ || length(s) != 16) fail("checksum '" s "' is not 16 hex digits")
    for (k = 0; k < 4; k++) {
        v = 0
        for (j = 1; j <= 4; j++) v = v * 16 + index("0123456789abcdef", substr(s, 17 - 4 * (k + 1) + j - 1, 1)) - 1
        H[k] = v
    }
}
function to_hex() { return sprintf("%04x%04x%04x%04x", H[3], H[2], H[1], H[0]) }

# The code point u in UTF-8.
function utf8(u) {
    if (u < 128) return sprintf("%c", u)
    if (u < 2048) return sprintf("%c%c", 192 + int(u / 64), 128 + u % 64)
    return sprintf("%c%c%c", 224 + int(u / 4096), 128 + int(u / 64) % 64, 128 + u % 64)
}

# A JSON string's text (between its quotes) as the bytes it stands for.
function unescape(s,    out, i, c, d) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c != "\\") { out = out c; continue }
        d = substr(s, ++i, 1)
        if (d == "n") out = out "\n"
        else if (d == "t") out = out "\t"
        else if (d == "r") out = out "\r"
        else if (d == "b") out = out "\b"
        else if (d == "f") out = out "\f"
        else if (d == "u") { out = out utf8(hex(substr(s, i + 1, 4))); i += 4 }
        else out = out d
    }
    return out
}
function hex(s,    v, j) {
    v = 0
    for (j = 1; j <= length(s); j++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, j, 1))) - 1
    return v
}

# The JSON string that starts at text[pos] (a quote): its text without the quotes; pos moves
# past the closing quote.
function string_at(    start, c) {
    if (substr(text, pos, 1) != "\"") fail("expected a string at byte " pos)
    start = ++pos
    while ((c = substr(text, pos, 1)) != "\"") {
        if (c == "") fail("a string that does not end")
        pos += c == "\\" ? 2 : 1
    }
    pos++
    return substr(text, start, pos - 1 - start)
}

# The order of the model's checksum: by key, then by value (strcmp, bytes in the C locale).
function sort_pairs(    i, j, t) {
    for (i = 1; i <= n; i++) order[i] = i
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && (key[order[j]] < key[order[j - 1]] || \
                              (key[order[j]] == key[order[j - 1]] && value[order[j]] < value[order[j - 1]])); j--) {
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
        }
}

# Hash (direction forward) or unhash (backward) every pair but the checksum.
function hash_pairs(direction,    i, m, s) {
    if (kind == "model") sort_pairs()
    else for (i = 1; i <= n; i++) order[i] = i
    if (direction == "forward") {
        for (i = 1; i <= n; i++) {
            m = order[i]
            if (key[m] == "checksum") continue
            if (kind == "model") { forward(key[m]); forward_byte(0); forward(value[m]); forward_byte(0) }
            else forward(key[m] "=" value[m] "\n")
        }
    } else {
        for (i = n; i >= 1; i--) {
            m = order[i]
            if (key[m] == "checksum") continue
            if (kind == "model") { backward_byte(0); backward(value[m]); backward_byte(0); backward(key[m]) }
            else backward(key[m] "=" value[m] "\n")
        }
    }
}

BEGIN {
    for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
    # the FNV prime 0x100000001b3 and its inverse mod 2^64, 0xce965057aff6957b
    C["p", 0] = 435; C["p", 1] = 0; C["p", 2] = 256; C["p", 3] = 0
    C["inverse", 0] = 38267; C["inverse", 1] = 45046; C["inverse", 2] = 20567; C["inverse", 3] = 52886
    if (kind != "model" && kind != "checkpoint") fail("kind must be model or checkpoint")
    edit_key = ENVIRON["KEY"]; edit_value = ENVIRON["VALUE"]
}

{ text = NR == 1 ? $0 : text "\n" $0 }

END {
    if (failed) exit 1
    sub(/ +$/, "", text)
    opening = "\"__metadata__\":{"
    at = index(text, opening)
    if (!at) fail("no __metadata__")
    pos = at + length(opening); n = 0
    while (substr(text, pos, 1) != "}") {
        if (n) { if (substr(text, pos, 1) != ",") fail("expected , at byte " pos); pos++ }
        n++; raw_key[n] = string_at()
        if (substr(text, pos, 1) != ":") fail("expected : at byte " pos)
        pos++; raw_value[n] = string_at()
        key[n] = unescape(raw_key[n]); value[n] = unescape(raw_value[n])
        if (key[n] == "checksum") sum = n
        if (key[n] == edit_key) edited = n
    }
    if (!sum) fail("no checksum")
    if (!edited) fail("no metadata '" edit_key "'")
    from_hex(value[sum])
    hash_pairs("backward")
    raw_value[edited] = edit_value; value[edited] = unescape(edit_value)
    hash_pairs("forward")
    raw_value[sum] = value[sum] = to_hex()
    metadata = ""
    for (i = 1; i <= n; i++) metadata = metadata (i > 1 ? "," : "") "\"" raw_key[i] "\":\"" raw_value[i] "\""
    text = substr(text, 1, at + length(opening) - 1) metadata substr(text, pos)
    while ((8 + length(text)) % 8) text = text " "
    printf "%s", text
}
