#line 9 "book/beam.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BEAM_H
#define BEAM_H
#include "decode.h"

#endif
