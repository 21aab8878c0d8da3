#line 9 "book/decode.nw"
/* Decoding with a key-value cache. Generated from the book's chapters by notangle: edit
   the book, not this file. */
#ifndef DECODE_H
#define DECODE_H
#include "train.h"

#endif
