#line 9 "book/text.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef TEXT_H
#define TEXT_H
#include "tensor.h"

#endif
