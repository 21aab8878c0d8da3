#line 18 "book/bleu.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "bleu.h"
#include <stdlib.h>
#include <string.h>

