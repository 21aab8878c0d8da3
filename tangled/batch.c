/* Batches and their masks -- generated from the book's chapters by notangle: edit the book,
   not this file. */
#include "batch.h"
#include <stdlib.h>
#include <string.h>

/* <<batch.c definitions>> */
void padding_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "padding mask of %d x %d", batch, len);
    for (size_t bj = 0; bj < (size_t)batch * len; bj++)
        keep[bj] = tokens[bj] != pad;
}

void subsequent_mask(uint8_t *keep, int len)
{
    ENSURE(len >= 0, "subsequent mask of length %d", len);
    for (int i = 0; i < len; i++)
        for (int j = 0; j < len; j++)
            keep[(size_t)i * len + j] = j <= i;
}

void target_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "target mask of %d x %d", batch, len);
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < len; i++)
            for (int j = 0; j < len; j++)
                keep[((size_t)b * len + i) * len + j] =
                    tokens[(size_t)b * len + j] != pad && j <= i;
}

void batch_init(Batch *batch, int size, int src_len, int tgt_len)
{
    batch->batch = size, batch->src_len = src_len, batch->tgt_len = tgt_len;
    batch->src = xmalloc((size_t)size * src_len * sizeof(int));
    batch->tgt = xmalloc((size_t)size * tgt_len * sizeof(int));
    batch->tgt_y = xmalloc((size_t)size * tgt_len * sizeof(int));
    batch->src_keep = xmalloc((size_t)size * src_len);
    batch->tgt_keep = xmalloc((size_t)size * tgt_len * tgt_len);
}

void batch_fill(Batch *batch, const int *src, const int *full, int pad)
{
    const int n = batch->batch, s = batch->src_len, t = batch->tgt_len;
    memcpy(batch->src, src, (size_t)n * s * sizeof(int));
    for (int b = 0; b < n; b++)
        for (int i = 0; i < t; i++) {
            batch->tgt[(size_t)b * t + i] = full[(size_t)b * (t + 1) + i];
            batch->tgt_y[(size_t)b * t + i] = full[(size_t)b * (t + 1) + i + 1];
        }
    padding_mask(batch->src_keep, batch->src, n, s, pad);
    target_mask(batch->tgt_keep, batch->tgt, n, t, pad);
}

void batch_free(Batch *batch)
{
    free(batch->src), free(batch->tgt), free(batch->tgt_y);
    free(batch->src_keep), free(batch->tgt_keep);
}

int batch_target_tokens(const Batch *batch, int pad)
{
    int tokens = 0;
    for (size_t i = 0; i < (size_t)batch->batch * batch->tgt_len; i++)
        tokens += batch->tgt_y[i] != pad;
    return tokens;
}

Batch batch_rows(const Batch *whole, int first, int end)
{
    const size_t s = (size_t)whole->src_len, t = (size_t)whole->tgt_len;
    return (Batch){end - first, whole->src_len, whole->tgt_len,
                   whole->src + first * s, whole->tgt + first * t, whole->tgt_y + first * t,
                   whole->src_keep + first * s, whole->tgt_keep + first * t * t};
}

SourceBatch source_batch_of(const Batch *batch)
{
    return (SourceBatch){batch->src, batch->src_keep, batch->batch, batch->src_len};
}

BatchBounds fixed_bounds(int pairs, int len)
{
    return (BatchBounds){pairs, len, len, pairs * len, pairs * (len - 1)};
}

SourceBatch source_batch(const int *tokens, uint8_t *keep, int batch, int len, int pad)
{
    padding_mask(keep, tokens, batch, len, pad);
    return (SourceBatch){tokens, keep, batch, len};
}
