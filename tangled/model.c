#line 29 "book/masks.nw"
/* The masks and layers of the model -- generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "model.h"
/* <<model.c includes>> */
#line 30 "book/attention.nw"
#include <string.h>
#line 104 "book/model.nw"
#include <stdio.h>
#include <stdlib.h>
#line 112 "book/model.nw"
#include <stdarg.h>
/* <<model.c definitions>> */
#line 75 "book/masks.nw"
void padding_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "padding mask of %d x %d", batch, len);
    for (size_t bj = 0; bj < (size_t)batch * len; bj++)
        keep[bj] = tokens[bj] != pad;
}
#line 108 "book/masks.nw"
void subsequent_mask(uint8_t *keep, int len)
{
    ENSURE(len >= 0, "subsequent mask of length %d", len);
    for (int i = 0; i < len; i++)
        for (int j = 0; j < len; j++)
            keep[(size_t)i * len + j] = j <= i;
}
#line 148 "book/masks.nw"
void target_mask(uint8_t *keep, const int *tokens, int batch, int len, int pad)
{
    ENSURE(batch >= 0 && len >= 0, "target mask of %d x %d", batch, len);
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < len; i++)
            for (int j = 0; j < len; j++)
                keep[((size_t)b * len + i) * len + j] =
                    tokens[(size_t)b * len + j] != pad && j <= i;
}
#line 224 "book/masks.nw"
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
#line 40 "book/embeddings.nw"
void embedding_forward(float *out, const int *tokens, const float *table,
                       int n, int d_model, int vocab)
{
    const float scale = sqrtf((float)d_model);
    PARALLEL_FOR((size_t)n * d_model)
    for (int p = 0; p < n; p++) {
        ENSURE(tokens[p] >= 0 && tokens[p] < vocab, "token %d of %d", tokens[p], vocab);
        const float *row = table + (size_t)tokens[p] * d_model;
        float *out_p = out + (size_t)p * d_model;
        for (int i = 0; i < d_model; i++) out_p[i] = scale * row[i];
    }
}
#line 74 "book/embeddings.nw"
void embedding_backward(float *d_table, const float *d_out, const int *tokens, int n,
                        int d_model)
{
    const float scale = sqrtf((float)d_model);
    for (int p = 0; p < n; p++) {
        float *row = d_table + (size_t)tokens[p] * d_model;
        const float *d_out_p = d_out + (size_t)p * d_model;
        for (int i = 0; i < d_model; i++) row[i] += scale * d_out_p[i];
    }
}
#line 123 "book/embeddings.nw"
void positional_encoding_table(float *table, int max_len, int d_model)
{
    ENSURE(d_model % 2 == 0 && max_len > 0, "positional encoding %d x %d", max_len, d_model);
    for (int p = 0; p < max_len; p++)
        for (int i = 0; 2 * i < d_model; i++) {
            double angle = p * pow(10000.0, -2.0 * i / d_model);
            table[(size_t)p * d_model + 2 * i] = (float)sin(angle);
            table[(size_t)p * d_model + 2 * i + 1] = (float)cos(angle);
        }
}
#line 147 "book/embeddings.nw"
void positional_encoding_forward(float *x, const float *table, int batch, int len,
                                 int d_model)
{
    PARALLEL_FOR((size_t)batch * len * d_model)
    for (int b = 0; b < batch; b++)
        for (size_t pi = 0; pi < (size_t)len * d_model; pi++)
            x[(size_t)b * len * d_model + pi] += table[pi];
}
#line 34 "book/attention.nw"
void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int n, int in_features, int out_features)
{
    PARALLEL_FOR((size_t)n * out_features)
    for (int r = 0; r < n; r++)
        memcpy(out + (size_t)r * out_features, bias, (size_t)out_features * sizeof *out);
    matmul(false, true, n, out_features, in_features, 1.0f, in, in_features,
           weight, in_features, 1.0f, out, out_features);
}
#line 67 "book/attention.nw"
void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int n, int in_features,
                     int out_features)
{
    if (d_in)
        matmul(false, false, n, in_features, out_features, 1.0f, d_out, out_features,
               weight, in_features, 1.0f, d_in, in_features);
    matmul(true, false, out_features, in_features, n, 1.0f, d_out, out_features,
           in, in_features, 1.0f, d_weight, in_features);
    PARALLEL_FOR((size_t)n * out_features)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const int first = block_start(block, out_features);
        const int end = block_start(block + 1, out_features);
        for (int r = 0; r < n; r++)
            for (int o = first; o < end; o++)
                d_bias[o] += d_out[(size_t)r * out_features + o];
    }
}
#line 120 "book/attention.nw"
void softmax_rows(float *p, const float *s, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        const float *s_i = s + (size_t)i * cols;
        float *p_i = p + (size_t)i * cols;
        float m = -INFINITY;
        for (int j = 0; j < cols; j++) m = s_i[j] > m ? s_i[j] : m;
        if (m == -INFINITY) { memset(p_i, 0, (size_t)cols * sizeof *p_i); continue; }
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) sum += (p_i[j] = expf(s_i[j] - m));
        for (int j = 0; j < cols; j++) p_i[j] /= sum;
    }
}
#line 154 "book/attention.nw"
void softmax_rows_backward(float *ds, const float *dp, const float *p, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        const float *p_i = p + (size_t)i * cols, *dp_i = dp + (size_t)i * cols;
        float *ds_i = ds + (size_t)i * cols;
        double dot = 0.0;
        for (int j = 0; j < cols; j++) dot += (double)p_i[j] * dp_i[j];
        for (int j = 0; j < cols; j++) ds_i[j] = p_i[j] * (dp_i[j] - (float)dot);
    }
}
#line 210 "book/attention.nw"
void attention_forward(float *out, float *q, float *k, float *v, float *probs,
                       float *probs_dropped, float *context, const float *query_in,
                       const float *memory_in, const uint8_t *keep,
                       size_t keep_batch_stride, size_t keep_row_stride,
                       const float *const weight[4], const float *const bias[4],
                       const float *probs_keep_scale, int batch, int len_q, int len_k,
                       int d_model, int heads)
{
    ENSURE(heads > 0 && d_model % heads == 0, "d_model %d, heads %d", d_model, heads);
    const int d_k = d_model / heads;
    linear_forward(q, query_in, weight[0], bias[0], batch * len_q, d_model, d_model);
    linear_forward(k, memory_in, weight[1], bias[1], batch * len_k, d_model, d_model);
    linear_forward(v, memory_in, weight[2], bias[2], batch * len_k, d_model, d_model);
    PARALLEL_FOR((size_t)batch * heads * len_q * len_k * d_k)
    for (int head_of_batch = 0; head_of_batch < batch * heads; head_of_batch++) {
        const int b = head_of_batch / heads, a = head_of_batch % heads;
        /* <<Attend with head [[a]] of sequence [[b]]>> */
#line 233 "book/attention.nw"
        const size_t q_offset = (size_t)b * len_q * d_model + (size_t)a * d_k;
        const size_t k_offset = (size_t)b * len_k * d_model + (size_t)a * d_k;
        float *p = probs + ((size_t)b * heads + a) * len_q * len_k;
        matmul(false, true, len_q, len_k, d_k, 1.0f / sqrtf((float)d_k),
               q + q_offset, d_model, k + k_offset, d_model, 0.0f, p, len_k);
        if (fast_kernels) {   /* the same numbers in one pass (Chapter 19) */
            masked_softmax_rows(p, keep + (size_t)b * keep_batch_stride, keep_row_stride, len_q,
                                len_k);
        } else {
            mask_scores(p, keep + (size_t)b * keep_batch_stride, keep_row_stride, len_q, len_k);
            softmax_rows(p, p, len_q, len_k);
        }
        const float *weights = p;
        if (probs_keep_scale) {   /* keep p itself: the softmax's backward needs it */
            const size_t head = ((size_t)b * heads + a) * len_q * len_k;
            for (size_t i = 0; i < (size_t)len_q * len_k; i++)
                probs_dropped[head + i] = p[i] * probs_keep_scale[head + i];
            weights = probs_dropped + head;
        }
        matmul(false, false, len_q, d_k, len_k, 1.0f, weights, len_k, v + k_offset, d_model,
               0.0f, context + q_offset, d_model);
#line 227 "book/attention.nw"
    }
    linear_forward(out, context, weight[3], bias[3], batch * len_q, d_model, d_model);
}
#line 301 "book/attention.nw"
void attention_backward(float *d_query_in, float *d_memory_in, float *const d_weight[4],
                        float *const d_bias[4], const AttentionScratch *scratch,
                        const float *d_out, const float *q, const float *k, const float *v,
                        const float *probs, const float *probs_dropped,
                        const float *context, const float *query_in,
                        const float *memory_in, const float *const weight[4],
                        const float *probs_keep_scale, int batch, int len_q, int len_k,
                        int d_model, int heads)
{
    const int d_k = d_model / heads;
    const size_t q_size = (size_t)batch * len_q * d_model;
    const size_t k_size = (size_t)batch * len_k * d_model;
    memset(scratch->d_context, 0, q_size * sizeof(float));
    memset(scratch->d_q, 0, q_size * sizeof(float));
    memset(scratch->d_k, 0, k_size * sizeof(float));
    memset(scratch->d_v, 0, k_size * sizeof(float));
    linear_backward(scratch->d_context, d_weight[3], d_bias[3], d_out, context, weight[3],
                    batch * len_q, d_model, d_model);
    PARALLEL_FOR((size_t)batch * heads * len_q * len_k * d_k)
    for (int head_of_batch = 0; head_of_batch < batch * heads; head_of_batch++) {
        const int b = head_of_batch / heads, a = head_of_batch % heads;
        /* <<Carry the gradient back through head [[a]] of sequence [[b]]>> */
#line 334 "book/attention.nw"
        const size_t q_offset = (size_t)b * len_q * d_model + (size_t)a * d_k;
        const size_t k_offset = (size_t)b * len_k * d_model + (size_t)a * d_k;
        const size_t head = ((size_t)b * heads + a) * len_q * len_k;
        const float *weights = probs_keep_scale ? probs_dropped + head : probs + head;
        float *d_p = scratch->d_p + (size_t)omp_get_thread_num() * len_q * len_k;   /* its own */
        matmul(false, true, len_q, len_k, d_k, 1.0f, scratch->d_context + q_offset, d_model,
               v + k_offset, d_model, 0.0f, d_p, len_k);
        matmul(true, false, len_k, d_k, len_q, 1.0f, weights, len_k,
               scratch->d_context + q_offset, d_model, 1.0f, scratch->d_v + k_offset, d_model);
        if (probs_keep_scale) dropout_apply(d_p, probs_keep_scale + head, (size_t)len_q * len_k);
        softmax_rows_backward(d_p, d_p, probs + head, len_q, len_k);
        const float scale = 1.0f / sqrtf((float)d_k);
        matmul(false, false, len_q, d_k, len_k, scale, d_p, len_k, k + k_offset, d_model,
               1.0f, scratch->d_q + q_offset, d_model);
        matmul(true, false, len_k, d_k, len_q, scale, d_p, len_k, q + q_offset, d_model,
               1.0f, scratch->d_k + k_offset, d_model);
#line 323 "book/attention.nw"
    }
    linear_backward(d_query_in, d_weight[0], d_bias[0], scratch->d_q, query_in, weight[0],
                    batch * len_q, d_model, d_model);
    linear_backward(d_memory_in, d_weight[1], d_bias[1], scratch->d_k, memory_in, weight[1],
                    batch * len_k, d_model, d_model);
    linear_backward(d_memory_in, d_weight[2], d_bias[2], scratch->d_v, memory_in, weight[2],
                    batch * len_k, d_model, d_model);
}
#line 371 "book/attention.nw"
void dropout_mask(float *keep_scale, size_t n, float p, Rng *rng)
{
    ENSURE(p >= 0.0f && p < 1.0f, "dropout probability %g", p);
    if (fast_kernels) { dropout_mask_parallel(keep_scale, n, p, rng); return; }   /* Ch. 19 */
    const float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++) keep_scale[i] = rng_uniform(rng) < p ? 0.0f : scale;
}

void dropout_apply(float *x, const float *keep_scale, size_t n)
{
    PARALLEL_FOR(n)
    for (size_t i = 0; i < n; i++) x[i] *= keep_scale[i];
}
#line 61 "book/layernorm.nw"
void layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                       const float *gain, const float *bias, int n, int d,
                       LayerNormFormula formula, float eps)
{
    ENSURE(d > 1, "layer norm over %d values", d);
    PARALLEL_FOR((size_t)n * d)
    for (int r = 0; r < n; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        double sum = 0.0, squares = 0.0, mu;
        if (fast_kernels) {   /* one pass over x for both sums (Chapter 19) */
            row_moments(x, d, &mu, &squares);
        } else {
            for (int i = 0; i < d; i++) sum += x[i];
            mu = sum / d;
            for (int i = 0; i < d; i++) squares += (x[i] - mu) * (x[i] - mu);
        }
        const double r_factor = formula == LAYERNORM_STANDARD
                                    ? 1.0 / sqrt(squares / d + eps)
                                    : 1.0 / (sqrt(squares / (d - 1)) + eps);
        for (int i = 0; i < d; i++)
            y[i] = (float)(gain[i] * (x[i] - mu) * r_factor + bias[i]);
        mean[r] = (float)mu;
        rstd[r] = (float)r_factor;
    }
}
#line 116 "book/layernorm.nw"
void layernorm_backward(float *d_in, float *d_gain, float *d_bias, const float *d_out,
                        const float *in, const float *mean, const float *rstd,
                        const float *gain, int n, int d, LayerNormFormula formula,
                        float eps)
{
    PARALLEL_FOR((size_t)n * d)
    for (int r = 0; r < n; r++) {
        const float *x = in + (size_t)r * d, *dy = d_out + (size_t)r * d;
        float *dx = d_in + (size_t)r * d;
        const double mu = mean[r], factor = rstd[r];
        double g_sum = 0.0, gc_sum = 0.0;
        for (int i = 0; i < d; i++) {
            const double g = (double)gain[i] * dy[i];
            g_sum += g;
            gc_sum += g * (x[i] - mu);
        }
        /* <<Find [[dr_per_c]], the derivative of the factor over [[c_i]]>> */
#line 163 "book/layernorm.nw"
        double dr_per_c;
        if (formula == LAYERNORM_STANDARD) {
            dr_per_c = -factor * factor * factor / d;
        } else {
            const double s = 1.0 / factor - eps;
            dr_per_c = s > 0.0 ? -factor * factor / ((d - 1) * s) : 0.0;
        }
#line 133 "book/layernorm.nw"
        for (int i = 0; i < d; i++) {
            const double c = x[i] - mu;
            dx[i] += (float)(factor * ((double)gain[i] * dy[i] - g_sum / d)
                             + gc_sum * dr_per_c * c);
        }
    }
    /* <<Add the gain's and the bias's gradients, row after row>> */
#line 148 "book/layernorm.nw"
    PARALLEL_FOR((size_t)n * d)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const int first = block_start(block, d), end = block_start(block + 1, d);
        for (int r = 0; r < n; r++) {
            const float *x = in + (size_t)r * d, *dy = d_out + (size_t)r * d;
            const double mu = mean[r], factor = rstd[r];
            for (int i = first; i < end; i++) {
                d_gain[i] += (float)(dy[i] * (x[i] - mu) * factor);
                d_bias[i] += dy[i];
            }
        }
    }
#line 140 "book/layernorm.nw"
}
#line 221 "book/layernorm.nw"
void feed_forward_forward(float *out, float *hidden, const float *in,
                          const float *w_1, const float *b_1, const float *w_2,
                          const float *b_2, const float *hidden_keep_scale,
                          int n, int d_model, int d_ff)
{
    const size_t size = (size_t)n * d_ff;
    linear_forward(hidden, in, w_1, b_1, n, d_model, d_ff);
    PARALLEL_FOR(size)
    for (size_t i = 0; i < size; i++)   /* a NaN passes through, as in PyTorch */
        hidden[i] = hidden[i] < 0.0f ? 0.0f : hidden[i];
    if (hidden_keep_scale) dropout_apply(hidden, hidden_keep_scale, size);
    linear_forward(out, hidden, w_2, b_2, n, d_ff, d_model);
}
#line 258 "book/layernorm.nw"
void feed_forward_backward(float *d_in, float *d_w_1, float *d_b_1, float *d_w_2,
                           float *d_b_2, float *d_hidden, const float *d_out,
                           const float *in, const float *hidden, const float *w_1,
                           const float *w_2, const float *hidden_keep_scale, int n,
                           int d_model, int d_ff)
{
    const size_t size = (size_t)n * d_ff;
    memset(d_hidden, 0, size * sizeof *d_hidden);
    linear_backward(d_hidden, d_w_2, d_b_2, d_out, hidden, w_2, n, d_ff, d_model);
    PARALLEL_FOR(size)
    for (size_t i = 0; i < size; i++)
        d_hidden[i] = hidden[i] > 0.0f
                          ? d_hidden[i] * (hidden_keep_scale ? hidden_keep_scale[i] : 1.0f)
                          : 0.0f;
    linear_backward(d_in, d_w_1, d_b_1, d_hidden, in, w_1, n, d_model, d_ff);
}
#line 41 "book/model.nw"
Config config_default(int src_vocab, int tgt_vocab, int layers)
{
    return (Config){.src_vocab = src_vocab, .tgt_vocab = tgt_vocab, .layers = layers,
                    .d_model = 512, .d_ff = 2048, .heads = 8, .max_len = 5000,
                    .dropout = 0.1f, .norm = NORM_PRE, .layernorm = LAYERNORM_STANDARD,
                    .layernorm_eps = 1e-6f, .tie_generator = false};
}
#line 116 "book/model.nw"
static void format_name(char name[TENSOR_NAME_MAX], const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void format_name(char name[TENSOR_NAME_MAX], const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int n = vsnprintf(name, TENSOR_NAME_MAX, format, arguments);
    va_end(arguments);
    ENSURE(n >= 0 && n < TENSOR_NAME_MAX, "tensor name too long: %s...", name);
}
#line 129 "book/model.nw"
static LinearViews add_linear(FlatBuffer *p, const char *prefix, int out, int in)
{
    char name[TENSOR_NAME_MAX];
    LinearViews views;
    format_name(name, "%s.weight", prefix);
    views.weight = flat_add(p, name, 2, (int[]){out, in});
    format_name(name, "%s.bias", prefix);
    views.bias = flat_add(p, name, 1, (int[]){out});
    return views;
}

static NormViews add_norm(FlatBuffer *p, const char *prefix, int d)
{
    char name[TENSOR_NAME_MAX];
    NormViews views;
    format_name(name, "%s.a_2", prefix);
    views.gain = flat_add(p, name, 1, (int[]){d});
    format_name(name, "%s.b_2", prefix);
    views.bias = flat_add(p, name, 1, (int[]){d});
    return views;
}

static AttentionViews add_attention(FlatBuffer *p, const char *prefix, int d)
{
    char name[TENSOR_NAME_MAX];
    AttentionViews views;
    for (int i = 0; i < 4; i++) {
        format_name(name, "%s.linears.%d", prefix, i);
        views.linears[i] = add_linear(p, name, d, d);
    }
    return views;
}

static FeedForwardViews add_feed_forward(FlatBuffer *p, const char *prefix, int d, int d_ff)
{
    char name[TENSOR_NAME_MAX];
    FeedForwardViews views;
    format_name(name, "%s.w_1", prefix);
    views.w_1 = add_linear(p, name, d_ff, d);
    format_name(name, "%s.w_2", prefix);
    views.w_2 = add_linear(p, name, d, d_ff);
    return views;
}
#line 175 "book/model.nw"
static void add_encoder_layer(Model *model, int l)
{
    FlatBuffer *p = &model->parameters;
    const Config *c = &model->config;
    EncoderLayerViews *layer = &model->encoder[l];
    char prefix[TENSOR_NAME_MAX];
    format_name(prefix, "encoder.layers.%d.self_attn", l);
    layer->self_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "encoder.layers.%d.feed_forward", l);
    layer->feed_forward = add_feed_forward(p, prefix, c->d_model, c->d_ff);
    for (int s = 0; s < 2; s++) {
        format_name(prefix, "encoder.layers.%d.sublayer.%d.norm", l, s);
        layer->norm[s] = add_norm(p, prefix, c->d_model);
    }
}

static void add_decoder_layer(Model *model, int l)
{
    FlatBuffer *p = &model->parameters;
    const Config *c = &model->config;
    DecoderLayerViews *layer = &model->decoder[l];
    char prefix[TENSOR_NAME_MAX];
    format_name(prefix, "decoder.layers.%d.self_attn", l);
    layer->self_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "decoder.layers.%d.src_attn", l);
    layer->src_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "decoder.layers.%d.feed_forward", l);
    layer->feed_forward = add_feed_forward(p, prefix, c->d_model, c->d_ff);
    for (int s = 0; s < 3; s++) {
        format_name(prefix, "decoder.layers.%d.sublayer.%d.norm", l, s);
        layer->norm[s] = add_norm(p, prefix, c->d_model);
    }
}
#line 214 "book/model.nw"
void model_init(Model *model, Config config)
{
    /* <<Check the configuration>> */
#line 252 "book/model.nw"
    if (config.src_vocab < 1 || config.tgt_vocab < 1 || config.layers < 1 || config.d_model < 2
        || config.d_ff < 1 || config.heads < 1 || config.max_len < 1)
        die("model configuration: every size must be positive");
    if (config.d_model % config.heads != 0 || config.d_model % 2 != 0)
        die("model configuration: d_model (%d) must be even and a multiple of heads (%d)",
            config.d_model, config.heads);
    if (!(config.dropout >= 0.0f && config.dropout < 1.0f))
        die("model configuration: dropout must be in [0, 1), not %g", config.dropout);
    if (!(config.layernorm_eps > 0.0f))
        die("model configuration: the layer norm's eps must be positive, not %g",
            config.layernorm_eps);
    if ((config.norm != NORM_PRE && config.norm != NORM_POST)
        || (config.layernorm != LAYERNORM_STANDARD && config.layernorm != LAYERNORM_ANNOTATED))
        die("model configuration: unknown norm placement or layer-norm formula");
#line 217 "book/model.nw"
    memset(model, 0, sizeof *model);
    model->config = config;
    FlatBuffer *p = &model->parameters;
    model->encoder = xmalloc((size_t)config.layers * sizeof *model->encoder);
    model->decoder = xmalloc((size_t)config.layers * sizeof *model->decoder);
    for (int l = 0; l < config.layers; l++) add_encoder_layer(model, l);
    model->encoder_norm = (NormViews){-1, -1};
    if (config.norm == NORM_PRE)
        model->encoder_norm = add_norm(p, "encoder.norm", config.d_model);
    for (int l = 0; l < config.layers; l++) add_decoder_layer(model, l);
    model->decoder_norm = (NormViews){-1, -1};
    if (config.norm == NORM_PRE)
        model->decoder_norm = add_norm(p, "decoder.norm", config.d_model);
    model->src_embedding = flat_add(p, "src_embed.0.lut.weight", 2,
                                    (int[]){config.src_vocab, config.d_model});
    model->tgt_embedding = flat_add(p, "tgt_embed.0.lut.weight", 2,
                                    (int[]){config.tgt_vocab, config.d_model});
    if (config.tie_generator) {
        model->generator.weight = model->tgt_embedding;
        model->generator.bias = flat_add(p, "generator.proj.bias", 1,
                                         (int[]){config.tgt_vocab});
    } else {
        model->generator = add_linear(p, "generator.proj", config.tgt_vocab, config.d_model);
    }
    flat_allocate(p);
    flat_allocate_like(&model->gradients, p);
    model->positional = xmalloc((size_t)config.max_len * config.d_model * sizeof(float));
    positional_encoding_table(model->positional, config.max_len, config.d_model);
}
#line 269 "book/model.nw"
float *model_parameter(const Model *model, int view)
{
    return flat_view(&model->parameters, view);
}

void model_free(Model *model)
{
    flat_free(&model->parameters);
    flat_free(&model->gradients);
    flat_free(&model->activations);
    free(model->encoder);
    free(model->decoder);
    free(model->positional);
    free(model->encoder_acts);
    free(model->decoder_acts);
    memset(model, 0, sizeof *model);
}
#line 311 "book/model.nw"
void model_initialize_parameters(Model *model, Rng *rng)
{
    const FlatBuffer *p = &model->parameters;
    for (int i = 0; i < p->count; i++) {
        const TensorView *view = &p->views[i];
        float *x = flat_view(p, i);
        const char *leaf = strrchr(view->name, '.') + 1;
        if (view->ndim == 2) {
            float a = sqrtf(6.0f / (float)(view->shape[0] + view->shape[1]));
            for (size_t j = 0; j < view->size; j++) x[j] = rng_uniform_between(rng, -a, a);
        } else if (strcmp(leaf, "a_2") == 0) {
            for (size_t j = 0; j < view->size; j++) x[j] = 1.0f;
        } else if (strcmp(leaf, "b_2") == 0) {
            memset(x, 0, view->size * sizeof *x);
        } else {   /* a linear layer's bias: its weight is the view before it */
            /* <<Draw a bias uniformly in plus or minus one over the square root of its fan-in>> */
#line 333 "book/model.nw"
            int fan_in = model->config.d_model;
            if (i > 0 && p->views[i - 1].ndim == 2) fan_in = p->views[i - 1].shape[1];
            float bound = 1.0f / sqrtf((float)fan_in);
            for (size_t j = 0; j < view->size; j++) x[j] = rng_uniform_between(rng, -bound, bound);
#line 327 "book/model.nw"
        }
    }
}
#line 343 "book/model.nw"
size_t model_parameter_count(const Model *model)
{
    size_t count = 0;
    for (int i = 0; i < model->parameters.count; i++)
        count += model->parameters.views[i].size;
    return count;
}
#line 438 "book/model.nw"
static int add_act(FlatBuffer *a, const char *prefix, const char *what, size_t rows,
                   int cols)
{
    char name[TENSOR_NAME_MAX];
    format_name(name, "%s.%s", prefix, what);
    ENSURE(rows > 0 && rows <= INT32_MAX, "activation %s has %zu rows", name, rows);
    return flat_add(a, name, 2, (int[]){(int)rows, cols});
}

/* rows_q, rows_k: query and key positions of the whole batch; len_k: the longest key
   sequence. A batch's weights [B][h][T_q][T_k] then fit in h * rows_q * len_k floats. */
static AttentionActs add_attention_acts(FlatBuffer *a, const char *prefix, size_t rows_q,
                                        size_t rows_k, int len_k, int d, int heads)
{
    AttentionActs acts;
    acts.q = add_act(a, prefix, "q", rows_q, d);
    acts.k = add_act(a, prefix, "k", rows_k, d);
    acts.v = add_act(a, prefix, "v", rows_k, d);
    acts.probs = add_act(a, prefix, "probs", (size_t)heads * rows_q, len_k);
    acts.probs_keep = add_act(a, prefix, "probs_keep", (size_t)heads * rows_q, len_k);
    acts.probs_dropped = add_act(a, prefix, "probs_dropped", (size_t)heads * rows_q, len_k);
    acts.context = add_act(a, prefix, "context", rows_q, d);
    return acts;
}

static SublayerActs add_sublayer_acts(FlatBuffer *a, const char *prefix, size_t rows, int d)
{
    SublayerActs acts;
    acts.normed = add_act(a, prefix, "normed", rows, d);
    acts.mean = add_act(a, prefix, "mean", rows, 1);
    acts.rstd = add_act(a, prefix, "rstd", rows, 1);
    acts.output = add_act(a, prefix, "output", rows, d);
    acts.keep = add_act(a, prefix, "keep", rows, d);
    acts.stream = add_act(a, prefix, "stream", rows, d);
    return acts;
}
#line 477 "book/model.nw"
void model_prepare(Model *model, int max_batch, int max_src_len, int max_tgt_len)
{
    model_prepare_tokens(model, max_batch, max_src_len, max_tgt_len,
                         max_batch * max_src_len, max_batch * max_tgt_len);
}

void model_prepare_tokens(Model *model, int max_batch, int max_src_len, int max_tgt_len,
                          int max_src_tokens, int max_tgt_tokens)
{
    const Config *c = &model->config;
    if (max_src_len > c->max_len || max_tgt_len > c->max_len)
        die("sequences of %d tokens exceed the model's max_len %d",
            max_src_len > max_tgt_len ? max_src_len : max_tgt_len, c->max_len);
    flat_free(&model->activations);
    free(model->encoder_acts);
    free(model->decoder_acts);
    FlatBuffer *a = &model->activations;
    const size_t src_rows = (size_t)max_src_tokens, tgt_rows = (size_t)max_tgt_tokens;
    const int d = c->d_model;
    char prefix[TENSOR_NAME_MAX];
    model->max_batch = max_batch;
    model->max_src_len = max_src_len;
    model->max_tgt_len = max_tgt_len;
    model->max_src_tokens = max_src_tokens, model->max_tgt_tokens = max_tgt_tokens;
    /* <<Lay out the encoder's activations>> */
#line 510 "book/model.nw"
    model->src_input = add_act(a, "src_embed", "output", src_rows, d);
    model->src_input_keep = add_act(a, "src_embed", "keep", src_rows, d);
    model->encoder_acts = xmalloc((size_t)c->layers * sizeof *model->encoder_acts);
    for (int l = 0; l < c->layers; l++) {
        EncoderActs *acts = &model->encoder_acts[l];
        format_name(prefix, "encoder.layers.%d.self_attn", l);
        acts->self_attn = add_attention_acts(a, prefix, src_rows, src_rows, max_src_len, d,
                                             c->heads);
        for (int s = 0; s < 2; s++) {
            format_name(prefix, "encoder.layers.%d.sublayer.%d", l, s);
            acts->sub[s] = add_sublayer_acts(a, prefix, src_rows, d);
        }
        format_name(prefix, "encoder.layers.%d.feed_forward", l);
        acts->hidden = add_act(a, prefix, "hidden", src_rows, c->d_ff);
        acts->hidden_keep = add_act(a, prefix, "hidden_keep", src_rows, c->d_ff);
    }
    model->memory = add_act(a, "encoder", "output", src_rows, d);
    model->memory_mean = add_act(a, "encoder", "mean", src_rows, 1);
    model->memory_rstd = add_act(a, "encoder", "rstd", src_rows, 1);
#line 502 "book/model.nw"
    /* <<Lay out the decoder's activations>> */
#line 532 "book/model.nw"
    model->tgt_input = add_act(a, "tgt_embed", "output", tgt_rows, d);
    model->tgt_input_keep = add_act(a, "tgt_embed", "keep", tgt_rows, d);
    model->decoder_acts = xmalloc((size_t)c->layers * sizeof *model->decoder_acts);
    for (int l = 0; l < c->layers; l++) {
        DecoderActs *acts = &model->decoder_acts[l];
        format_name(prefix, "decoder.layers.%d.self_attn", l);
        acts->self_attn = add_attention_acts(a, prefix, tgt_rows, tgt_rows, max_tgt_len, d,
                                             c->heads);
        format_name(prefix, "decoder.layers.%d.src_attn", l);
        acts->src_attn = add_attention_acts(a, prefix, tgt_rows, src_rows, max_src_len, d,
                                            c->heads);
        for (int s = 0; s < 3; s++) {
            format_name(prefix, "decoder.layers.%d.sublayer.%d", l, s);
            acts->sub[s] = add_sublayer_acts(a, prefix, tgt_rows, d);
        }
        format_name(prefix, "decoder.layers.%d.feed_forward", l);
        acts->hidden = add_act(a, prefix, "hidden", tgt_rows, c->d_ff);
        acts->hidden_keep = add_act(a, prefix, "hidden_keep", tgt_rows, c->d_ff);
    }
    model->decoded = add_act(a, "decoder", "output", tgt_rows, d);
    model->decoded_mean = add_act(a, "decoder", "mean", tgt_rows, 1);
    model->decoded_rstd = add_act(a, "decoder", "rstd", tgt_rows, 1);
#line 503 "book/model.nw"
    model->logprobs = add_act(a, "generator", "logprobs", tgt_rows, c->tgt_vocab);
    /* <<Lay out the scratch of the backward pass>> */
#line 863 "book/model.nw"
    const size_t rows = src_rows > tgt_rows ? src_rows : tgt_rows;
    const int longest = max_src_len > max_tgt_len ? max_src_len : max_tgt_len;
    model->d_stream = add_act(a, "grad", "stream", rows, d);
    model->d_normed = add_act(a, "grad", "normed", rows, d);
    model->d_output = add_act(a, "grad", "output", rows, d);
    model->d_memory = add_act(a, "grad", "memory", src_rows, d);
    model->d_hidden = add_act(a, "grad", "hidden", rows, c->d_ff);
    model->d_logits = add_act(a, "grad", "logits", tgt_rows, c->tgt_vocab);
    model->d_context = add_act(a, "grad", "context", rows, d);
    model->d_q = add_act(a, "grad", "q", rows, d);
    model->d_k = add_act(a, "grad", "k", rows, d);
    model->d_v = add_act(a, "grad", "v", rows, d);
    model->d_p = add_act(a, "grad", "p", (size_t)MAX_THREADS * longest, longest);  /* each its own */
#line 505 "book/model.nw"
    flat_allocate(a);
}
#line 557 "book/model.nw"
float *model_activation(const Model *model, int view)
{
    return flat_view(&model->activations, view);
}
/* <<Sublayer helpers>> */
#line 610 "book/model.nw"
static const float *sublayer_input(Model *model, const SublayerActs *acts, NormViews norm,
                                   const float *x, int rows)
{
    const Config *c = &model->config;
    if (c->norm == NORM_POST) return x;
    float *normed = model_activation(model, acts->normed);
    layernorm_forward(normed, model_activation(model, acts->mean),
                      model_activation(model, acts->rstd), x,
                      model_parameter(model, norm.gain), model_parameter(model, norm.bias),
                      rows, c->d_model, c->layernorm, c->layernorm_eps);
    return normed;
}

static const float *sublayer_output(Model *model, const SublayerActs *acts, NormViews norm,
                                    const float *x, int rows, Rng *rng)
{
    const Config *c = &model->config;
    const size_t size = (size_t)rows * c->d_model;
    float *output = model_activation(model, acts->output);
    float *stream = model_activation(model, acts->stream);
    if (rng) {
        float *keep = model_activation(model, acts->keep);
        dropout_mask(keep, size, c->dropout, rng);
        dropout_apply(output, keep, size);
    }
    float *sum = c->norm == NORM_PRE ? stream : model_activation(model, acts->normed);
    PARALLEL_FOR(size)
    for (size_t i = 0; i < size; i++) sum[i] = x[i] + output[i];
    if (c->norm == NORM_POST)
        layernorm_forward(stream, model_activation(model, acts->mean),
                          model_activation(model, acts->rstd), sum,
                          model_parameter(model, norm.gain),
                          model_parameter(model, norm.bias), rows, c->d_model, c->layernorm,
                          c->layernorm_eps);
    return stream;
}
#line 652 "book/model.nw"
static const float *maybe_dropout(Model *model, int view, size_t size, Rng *rng)
{
    if (rng == NULL) return NULL;
    float *keep = model_activation(model, view);
    dropout_mask(keep, size, model->config.dropout, rng);
    return keep;
}

static void attention_sublayer(Model *model, const AttentionActs *acts,
                               const AttentionViews *views, float *out,
                               const float *query_in, const float *memory_in,
                               const uint8_t *keep, size_t keep_batch_stride,
                               size_t keep_row_stride, int batch, int len_q, int len_k,
                               Rng *rng)
{
    const Config *c = &model->config;
    const float *weight[4], *bias[4];
    for (int i = 0; i < 4; i++) {
        weight[i] = model_parameter(model, views->linears[i].weight);
        bias[i] = model_parameter(model, views->linears[i].bias);
    }
    const float *probs_keep = maybe_dropout(model, acts->probs_keep,
                                            (size_t)batch * c->heads * len_q * len_k, rng);
    attention_forward(out, model_activation(model, acts->q),
                      model_activation(model, acts->k), model_activation(model, acts->v),
                      model_activation(model, acts->probs),
                      model_activation(model, acts->probs_dropped),
                      model_activation(model, acts->context), query_in, memory_in, keep,
                      keep_batch_stride, keep_row_stride, weight, bias, probs_keep, batch,
                      len_q, len_k, c->d_model, c->heads);
}

static void feed_forward_sublayer(Model *model, int hidden, int hidden_keep,
                                  const FeedForwardViews *views, float *out,
                                  const float *in, int rows, Rng *rng)
{
    const Config *c = &model->config;
    const float *keep = maybe_dropout(model, hidden_keep, (size_t)rows * c->d_ff, rng);
    feed_forward_forward(out, model_activation(model, hidden), in,
                         model_parameter(model, views->w_1.weight),
                         model_parameter(model, views->w_1.bias),
                         model_parameter(model, views->w_2.weight),
                         model_parameter(model, views->w_2.bias), keep, rows, c->d_model,
                         c->d_ff);
}
#line 703 "book/model.nw"
static const float *embed(Model *model, int table, int output, int keep_view,
                          const int *tokens, int vocab, int batch, int len, Rng *rng)
{
    const int d = model->config.d_model;
    float *x = model_activation(model, output);
    embedding_forward(x, tokens, model_parameter(model, table), batch * len, d, vocab);
    positional_encoding_forward(x, model->positional, batch, len, d);
    const float *keep = maybe_dropout(model, keep_view, (size_t)batch * len * d, rng);
    if (keep) dropout_apply(x, keep, (size_t)batch * len * d);
    return x;
}

/* The final norm of a pre-norm stack; a post-norm stack's output is already normalized. */
static const float *final_norm(Model *model, NormViews norm, int out, int mean, int rstd,
                               const float *x, int rows)
{
    const Config *c = &model->config;
    float *y = model_activation(model, out);
    if (c->norm == NORM_POST) {
        memcpy(y, x, (size_t)rows * c->d_model * sizeof *y);
        return y;
    }
    layernorm_forward(y, model_activation(model, mean), model_activation(model, rstd), x,
                      model_parameter(model, norm.gain), model_parameter(model, norm.bias),
                      rows, c->d_model, c->layernorm, c->layernorm_eps);
    return y;
}
#line 952 "book/model.nw"
static float *sublayer_backward_begin(Model *model, const SublayerActs *acts, NormViews norm,
                                      int rows)
{
    const Config *c = &model->config;
    const size_t size = (size_t)rows * c->d_model;
    float *d_stream = model_activation(model, model->d_stream);
    float *d_normed = model_activation(model, model->d_normed);
    float *d_output = model_activation(model, model->d_output);
    memset(d_normed, 0, size * sizeof *d_normed);
    if (c->norm == NORM_POST) {
        layernorm_backward(d_normed, model_gradient(model, norm.gain),
                           model_gradient(model, norm.bias), d_stream,
                           model_activation(model, acts->normed),
                           model_activation(model, acts->mean),
                           model_activation(model, acts->rstd),
                           model_parameter(model, norm.gain), rows, c->d_model,
                           c->layernorm, c->layernorm_eps);
        memcpy(d_stream, d_normed, size * sizeof *d_stream);
    }
    memcpy(d_output, d_stream, size * sizeof *d_output);
    if (model->dropout_on)
        dropout_apply(d_output, model_activation(model, acts->keep), size);
    return c->norm == NORM_PRE ? d_normed : d_stream;
}

static void sublayer_backward_end(Model *model, const SublayerActs *acts, NormViews norm,
                                  const float *x, int rows)
{
    const Config *c = &model->config;
    if (c->norm == NORM_POST) return;
    layernorm_backward(model_activation(model, model->d_stream),
                       model_gradient(model, norm.gain), model_gradient(model, norm.bias),
                       model_activation(model, model->d_normed), x,
                       model_activation(model, acts->mean),
                       model_activation(model, acts->rstd),
                       model_parameter(model, norm.gain), rows, c->d_model, c->layernorm,
                       c->layernorm_eps);
}

/* What F read in the forward pass: LN(x) for pre-norm, x itself for post-norm. */
static const float *sublayer_f_input(Model *model, const SublayerActs *acts, const float *x)
{
    return model->config.norm == NORM_PRE ? model_activation(model, acts->normed) : x;
}
#line 1002 "book/model.nw"
static void attention_sublayer_backward(Model *model, const AttentionActs *acts,
                                        const AttentionViews *views, float *d_query_in,
                                        float *d_memory_in, const float *query_in,
                                        const float *memory_in, int batch, int len_q,
                                        int len_k)
{
    const Config *c = &model->config;
    const float *weight[4];
    float *d_weight[4], *d_bias[4];
    for (int i = 0; i < 4; i++) {
        weight[i] = model_parameter(model, views->linears[i].weight);
        d_weight[i] = model_gradient(model, views->linears[i].weight);
        d_bias[i] = model_gradient(model, views->linears[i].bias);
    }
    const AttentionScratch scratch = {
        model_activation(model, model->d_context), model_activation(model, model->d_q),
        model_activation(model, model->d_k), model_activation(model, model->d_v),
        model_activation(model, model->d_p)};
    attention_backward(d_query_in, d_memory_in, d_weight, d_bias, &scratch,
                       model_activation(model, model->d_output),
                       model_activation(model, acts->q), model_activation(model, acts->k),
                       model_activation(model, acts->v),
                       model_activation(model, acts->probs),
                       model_activation(model, acts->probs_dropped),
                       model_activation(model, acts->context), query_in, memory_in, weight,
                       model->dropout_on ? model_activation(model, acts->probs_keep) : NULL,
                       batch, len_q, len_k, c->d_model, c->heads);
}

static void feed_forward_sublayer_backward(Model *model, int hidden, int hidden_keep,
                                           const FeedForwardViews *views, float *d_in,
                                           const float *in, int rows)
{
    const Config *c = &model->config;
    feed_forward_backward(d_in, model_gradient(model, views->w_1.weight),
                          model_gradient(model, views->w_1.bias),
                          model_gradient(model, views->w_2.weight),
                          model_gradient(model, views->w_2.bias),
                          model_activation(model, model->d_hidden),
                          model_activation(model, model->d_output), in,
                          model_activation(model, hidden),
                          model_parameter(model, views->w_1.weight),
                          model_parameter(model, views->w_2.weight),
                          model->dropout_on ? model_activation(model, hidden_keep) : NULL,
                          rows, c->d_model, c->d_ff);
}
#line 1055 "book/model.nw"
static void final_norm_backward(Model *model, NormViews norm, int mean, int rstd,
                                const float *x, const float *d_out, int rows)
{
    const Config *c = &model->config;
    float *d_stream = model_activation(model, model->d_stream);
    const size_t size = (size_t)rows * c->d_model;
    if (c->norm == NORM_POST) {
        memcpy(d_stream, d_out, size * sizeof *d_stream);
        return;
    }
    memset(d_stream, 0, size * sizeof *d_stream);
    layernorm_backward(d_stream, model_gradient(model, norm.gain),
                       model_gradient(model, norm.bias), d_out, x,
                       model_activation(model, mean), model_activation(model, rstd),
                       model_parameter(model, norm.gain), rows, c->d_model, c->layernorm,
                       c->layernorm_eps);
}

static void embed_backward(Model *model, int table, int keep, const int *tokens, int rows)
{
    const int d = model->config.d_model;
    float *d_stream = model_activation(model, model->d_stream);
    if (model->dropout_on)
        dropout_apply(d_stream, model_activation(model, keep), (size_t)rows * d);
    embedding_backward(model_gradient(model, table), d_stream, tokens, rows, d);
}
/* <<The encoder>> */
#line 736 "book/model.nw"
static const float *encode(Model *model, const int *src, const uint8_t *src_keep,
                           int batch, int src_len, Rng *rng)
{
    const Config *c = &model->config;
    const int rows = batch * src_len;
    const float *x = embed(model, model->src_embedding, model->src_input,
                           model->src_input_keep, src, c->src_vocab, batch, src_len, rng);
    for (int l = 0; l < c->layers; l++) {
        const EncoderLayerViews *views = &model->encoder[l];
        const EncoderActs *acts = &model->encoder_acts[l];
        const float *in = sublayer_input(model, &acts->sub[0], views->norm[0], x, rows);
        attention_sublayer(model, &acts->self_attn, &views->self_attn,
                           model_activation(model, acts->sub[0].output), in, in, src_keep,
                           (size_t)src_len, 0, batch, src_len, src_len, rng);
        x = sublayer_output(model, &acts->sub[0], views->norm[0], x, rows, rng);
        in = sublayer_input(model, &acts->sub[1], views->norm[1], x, rows);
        feed_forward_sublayer(model, acts->hidden, acts->hidden_keep, &views->feed_forward,
                              model_activation(model, acts->sub[1].output), in, rows, rng);
        x = sublayer_output(model, &acts->sub[1], views->norm[1], x, rows, rng);
    }
    return final_norm(model, model->encoder_norm, model->memory, model->memory_mean,
                      model->memory_rstd, x, rows);
}
/* <<The decoder>> */
#line 766 "book/model.nw"
static const float *decode(Model *model, const float *memory, const int *tgt,
                           const uint8_t *src_keep, const uint8_t *tgt_keep, int batch,
                           int src_len, int tgt_len, Rng *rng)
{
    const Config *c = &model->config;
    const int rows = batch * tgt_len;
    const float *x = embed(model, model->tgt_embedding, model->tgt_input,
                           model->tgt_input_keep, tgt, c->tgt_vocab, batch, tgt_len, rng);
    for (int l = 0; l < c->layers; l++) {
        const DecoderLayerViews *views = &model->decoder[l];
        const DecoderActs *acts = &model->decoder_acts[l];
        const float *in = sublayer_input(model, &acts->sub[0], views->norm[0], x, rows);
        attention_sublayer(model, &acts->self_attn, &views->self_attn,
                           model_activation(model, acts->sub[0].output), in, in, tgt_keep,
                           (size_t)tgt_len * tgt_len, (size_t)tgt_len, batch, tgt_len,
                           tgt_len, rng);
        x = sublayer_output(model, &acts->sub[0], views->norm[0], x, rows, rng);
        in = sublayer_input(model, &acts->sub[1], views->norm[1], x, rows);
        attention_sublayer(model, &acts->src_attn, &views->src_attn,
                           model_activation(model, acts->sub[1].output), in, memory,
                           src_keep, (size_t)src_len, 0, batch, tgt_len, src_len, rng);
        x = sublayer_output(model, &acts->sub[1], views->norm[1], x, rows, rng);
        in = sublayer_input(model, &acts->sub[2], views->norm[2], x, rows);
        feed_forward_sublayer(model, acts->hidden, acts->hidden_keep, &views->feed_forward,
                              model_activation(model, acts->sub[2].output), in, rows, rng);
        x = sublayer_output(model, &acts->sub[2], views->norm[2], x, rows, rng);
    }
    return final_norm(model, model->decoder_norm, model->decoded, model->decoded_mean,
                      model->decoded_rstd, x, rows);
}

#line 586 "book/model.nw"
const float *model_forward(Model *model, const int *src, const int *tgt,
                           const uint8_t *src_keep, const uint8_t *tgt_keep,
                           int batch, int src_len, int tgt_len, Rng *rng)
{
    ENSURE(batch <= model->max_batch && src_len <= model->max_src_len
           && tgt_len <= model->max_tgt_len && batch * src_len <= model->max_src_tokens
           && batch * tgt_len <= model->max_tgt_tokens,
           "batch %d x %d / %d exceeds the prepared size", batch, src_len, tgt_len);
    model->batch = batch, model->src_len = src_len, model->tgt_len = tgt_len;
    model->dropout_on = rng != NULL;
    const float *memory = encode(model, src, src_keep, batch, src_len, rng);
    const float *decoded = decode(model, memory, tgt, src_keep, tgt_keep, batch, src_len,
                                  tgt_len, rng);
    /* <<Project to the vocabulary and take the log-softmax>> */
#line 834 "book/model.nw"
    const Config *c = &model->config;
    float *logprobs = model_activation(model, model->logprobs);
    linear_forward(logprobs, decoded, model_parameter(model, model->generator.weight),
                   model_parameter(model, model->generator.bias), batch * tgt_len, c->d_model,
                   c->tgt_vocab);
    log_softmax_rows(logprobs, batch * tgt_len, c->tgt_vocab);
    return logprobs;
#line 600 "book/model.nw"
}
#line 817 "book/model.nw"
void log_softmax_rows(float *x, int rows, int cols)
{
    if (fast_kernels) { log_softmax_rows_fast(x, rows, cols); return; }   /* Chapter 19 */
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++) {
        float *x_r = x + (size_t)r * cols;
        float m = -INFINITY;
        for (int j = 0; j < cols; j++) m = x_r[j] > m ? x_r[j] : m;
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += exp((double)(x_r[j] - m));
        const float log_sum = (float)log(sum);
        for (int j = 0; j < cols; j++) x_r[j] = x_r[j] - m - log_sum;
    }
}
#line 899 "book/model.nw"
double nll_loss(float *d_logprobs, const float *logprobs, const int *targets, int rows,
                int vocab, int pad)
{
    double loss = 0.0;
    memset(d_logprobs, 0, (size_t)rows * vocab * sizeof *d_logprobs);
    for (int r = 0; r < rows; r++) {
        if (targets[r] == pad) continue;
        ENSURE(targets[r] >= 0 && targets[r] < vocab, "target %d of %d", targets[r], vocab);
        loss -= logprobs[(size_t)r * vocab + targets[r]];
        d_logprobs[(size_t)r * vocab + targets[r]] = -1.0f;
    }
    return loss;
}
#line 918 "book/model.nw"
void log_softmax_backward(float *d_x, const float *d_y, const float *y, int rows, int cols)
{
    if (fast_kernels) { log_softmax_backward_fast(d_x, d_y, y, rows, cols); return; }
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++) {
        const float *d_y_r = d_y + (size_t)r * cols, *y_r = y + (size_t)r * cols;
        float *d_x_r = d_x + (size_t)r * cols;
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += d_y_r[j];
        for (int j = 0; j < cols; j++) d_x_r[j] = d_y_r[j] - expf(y_r[j]) * (float)sum;
    }
}

void model_zero_gradients(Model *model)
{
    memset(model->gradients.data, 0, model->gradients.total * sizeof(float));
}

float *model_gradient(const Model *model, int view)
{
    return flat_view(&model->gradients, view);
}
#line 1084 "book/model.nw"
void model_backward(Model *model, const float *d_logprobs, const int *src, const int *tgt)
{
    const Config *c = &model->config;
    const int batch = model->batch, src_len = model->src_len, tgt_len = model->tgt_len;
    const int src_rows = batch * src_len, tgt_rows = batch * tgt_len;
    /* <<Back through the generator and the decoder's final norm>> */
#line 1098 "book/model.nw"
    float *d_logits = model_activation(model, model->d_logits);
    float *d_decoded = model_activation(model, model->d_output);
    log_softmax_backward(d_logits, d_logprobs, model_activation(model, model->logprobs),
                         tgt_rows, c->tgt_vocab);
    memset(d_decoded, 0, (size_t)tgt_rows * c->d_model * sizeof *d_decoded);
    linear_backward(d_decoded, model_gradient(model, model->generator.weight),
                    model_gradient(model, model->generator.bias), d_logits,
                    model_activation(model, model->decoded),
                    model_parameter(model, model->generator.weight), tgt_rows, c->d_model,
                    c->tgt_vocab);
    const int last_decoder_stream = model->decoder_acts[c->layers - 1].sub[2].stream;
    final_norm_backward(model, model->decoder_norm, model->decoded_mean, model->decoded_rstd,
                        model_activation(model, last_decoder_stream), d_decoded, tgt_rows);
    float *d_memory = model_activation(model, model->d_memory);
    memset(d_memory, 0, (size_t)src_rows * c->d_model * sizeof *d_memory);
#line 1090 "book/model.nw"
    /* <<Back through the decoder's layers>> */
#line 1120 "book/model.nw"
    const float *memory = model_activation(model, model->memory);
    for (int l = c->layers - 1; l >= 0; l--) {
        const DecoderLayerViews *views = &model->decoder[l];
        const DecoderActs *acts = &model->decoder_acts[l];
        const int input_view = l == 0 ? model->tgt_input
                                      : model->decoder_acts[l - 1].sub[2].stream;
        const float *layer_input = model_activation(model, input_view);
        const float *x2 = model_activation(model, acts->sub[1].stream);
        float *d_in = sublayer_backward_begin(model, &acts->sub[2], views->norm[2], tgt_rows);
        feed_forward_sublayer_backward(model, acts->hidden, acts->hidden_keep,
                                       &views->feed_forward, d_in,
                                       sublayer_f_input(model, &acts->sub[2], x2), tgt_rows);
        sublayer_backward_end(model, &acts->sub[2], views->norm[2], x2, tgt_rows);
        const float *x1 = model_activation(model, acts->sub[0].stream);
        d_in = sublayer_backward_begin(model, &acts->sub[1], views->norm[1], tgt_rows);
        attention_sublayer_backward(model, &acts->src_attn, &views->src_attn, d_in, d_memory,
                                    sublayer_f_input(model, &acts->sub[1], x1), memory, batch,
                                    tgt_len, src_len);
        sublayer_backward_end(model, &acts->sub[1], views->norm[1], x1, tgt_rows);
        d_in = sublayer_backward_begin(model, &acts->sub[0], views->norm[0], tgt_rows);
        const float *in = sublayer_f_input(model, &acts->sub[0], layer_input);
        attention_sublayer_backward(model, &acts->self_attn, &views->self_attn, d_in, d_in,
                                    in, in, batch, tgt_len, tgt_len);
        sublayer_backward_end(model, &acts->sub[0], views->norm[0], layer_input, tgt_rows);
    }
#line 1091 "book/model.nw"
    embed_backward(model, model->tgt_embedding, model->tgt_input_keep, tgt, tgt_rows);
    /* <<Back through the encoder>> */
#line 1148 "book/model.nw"
    const int last_encoder_stream = model->encoder_acts[c->layers - 1].sub[1].stream;
    final_norm_backward(model, model->encoder_norm, model->memory_mean, model->memory_rstd,
                        model_activation(model, last_encoder_stream), d_memory, src_rows);
    for (int l = c->layers - 1; l >= 0; l--) {
        const EncoderLayerViews *views = &model->encoder[l];
        const EncoderActs *acts = &model->encoder_acts[l];
        const int input_view = l == 0 ? model->src_input
                                      : model->encoder_acts[l - 1].sub[1].stream;
        const float *layer_input = model_activation(model, input_view);
        const float *x1 = model_activation(model, acts->sub[0].stream);
        float *d_in = sublayer_backward_begin(model, &acts->sub[1], views->norm[1], src_rows);
        feed_forward_sublayer_backward(model, acts->hidden, acts->hidden_keep,
                                       &views->feed_forward, d_in,
                                       sublayer_f_input(model, &acts->sub[1], x1), src_rows);
        sublayer_backward_end(model, &acts->sub[1], views->norm[1], x1, src_rows);
        d_in = sublayer_backward_begin(model, &acts->sub[0], views->norm[0], src_rows);
        const float *in = sublayer_f_input(model, &acts->sub[0], layer_input);
        attention_sublayer_backward(model, &acts->self_attn, &views->self_attn, d_in, d_in,
                                    in, in, batch, src_len, src_len);
        sublayer_backward_end(model, &acts->sub[0], views->norm[0], layer_input, src_rows);
    }
#line 1093 "book/model.nw"
    embed_backward(model, model->src_embedding, model->src_input_keep, src, src_rows);
}
#line 68 "book/fast.nw"
double training_step_flops(const Config *config, int batch, int src_len, int tgt_len)
{
    const double B = batch, S = src_len, T = tgt_len, d = config->d_model;
    const double d_ff = config->d_ff, V = config->tgt_vocab, n_S = B * S, n_T = B * T;
    const double encoder = 4 * 2 * n_S * d * d + 2 * 2 * B * S * S * d
                         + 2 * 2 * n_S * d * d_ff;
    const double decoder = 4 * 2 * n_T * d * d + 2 * 2 * B * T * T * d
                         + (2 * 2 * n_T * d * d + 2 * 2 * n_S * d * d + 2 * 2 * B * T * S * d)
                         + 2 * 2 * n_T * d * d_ff;
    return 3 * (config->layers * (encoder + decoder) + 2 * n_T * d * V);
}
#line 647 "book/fast.nw"
void dropout_mask_parallel(float *keep_scale, size_t n, float p, Rng *rng)
{
    const float scale = 1.0f / (1.0f - p);
    const uint32_t threshold = (uint32_t)ceilf(p * 0x1p24f);   /* exact: p < 1 */
    PARALLEL_FOR(n)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const size_t first = n * block / PARALLEL_BLOCKS;
        const size_t end = n * (block + 1) / PARALLEL_BLOCKS;
        Rng stream = *rng;
        rng_advance(&stream, first);
        for (size_t i = first; i < end; i++)
            keep_scale[i] = rng_next(&stream) >> 8 < threshold ? 0.0f : scale;
    }
    rng_advance(rng, n);
}
#line 679 "book/fast.nw"
void masked_softmax_rows(float *p, const uint8_t *keep, size_t keep_row_stride, int rows,
                         int cols)
{
    for (int i = 0; i < rows; i++) {
        const uint8_t *keep_i = keep + (size_t)i * keep_row_stride;
        float *p_i = p + (size_t)i * cols;
        float m = -INFINITY;
        for (int j = 0; j < cols; j++)
            if (keep_i[j] && p_i[j] > m) m = p_i[j];
        if (m == -INFINITY) { memset(p_i, 0, (size_t)cols * sizeof *p_i); continue; }
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) sum += (p_i[j] = keep_i[j] ? expf(p_i[j] - m) : 0.0f);
        for (int j = 0; j < cols; j++) p_i[j] /= sum;
    }
}
#line 710 "book/fast.nw"
void row_moments(const float *x, int d, double *mean, double *squares)
{
    double sum = 0.0, sum_of_squares = 0.0;
    for (int i = 0; i < d; i++) {
        sum += x[i];
        sum_of_squares += (double)x[i] * x[i];
    }
    *mean = sum / d;
    *squares = fmax(sum_of_squares - sum * *mean, 0.0);
}
#line 782 "book/fast.nw"
void log_softmax_rows_fast(float *x, int rows, int cols)
{
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++) {
        float *x_r = x + (size_t)r * cols;
        float m = -INFINITY;
        double sum = 0.0;
        #pragma omp simd reduction(max : m)
        for (int j = 0; j < cols; j++) m = x_r[j] > m ? x_r[j] : m;
        #pragma omp simd reduction(+ : sum)
        for (int j = 0; j < cols; j++) sum += vector_expf(x_r[j] - m);
        const float log_sum = (float)log(sum);   /* x - m first: m may be large */
        #pragma omp simd
        for (int j = 0; j < cols; j++) x_r[j] = x_r[j] - m - log_sum;
    }
}

void log_softmax_backward_fast(float *d_x, const float *d_y, const float *y, int rows,
                               int cols)
{
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++) {
        const float *d_y_r = d_y + (size_t)r * cols, *y_r = y + (size_t)r * cols;
        float *d_x_r = d_x + (size_t)r * cols;
        double sum = 0.0;
        #pragma omp simd reduction(+ : sum)
        for (int j = 0; j < cols; j++) sum += d_y_r[j];
        const float total = (float)sum;
        #pragma omp simd
        for (int j = 0; j < cols; j++) d_x_r[j] = d_y_r[j] - vector_expf(y_r[j]) * total;
    }
}
