#line 19 "book/decode.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "decode.h"
#include <stdlib.h>
#include <string.h>

