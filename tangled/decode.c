/* Greedy decoding with a key-value cache, one position per step -- generated from the
   book's chapters by notangle: edit the book, not this file. */
#include "decode.h"
#include <stdlib.h>
#include <string.h>

/* <<decode.c definitions>> */
void greedy_decode(Model *model, int *out, const int *src, const uint8_t *src_keep,
                   int batch, int src_len, int len, int start)
{
    const int vocab = model->config.tgt_vocab;
    Batch prefix;   /* the sources and the outputs so far; tgt_y is not used */
    batch_init(&prefix, batch, src_len, len);
    memcpy(prefix.src, src, (size_t)batch * src_len * sizeof *src);
    memcpy(prefix.src_keep, src_keep, (size_t)batch * src_len);
    for (int b = 0; b < batch; b++) out[(size_t)b * len] = start;
    for (int i = 1; i < len; i++) {
        prefix.tgt_len = i;
        for (int b = 0; b < batch; b++)
            memcpy(prefix.tgt + (size_t)b * i, out + (size_t)b * len, (size_t)i * sizeof *out);
        subsequent_mask(prefix.tgt_keep, i);
        for (int b = 1; b < batch; b++)
            memcpy(prefix.tgt_keep + (size_t)b * i * i, prefix.tgt_keep, (size_t)i * i);
        const float *logprobs = model_forward(model, &prefix, NULL);
        for (int b = 0; b < batch; b++) {
            const float *last = logprobs + ((size_t)b * i + i - 1) * vocab;
            int best = 0;
            for (int w = 1; w < vocab; w++) if (last[w] > last[best]) best = w;
            out[(size_t)b * len + i] = best;
        }
    }
    batch_free(&prefix);
}

static float *carve(float **next, size_t floats)
{
    float *start = *next;
    *next += floats;
    return start;
}

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
    cache->tokens = xmalloc((size_t)max_batch * sizeof *cache->tokens);
    cache->rows = xmalloc((size_t)max_batch * sizeof *cache->rows);
    cache->keep = xmalloc((size_t)max_batch);
    cache->src_keep = xmalloc((size_t)max_batch * max_src_len);
}

void decoder_cache_free(KVCache *cache)
{
    free(cache->layers);
    free(cache->storage);
    free(cache->tokens);
    free(cache->rows), free(cache->keep);
    free(cache->src_keep);
    memset(cache, 0, sizeof *cache);
}

/* out = in W^T + b with the parameters of linear; in: [rows][in_features],
   out: [rows][out_features]. */
static void project(const Model *model, LinearViews linear, float *out, const float *in,
                    int rows, int in_features, int out_features)
{
    linear_forward(out, in, model_parameter(model, linear.weight),
                   model_parameter(model, linear.bias), rows, in_features, out_features);
}

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
    const SourceBatch source = {src, src_keep, batch, src_len};
    const float *memory = model_encode(model, &source);   /* [B][S][d] */
    for (int l = 0; l < c->layers; l++) {
        /* <<Project the memory's keys and values for layer l>> */
        const AttentionViews *src_attn = &model->decoder[l].src_attn;
        const int rows = batch * src_len, d = c->d_model;
        project(model, src_attn->linears[1], cache->layers[l].src_k, memory, rows, d, d);
        project(model, src_attn->linears[2], cache->layers[l].src_v, memory, rows, d, d);
    }
}

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
        }
    project(model, views->linears[3], cache->f, cache->context, cache->batch, d, d);
}

static void decoder_layer_step(const Model *model, KVCache *cache, int l)
{
    const Config *c = &model->config;
    const DecoderLayerViews *views = &model->decoder[l];
    const LayerCache *layer = &cache->layers[l];
    const int batch = cache->batch, t = cache->length, d = c->d_model;
    const int position = cache->max_batch * d;   /* floats per position of the cache */
    const float *in = step_input(model, cache, views->norm[0]);
    /* <<Append the newest position's keys and values>> */
    const size_t at = (size_t)t * position;
    project(model, views->self_attn.linears[1], layer->self_k + at, in, batch, d, d);
    project(model, views->self_attn.linears[2], layer->self_v + at, in, batch, d, d);
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

const float *decoder_cache_step(const Model *model, KVCache *cache, const int *tokens)
{
    const Config *c = &model->config;
    const int batch = cache->batch, t = cache->length, d = c->d_model;
    ENSURE(batch > 0 && t < cache->max_len, "step %d of a cache of %d (batch %d)",
           t, cache->max_len, batch);
    /* <<Embed the newest position>> */
    const float *table = model_parameter(model, model->tgt_embedding);
    embedding_forward(cache->x, tokens, table, batch, d, c->tgt_vocab, embedding_scale(c));
    positional_encoding_forward(cache->x, model->positional + (size_t)t * d, batch, 1, d);
    for (int l = 0; l < c->layers; l++) decoder_layer_step(model, cache, l);
    cache->length = t + 1;
    /* <<Take the final norm and the generator>> */
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
}

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
        const int vocab = model->config.tgt_vocab;
        for (int b = 0; b < batch; b++) {
            const float *row = logprobs + (size_t)b * vocab;
            int best = 0;
            for (int w = 1; w < vocab; w++) if (row[w] > row[best]) best = w;
            out[(size_t)b * len + i] = best;
        }
    }
}

DecodeSettings decode_settings(int start, int end, int pad, int max_len)
{
    return (DecodeSettings){.start = start, .end = end, .pad = pad, .max_len = max_len,
                            .max_extra = 50, .penalty = PENALTY_GNMT, .alpha = 0.6f};
}

int decode_limit(const DecodeSettings *settings, const uint8_t *keep, int src_len)
{
    int limit = settings->max_len - 1;
    if (keep && settings->max_extra >= 0) {
        int n = 0;
        for (int j = 0; j < src_len; j++) n += keep[j] != 0;
        if (n + settings->max_extra < limit) limit = n + settings->max_extra;
    }
    return limit;
}

static bool greedy_open(const DecodeSettings *settings, const int *row, int length, int t,
                        int limit)
{
    return length == t && t <= limit && (t == 1 || row[t - 1] != settings->end);
}

void greedy_translate(Model *model, KVCache *cache, int *out, int *lengths, double *sums,
                      const SourceBatch *source, const DecodeSettings *settings)
{
    const int *src = source->tokens, batch = source->batch, src_len = source->len;
    const uint8_t *src_keep = source->keep;
    const int len = settings->max_len, vocab = model->config.tgt_vocab;
    ENSURE(len >= 1 && len - 1 <= cache->max_len && batch <= cache->max_batch,
           "%d x %d tokens in a cache for %d x %d", batch, len, cache->max_batch,
           cache->max_len);
    for (int b = 0; b < batch; b++) {
        for (int t = 0; t < len; t++) out[(size_t)b * len + t] = settings->pad;
        out[(size_t)b * len] = settings->start, lengths[b] = 1;
        if (sums) sums[b] = 0.0;
    }
    if (len > 1) decoder_cache_start(model, cache, src, src_keep, batch, src_len);
    for (int t = 1; t < len; t++) {
        /* <<Drop the finished rows from the cache; stop when no row is open>> */
        uint8_t *keep = cache->keep;
        int open = 0;
        for (int r = 0; r < cache->batch; r++) {
            const int b = cache->rows[r];
            const int limit = decode_limit(settings, src_keep + (size_t)b * src_len, src_len);
            keep[r] = greedy_open(settings, out + (size_t)b * len, lengths[b], t, limit);
            open += keep[r];
        }
        if (open == 0) break;
        if (open < cache->batch) decoder_cache_keep(cache, model, keep);
        for (int r = 0; r < cache->batch; r++)
            cache->tokens[r] = out[(size_t)cache->rows[r] * len + t - 1];
        const float *logprobs = decoder_cache_step(model, cache, cache->tokens);
        /* <<Append the most probable token to each open row>> */
        for (int r = 0; r < cache->batch; r++) {
            const int b = cache->rows[r];
            int *row = out + (size_t)b * len;
            const float *p = logprobs + (size_t)r * vocab;
            int best = 0;
            for (int w = 1; w < vocab; w++) if (p[w] > p[best]) best = w;
            row[t] = best, lengths[b] = t + 1;
            if (sums) sums[b] += p[best];
        }
    }
}

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
