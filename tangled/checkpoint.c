#line 19 "book/checkpoint.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "checkpoint.h"
#include <stdlib.h>
#include <string.h>

