#line 9 "book/bleu.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BLEU_H
#define BLEU_H
#include "tensor.h"

#endif
