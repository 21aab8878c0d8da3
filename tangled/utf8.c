/* UTF-8 decoding with every malformation refused, and encoding. Generated from the book's
   chapters by notangle: edit the book, not this file. */
#include "utf8.h"
#include <stdio.h>

/* <<utf8.c definitions>> */
int utf8_decode(const char *text, size_t length, uint32_t *point, const char **problem)
{
    const unsigned char *s = (const unsigned char *)text, b = s[0];
    /* <<Find the length of the sequence that starts with b, or the problem>> */
    const int extra = b < 0x80 ? 0 : b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2
                    : b >= 0xF0 && b <= 0xF4 ? 3 : -1;
    *problem = extra >= 0 ? NULL
             : b < 0xC0   ? "a continuation byte without a leading byte"
             : b < 0xC2   ? "an overlong encoding"
                          : "a byte that UTF-8 never uses";
    /* <<Read the continuation bytes into c>> */
    uint32_t c = extra <= 0 ? b : b & (0x7Fu >> (extra + 1));
    size_t seen = 1;
    for (int k = 1; !*problem && k <= extra; k++) {
        if ((size_t)k < length) seen++;
        if ((size_t)k >= length || (s[k] & 0xC0) != 0x80)
            *problem = "a truncated sequence";
        else
            c = c << 6 | (s[k] & 0x3Fu);
    }
    /* <<Refuse overlong encodings, surrogates and code points beyond U+10FFFF>> */
    if (!*problem && ((extra == 2 && c < 0x800) || (extra == 3 && c < 0x10000)))
        *problem = "an overlong encoding";
    else if (!*problem && c >= 0xD800 && c <= 0xDFFF)
        *problem = "a surrogate";
    else if (!*problem && c > 0x10FFFF)
        *problem = "a code point beyond U+10FFFF";
    *point = c;
    return (int)seen;
}

int utf8_encode(uint32_t c, char *out)
{
    static const unsigned char lead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
    const int n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    out[0] = (char)(lead[n] | c >> (6 * (n - 1)));
    for (int k = 1; k < n; k++) out[k] = (char)(0x80u | (c >> (6 * (n - 1 - k)) & 0x3Fu));
    return n;
}

size_t utf8_valid_prefix(const char *text, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t point;
        const char *problem;
        const int bytes = utf8_decode(text + i, n - i, &point, &problem);
        if (problem) return i;
        i += (size_t)bytes;
    }
    return n;
}

const char *utf8_check(const char *text, size_t n, char *message, size_t size)
{
    const size_t at = utf8_valid_prefix(text, n);
    if (at == n) return NULL;
    uint32_t point;
    const char *problem;
    const int seen = utf8_decode(text + at, n - at, &point, &problem);
    int used = snprintf(message, size, "invalid UTF-8 at byte %zu: %s (", at + 1, problem);
    for (int k = 0; k < seen && used > 0 && (size_t)used < size; k++)
        used += snprintf(message + used, size - (size_t)used, "%s0x%02X", k ? " " : "",
                         (unsigned char)text[at + (size_t)k]);
    if (used > 0 && (size_t)used < size) snprintf(message + used, size - (size_t)used, ")");
    return message;
}
