#line 9 "book/checkpoint.nw"
/* Checkpoints: the weights and the whole training state in one file. Generated from the
   book's chapters by notangle: edit the book, not this file. */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H
#include "train.h"

#endif
