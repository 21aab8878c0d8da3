/* A padded batch of token sequences with its masks, and the sources of a batch to decode.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BATCH_H
#define BATCH_H
#include "tensor.h"

/* <<batch.h declarations>> */
/* keep[b][j] = 1 if tokens[b][j] is not the padding token; keep, tokens: [batch][len]. */
void padding_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad);

/* keep[i][j] = 1 if j <= i: position i may attend to itself and earlier positions;
   keep: [len][len]. */
void subsequent_mask(uint8_t *keep, int len);

/* keep[b][i][j] = 1 if tokens[b][j] is not padding and j <= i;
   keep: [batch][len][len], tokens: [batch][len]. */
void target_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad);

typedef struct {
    int batch, src_len, tgt_len;     /* tgt_len = length of the decoder's input */
    int *src;                        /* [batch][src_len] */
    int *tgt, *tgt_y;                /* [batch][tgt_len] each */
    uint8_t *src_keep, *tgt_keep;    /* [batch][src_len], [batch][tgt_len][tgt_len] */
} Batch;

void batch_init(Batch *batch, int size, int src_len, int tgt_len);
/* Fill from whole target sequences full: [size][tgt_len + 1] and sources src. */
void batch_fill(Batch *batch, const int *src, const int *full, int pad);
void batch_free(Batch *batch);

/* The tokens of batch->tgt_y that are not pad. */
int batch_target_tokens(const Batch *batch, int pad);

/* The rows [first, end) of whole, as a batch that shares its arrays. */
Batch batch_rows(const Batch *whole, int first, int end);

typedef struct {
    const int *tokens;       /* [batch][len] */
    const uint8_t *keep;     /* [batch][len]: 1 for a token, 0 for padding */
    int batch, len;
} SourceBatch;

/* The sources of batch, sharing its arrays. */
SourceBatch source_batch_of(const Batch *batch);

typedef struct {
    int pairs, src_len, tgt_len;   /* the most pairs, the longest source and target */
    int src_tokens, tgt_tokens;    /* the most source positions, decoder positions */
} BatchBounds;

/* The bounds of batches of pairs sequences of len tokens, each its own target. */
BatchBounds fixed_bounds(int pairs, int len);

/* tokens: [batch][len], padded with pad, as sources to decode: keep ([batch][len]) is
   filled with their padding mask. */
SourceBatch source_batch(const int *tokens, uint8_t *keep, int batch, int len, int pad);
#endif
