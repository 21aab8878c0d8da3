#line 29 "book/masks.nw"
/* The masks and layers of the model -- generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "model.h"
#line 74 "book/masks.nw"
void padding_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "padding mask of %d x %d", batch, len);
    for (size_t bj = 0; bj < (size_t)batch * len; bj++)
        keep[bj] = tokens[bj] != pad;
}
#line 107 "book/masks.nw"
void subsequent_mask(uint8_t *keep, int len)
{
    ENSURE(len >= 0, "subsequent mask of length %d", len);
    for (int i = 0; i < len; i++)
        for (int j = 0; j < len; j++)
            keep[(size_t)i * len + j] = j <= i;
}
#line 147 "book/masks.nw"
void target_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "target mask of %d x %d", batch, len);
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < len; i++)
            for (int j = 0; j < len; j++)
                keep[((size_t)b * len + i) * len + j] =
                    tokens[(size_t)b * len + j] != pad && j <= i;
}
#line 223 "book/masks.nw"
void mask_scores(float *scores, const uint8_t *keep, size_t keep_row_stride,
                 int rows, int cols)
{
    ENSURE(rows >= 0 && cols >= 0, "masked scores of %d x %d", rows, cols);
    for (int i = 0; i < rows; i++) {
        const uint8_t *keep_i = keep + (size_t)i * keep_row_stride;
        float *scores_i = scores + (size_t)i * cols;
        for (int j = 0; j < cols; j++)
            if (!keep_i[j]) scores_i[j] = MASKED_SCORE;
    }
}
