/* Decoding: its settings, the key-value cache, greedy decoding. Generated from the book's
   chapters by notangle: edit the book, not this file. */
#ifndef DECODE_H
#define DECODE_H
#include "model.h"

/* <<decode.h declarations>> */
/* out[b] = greedy decoding of src[b], starting with start: out: [batch][len],
   src: [batch][src_len] with its padding mask src_keep. */
void greedy_decode(Model *model, int *out, const int *src, const uint8_t *src_keep,
                   int batch, int src_len, int len, int start);

typedef struct {
    float *self_k, *self_v;    /* [max_len][max_batch][d_model]: position-major */
    float *src_k, *src_v;      /* [batch][src_len][d_model] of the memory, packed */
} LayerCache;

typedef struct {
    int max_batch, max_src_len, max_len;   /* what the cache was laid out for */
    int batch, src_len;                    /* of the decoding under way */
    int length;                            /* positions cached so far */
    LayerCache *layers;                    /* [layers] */
    float *storage;                        /* every float array below, one allocation */
    float *x;               /* [max_batch][d_model]: the newest position's stream */
    float *normed;          /* [max_batch][d_model]: LN(x) (pre) or x + F (post) */
    float *f;               /* [max_batch][d_model]: a sublayer's output F */
    float *q, *context;     /* [max_batch][d_model]: an attention's queries and context */
    float *hidden;          /* [max_batch][d_ff] */
    float *scores;          /* [max(max_len, max_src_len)]: one head's weights */
    float *mean, *rstd;     /* [max_batch]: a norm's statistics (not needed afterwards) */
    float *logprobs;        /* [max_batch][tgt_vocab]: of the next token */
    int *tokens;            /* [max_batch]: the newest position's tokens */
    int *rows;              /* [max_batch]: the caller's number of each cached sequence */
    uint8_t *keep;          /* [max_batch]: which to keep, the caller's scratch */
    uint8_t *src_keep;      /* [max_batch][max_src_len]: a copy of the source's mask */
} KVCache;

/* Lay out and allocate a cache for model: up to max_batch sequences, sources of up to
   max_src_len tokens, up to max_len decoded positions (at most the model's max_len). */
void decoder_cache_init(KVCache *cache, const Model *model, int max_batch,
                        int max_src_len, int max_len);
void decoder_cache_free(KVCache *cache);

/* Begin decoding src: [batch][src_len] with its padding mask src_keep: [batch][src_len]
   (copied): run the encoder once and project the memory's keys and values for every
   decoder layer; no position is cached yet. The model must be prepared (model_prepare)
   for batch sequences of src_len tokens; its activations are overwritten. */
void decoder_cache_start(Model *model, KVCache *cache, const int *src,
                         const uint8_t *src_keep, int batch, int src_len);

/* Keep the cached sequences r with keep[r] != 0 (r < cache->batch), in their order, and drop
   the others: cache->batch becomes their count, cache->rows[i] the caller's number of the
   i-th kept one (decoder_cache_start numbers them 0 .. batch - 1). */
void decoder_cache_keep(KVCache *cache, const Model *model, const uint8_t *keep);

/* Feed tokens: [batch], one per sequence, at the next position t = cache->length; append
   their keys and values to the cache. Returns the log-probabilities of the token after
   them, [batch][tgt_vocab] (the cache's scratch, valid until the next step). */
const float *decoder_cache_step(const Model *model, KVCache *cache, const int *tokens);

/* out[b] = greedy decoding of src[b], starting with start, as greedy_decode:
   out: [batch][len], src: [batch][src_len] with its padding mask src_keep. The cache
   holds at least len - 1 positions; the model is prepared for batch sequences of
   src_len tokens. */
void greedy_decode_cached(Model *model, KVCache *cache, int *out, const int *src,
                          const uint8_t *src_keep, int batch, int src_len, int len,
                          int start);

typedef enum { PENALTY_GNMT, PENALTY_POWER } LengthPenalty;

typedef struct {
    int start, end, pad;     /* start and end symbols (end < 0: none), padding index */
    int max_len;             /* tokens in an output row, the start symbol included */
    int max_extra;           /* at most (source length + max_extra) tokens after the start
                                symbol; < 0: no limit but max_len */
    LengthPenalty penalty;   /* how finished outputs of different lengths compare */
    float alpha;             /* the penalty's exponent; 0 compares raw sums */
} DecodeSettings;

/* The paper's settings: the GNMT penalty with alpha = 0.6, at most the source's length
   + 50 tokens after the start symbol, and at most max_len tokens in all. */
DecodeSettings decode_settings(int start, int end, int pad, int max_len);
/* The most tokens after the start symbol for a source whose padding mask is keep:
   [src_len] (NULL: max_len - 1). */
int decode_limit(const DecodeSettings *settings, const uint8_t *keep, int src_len);

/* out[b] = source b's greedy decoding: the start symbol, then the most probable token after
   each prefix, until the end symbol (included) or the limits of settings; the rest of the
   row is the padding index. out: [batch][settings->max_len], lengths: [batch] (tokens
   before the padding), sums: [batch] (their log-probability) or NULL. The cache holds
   batch sequences of max_len - 1 positions, and the model is prepared for batch sequences
   of source->len tokens. */
void greedy_translate(Model *model, KVCache *cache, int *out, int *lengths, double *sums,
                      const SourceBatch *source, const DecodeSettings *settings);

/* After decoder_cache_start for batch sources and before the first step: make the
   cache hold batch * copies sequences, copies consecutive ones per source, each with that
   source's memory keys and values and padding mask. */
void decoder_cache_share_sources(const Model *model, KVCache *cache, int copies);

/* Row r of the self-attention's keys and values, at every cached position of every layer,
   becomes row parent[r]'s; parent: [cache->batch]. Between steps only: it uses the
   cache's query rows as scratch. */
void decoder_cache_reorder(const Model *model, KVCache *cache, const int *parent);
#endif
