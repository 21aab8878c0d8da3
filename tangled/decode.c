#line 33 "book/decode.nw"
/* Greedy decoding with a key-value cache, one position per step -- generated from the
   book's chapters by notangle: edit the book, not this file. */
#include "decode.h"
#include <stdlib.h>
#include <string.h>

/* <<decode.c definitions>> */
#line 301 "book/copy.nw"
void greedy_decode(Model *model, int *out, const int *src, const uint8_t *src_keep,
                   int batch, int src_len, int len, int start)
{
    const int vocab = model->config.tgt_vocab;
    int *ys = xmalloc((size_t)batch * len * sizeof *ys);
    uint8_t *keep = xmalloc((size_t)batch * len * len);
    for (int b = 0; b < batch; b++) out[(size_t)b * len] = start;
    for (int i = 1; i < len; i++) {
        for (int b = 0; b < batch; b++)
            memcpy(ys + (size_t)b * i, out + (size_t)b * len, (size_t)i * sizeof *ys);
        subsequent_mask(keep, i);
        for (int b = 1; b < batch; b++)
            memcpy(keep + (size_t)b * i * i, keep, (size_t)i * i);
        const float *logprobs = model_forward(model, src, ys, src_keep, keep, batch, src_len,
                                              i, NULL);
        for (int b = 0; b < batch; b++) {
            const float *last = logprobs + ((size_t)b * i + i - 1) * vocab;
            int best = 0;
            for (int w = 1; w < vocab; w++) if (last[w] > last[best]) best = w;
            out[(size_t)b * len + i] = best;
        }
    }
    free(ys);
    free(keep);
}

#line 143 "book/decode.nw"
static float *carve(float **next, size_t floats)
{
    float *start = *next;
    *next += floats;
    return start;
}

#line 156 "book/decode.nw"
void decoder_cache_init(KVCache *cache, const Model *model, int max_batch,
                        int max_src_len, int max_len)
{
    const Config *c = &model->config;
    ENSURE(max_batch > 0 && max_src_len > 0 && max_len > 0, "cache of %d x %d / %d",
           max_batch, max_src_len, max_len);
    ENSURE(max_len <= c->max_len && max_src_len <= c->max_len,
           "a cache of %d positions exceeds the model's max_len %d",   /* the caller checks */
           max_len > max_src_len ? max_len : max_src_len, c->max_len);
    memset(cache, 0, sizeof *cache);
    cache->max_batch = max_batch, cache->max_src_len = max_src_len;
    cache->max_len = max_len;
    cache->layers = xmalloc((size_t)c->layers * sizeof *cache->layers);
    /* <<Carve the cache's arrays out of one allocation>> */
#line 181 "book/decode.nw"
    const size_t d = (size_t)c->d_model, rows = (size_t)max_batch;
    const size_t self = (size_t)max_len * rows * d, src = rows * max_src_len * d;
    const size_t longest = (size_t)(max_len > max_src_len ? max_len : max_src_len);
    const size_t total = (size_t)c->layers * 2 * (self + src) + longest
                         + rows * (5 * d + (size_t)c->d_ff + 2 + (size_t)c->tgt_vocab);
    float *next = cache->storage = xmalloc(total * sizeof(float));
    for (int l = 0; l < c->layers; l++) {
        LayerCache *layer = &cache->layers[l];
        layer->self_k = carve(&next, self), layer->self_v = carve(&next, self);
        layer->src_k = carve(&next, src), layer->src_v = carve(&next, src);
    }
    cache->x = carve(&next, rows * d), cache->normed = carve(&next, rows * d);
    cache->f = carve(&next, rows * d), cache->q = carve(&next, rows * d);
    cache->context = carve(&next, rows * d);
    cache->hidden = carve(&next, rows * c->d_ff);
    cache->mean = carve(&next, rows), cache->rstd = carve(&next, rows);
    cache->logprobs = carve(&next, rows * c->tgt_vocab);
    cache->scores = carve(&next, longest);
    ENSURE(next == cache->storage + total, "carved %td of %zu floats", next - cache->storage,
           total);
#line 170 "book/decode.nw"
    cache->tokens = xmalloc((size_t)max_batch * sizeof *cache->tokens);
    cache->rows = xmalloc((size_t)max_batch * sizeof *cache->rows);
    cache->keep = xmalloc((size_t)max_batch);
    cache->src_keep = xmalloc((size_t)max_batch * max_src_len);
}

#line 206 "book/decode.nw"
void decoder_cache_free(KVCache *cache)
{
    free(cache->layers);
    free(cache->storage);
    free(cache->tokens);
    free(cache->rows), free(cache->keep);
    free(cache->src_keep);
    memset(cache, 0, sizeof *cache);
}

#line 236 "book/decode.nw"
/* out = in W^T + b with the parameters of linear; in: [rows][in_features],
   out: [rows][out_features]. */
static void project(const Model *model, LinearViews linear, float *out, const float *in,
                    int rows, int in_features, int out_features)
{
    linear_forward(out, in, model_parameter(model, linear.weight),
                   model_parameter(model, linear.bias), rows, in_features, out_features);
}

#line 250 "book/decode.nw"
void decoder_cache_start(Model *model, KVCache *cache, const int *src,
                         const uint8_t *src_keep, int batch, int src_len)
{
    const Config *c = &model->config;
    ENSURE(batch > 0 && batch <= cache->max_batch && src_len > 0
           && src_len <= cache->max_src_len, "decoding %d x %d in a cache for %d x %d",
           batch, src_len, cache->max_batch, cache->max_src_len);
    cache->batch = batch, cache->src_len = src_len, cache->length = 0;
    for (int b = 0; b < batch; b++) cache->rows[b] = b;
    memcpy(cache->src_keep, src_keep, (size_t)batch * src_len);
    /* <<Run the encoder once>> */
#line 272 "book/decode.nw"
    const float *memory = model_encode(model, src, src_keep, batch, src_len);   /* [B][S][d] */
#line 261 "book/decode.nw"
    for (int l = 0; l < c->layers; l++) {
        /* <<Project the memory's keys and values for layer l>> */
#line 280 "book/decode.nw"
        const AttentionViews *src_attn = &model->decoder[l].src_attn;
        const int rows = batch * src_len, d = c->d_model;
        project(model, src_attn->linears[1], cache->layers[l].src_k, memory, rows, d, d);
        project(model, src_attn->linears[2], cache->layers[l].src_v, memory, rows, d, d);
#line 263 "book/decode.nw"
    }
}

#line 309 "book/decode.nw"
void decoder_cache_keep(KVCache *cache, const Model *model, const uint8_t *keep)
{
    const size_t d = (size_t)model->config.d_model, position = (size_t)cache->max_batch * d;
    const size_t source = (size_t)cache->src_len * d;
    int kept = 0;
    for (int r = 0; r < cache->batch; r++) {
        if (!keep[r]) continue;
        if (kept != r) {
            for (int l = 0; l < model->config.layers; l++) {
                LayerCache *layer = &cache->layers[l];
                for (int t = 0; t < cache->length; t++) {
                    float *row_k = layer->self_k + t * position;
                    float *row_v = layer->self_v + t * position;
                    memcpy(row_k + kept * d, row_k + r * d, d * sizeof(float));
                    memcpy(row_v + kept * d, row_v + r * d, d * sizeof(float));
                }
                memcpy(layer->src_k + kept * source, layer->src_k + r * source,
                       source * sizeof(float));
                memcpy(layer->src_v + kept * source, layer->src_v + r * source,
                       source * sizeof(float));
            }
            memcpy(cache->src_keep + (size_t)kept * cache->src_len,
                   cache->src_keep + (size_t)r * cache->src_len, (size_t)cache->src_len);
            cache->rows[kept] = cache->rows[r];
        }
        kept++;
    }
    cache->batch = kept;
}

/* <<Sublayers for the newest position>> */
#line 392 "book/decode.nw"
/* What F reads: LN(x) into cache->normed (pre-norm) or x itself (post-norm);
   x: [batch][d]. */
static const float *step_input(const Model *model, KVCache *cache, NormViews norm)
{
    const LayerNormSaved saved = {cache->mean, cache->rstd};
    return model_sublayer_input(model, norm, cache->normed, &saved, cache->x, cache->batch);
}

/* x = x + F (pre-norm) or LN(x + F) (post-norm), with F in cache->f; both [batch][d]. */
static void step_residual(const Model *model, KVCache *cache, NormViews norm)
{
    const LayerNormSaved saved = {cache->mean, cache->rstd};
    model_sublayer_residual(model, norm, cache->x, cache->normed, &saved, cache->x, cache->f,
                            NULL, cache->batch);
}

#line 417 "book/decode.nw"
/* cache->f = multi-head attention of the newest position of each sequence, with queries
   from in: [batch][d], over n keys and values: key j of sequence b is the row of d floats
   at k + b * seq_stride + j * key_stride, its value likewise in v; keep: NULL (attend to
   all n) or the source's mask [batch][n]. */
static void attend_newest(const Model *model, KVCache *cache, const AttentionViews *views,
                          const float *in, const float *k, const float *v,
                          size_t seq_stride, int key_stride, const uint8_t *keep, int n)
{
    const Config *c = &model->config;
    const int d = c->d_model, d_k = d / c->heads;
    project(model, views->linears[0], cache->q, in, cache->batch, d, d);
    for (int b = 0; b < cache->batch; b++)
        for (int a = 0; a < c->heads; a++) {
            /* <<Attend with head a of the newest position of sequence b>> */
#line 441 "book/decode.nw"
            const size_t head = (size_t)b * d + (size_t)a * d_k;      /* in q and context */
            const size_t first = (size_t)b * seq_stride + (size_t)a * d_k;   /* in k and v */
            float *p = cache->scores;
            const float scale = c->unscaled_attention ? 1.0f : 1.0f / sqrtf((float)d_k);
            matmul(1, n, d_k, scale, matrix(cache->q + head, d), transposed(k + first, key_stride),
                   0.0f, p, n);
            if (keep) mask_scores(p, keep + (size_t)b * n, 0, 1, n);
            softmax_rows(p, p, 1, n);
            matmul(1, d_k, n, 1.0f, matrix(p, n), matrix(v + first, key_stride), 0.0f,
                   cache->context + head, d);
#line 431 "book/decode.nw"
        }
    project(model, views->linears[3], cache->f, cache->context, cache->batch, d, d);
}

#line 459 "book/decode.nw"
static void decoder_layer_step(const Model *model, KVCache *cache, int l)
{
    const Config *c = &model->config;
    const DecoderLayerViews *views = &model->decoder[l];
    const LayerCache *layer = &cache->layers[l];
    const int batch = cache->batch, t = cache->length, d = c->d_model;
    const int position = cache->max_batch * d;   /* floats per position of the cache */
    const float *in = step_input(model, cache, views->norm[0]);
    /* <<Append the newest position's keys and values>> */
#line 488 "book/decode.nw"
    const size_t at = (size_t)t * position;
    project(model, views->self_attn.linears[1], layer->self_k + at, in, batch, d, d);
    project(model, views->self_attn.linears[2], layer->self_v + at, in, batch, d, d);
#line 468 "book/decode.nw"
    attend_newest(model, cache, &views->self_attn, in, layer->self_k, layer->self_v,
                  (size_t)d, position, NULL, t + 1);
    step_residual(model, cache, views->norm[0]);
    in = step_input(model, cache, views->norm[1]);
    attend_newest(model, cache, &views->src_attn, in, layer->src_k, layer->src_v,
                  (size_t)cache->src_len * d, d, cache->src_keep, cache->src_len);
    step_residual(model, cache, views->norm[1]);
    in = step_input(model, cache, views->norm[2]);
    const FeedForwardWeights ff = feed_forward_weights(&model->parameters,
                                                       &views->feed_forward);
    const FeedForwardSaved hidden = {cache->hidden, NULL};   /* no dropout */
    feed_forward_forward(cache->f, &ff, &hidden, in, batch, d, c->d_ff);
    step_residual(model, cache, views->norm[2]);
}

#line 361 "book/decode.nw"
const float *decoder_cache_step(const Model *model, KVCache *cache, const int *tokens)
{
    const Config *c = &model->config;
    const int batch = cache->batch, t = cache->length, d = c->d_model;
    ENSURE(batch > 0 && t < cache->max_len, "step %d of a cache of %d (batch %d)",
           t, cache->max_len, batch);
    /* <<Embed the newest position>> */
#line 379 "book/decode.nw"
    const float *table = model_parameter(model, model->tgt_embedding);
    embedding_forward(cache->x, tokens, table, batch, d, c->tgt_vocab, embedding_scale(c));
    positional_encoding_forward(cache->x, model->positional + (size_t)t * d, batch, 1, d);
#line 368 "book/decode.nw"
    for (int l = 0; l < c->layers; l++) decoder_layer_step(model, cache, l);
    cache->length = t + 1;
    /* <<Take the final norm and the generator>> */
#line 498 "book/decode.nw"
    const float *decoded = cache->x;
    if (c->norm == NORM_PRE) {
        const LayerNormWeights w = layernorm_weights(&model->parameters, model->decoder_norm);
        const LayerNormSaved saved = {cache->mean, cache->rstd};
        layernorm_forward(cache->normed, &w, &saved, cache->x, batch, d, c->layernorm,
                          c->layernorm_eps);
        decoded = cache->normed;
    }
    project(model, model->generator, cache->logprobs, decoded, batch, d, c->tgt_vocab);
    layer_kernels[compute.kernel_set].log_softmax(cache->logprobs, batch, c->tgt_vocab);
    return cache->logprobs;
#line 371 "book/decode.nw"
}

#line 534 "book/decode.nw"
void greedy_decode_cached(Model *model, KVCache *cache, int *out, const int *src,
                          const uint8_t *src_keep, int batch, int src_len, int len,
                          int start)
{
    ENSURE(len >= 1 && len - 1 <= cache->max_len, "decoding %d tokens with a cache of %d",
           len, cache->max_len);
    for (int b = 0; b < batch; b++) out[(size_t)b * len] = start;
    if (len == 1) return;   /* nothing to predict: like greedy_decode, no model at all */
    decoder_cache_start(model, cache, src, src_keep, batch, src_len);
    for (int i = 1; i < len; i++) {
        for (int b = 0; b < batch; b++) cache->tokens[b] = out[(size_t)b * len + i - 1];
        const float *logprobs = decoder_cache_step(model, cache, cache->tokens);
        /* <<Pick each sequence's most probable next token>> */
#line 555 "book/decode.nw"
        const int vocab = model->config.tgt_vocab;
        for (int b = 0; b < batch; b++) {
            const float *row = logprobs + (size_t)b * vocab;
            int best = 0;
            for (int w = 1; w < vocab; w++) if (row[w] > row[best]) best = w;
            out[(size_t)b * len + i] = best;
        }
#line 547 "book/decode.nw"
    }
}

#line 614 "book/beam.nw"
void decoder_cache_share_sources(const Model *model, KVCache *cache, int copies)
{
    const int batch = cache->batch, s = cache->src_len, d = model->config.d_model;
    ENSURE(copies >= 1 && batch * copies <= cache->max_batch && cache->length == 0,
           "%d copies of %d sources in a cache for %d", copies, batch, cache->max_batch);
    const size_t block = (size_t)s * d;   /* floats of one source's keys */
    for (int b = batch - 1; b >= 0; b--)
        for (int j = copies - 1; j >= 0; j--) {
            const size_t to = (size_t)b * copies + j;
            if (to == (size_t)b) continue;
            for (int l = 0; l < model->config.layers; l++) {
                LayerCache *layer = &cache->layers[l];
                memcpy(layer->src_k + to * block, layer->src_k + b * block,
                       block * sizeof(float));
                memcpy(layer->src_v + to * block, layer->src_v + b * block,
                       block * sizeof(float));
            }
            memcpy(cache->src_keep + to * s, cache->src_keep + (size_t)b * s, (size_t)s);
        }
    cache->batch = batch * copies;
    for (int r = 0; r < cache->batch; r++) cache->rows[r] = r;
}

#line 677 "book/beam.nw"
void decoder_cache_reorder(const Model *model, KVCache *cache, const int *parent)
{
    const int rows = cache->batch, d = model->config.d_model;
    const size_t position = (size_t)cache->max_batch * d;   /* floats per position */
    const size_t bytes = (size_t)d * sizeof(float);          /* of one row */
    float *scratch = cache->q;   /* [max_batch][d_model] */
    for (int l = 0; l < model->config.layers; l++)
        for (int kv = 0; kv < 2; kv++) {
            float *keys = kv == 0 ? cache->layers[l].self_k : cache->layers[l].self_v;
            for (int p = 0; p < cache->length; p++) {
                float *block = keys + p * position;   /* [rows][d_model] */
                memcpy(scratch, block, (size_t)rows * bytes);
                for (int r = 0; r < rows; r++)
                    if (parent[r] != r)
                        memcpy(block + (size_t)r * d, scratch + (size_t)parent[r] * d,
                               bytes);
            }
        }
}
