#line 18 "book/masks.nw"
/* The Transformer's masks and layers.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef MODEL_H
#define MODEL_H
#include <math.h>
#include "tensor.h"
#line 69 "book/masks.nw"
/* keep[b][j] = 1 if tokens[b][j] is not the padding token; keep, tokens: [batch][len]. */
void padding_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad);
#line 101 "book/masks.nw"
/* keep[i][j] = 1 if j <= i: position i may attend to itself and earlier positions;
   keep: [len][len]. */
void subsequent_mask(uint8_t *keep, int len);
#line 141 "book/masks.nw"
/* keep[b][i][j] = 1 if tokens[b][j] is not padding and j <= i;
   keep: [batch][len][len], tokens: [batch][len]. */
void target_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad);
#line 212 "book/masks.nw"
/* The score of a masked position: its softmax weight is exactly 0. */
#define MASKED_SCORE (-INFINITY)

/* scores[i][j] = MASKED_SCORE where keep[i * keep_row_stride + j] == 0;
   scores: [rows][cols]. keep_row_stride is cols for a full mask, 0 for one row
   broadcast to every query. */
void mask_scores(float *scores, const uint8_t *keep, size_t keep_row_stride,
                 int rows, int cols);
#line 25 "book/masks.nw"
#endif
