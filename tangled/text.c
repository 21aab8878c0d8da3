#line 18 "book/text.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "text.h"
#include <stdlib.h>
#include <string.h>

