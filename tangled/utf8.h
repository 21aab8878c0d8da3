/* UTF-8: one code point decoded or encoded, and the valid prefix of a text. Generated from
   the book's chapters by notangle: edit the book, not this file. */
#ifndef UTF8_H
#define UTF8_H
#include <stddef.h>
#include <stdint.h>

/* <<utf8.h declarations>> */
/* Decode the code point at text[0 .. length), length >= 1, into *point and return the bytes
   it takes, with *problem NULL; or set *problem to why the bytes are not UTF-8 and return
   how many of them belong to the bad sequence. */
int utf8_decode(const char *text, size_t length, uint32_t *point, const char **problem);

/* Write the code point c (at most U+10FFFF) at out[0 .. 4) and return how many bytes. */
int utf8_encode(uint32_t c, char *out);

/* The length of the longest prefix of text[0 .. n) that is valid UTF-8. */
size_t utf8_valid_prefix(const char *text, size_t n);

/* If text[0 .. n) is not UTF-8, write why into message (size bytes) and return it; if it
   is, return NULL. */
const char *utf8_check(const char *text, size_t n, char *message, size_t size);
#endif
