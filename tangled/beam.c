#line 18 "book/beam.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "beam.h"
#include <stdlib.h>
#include <string.h>

