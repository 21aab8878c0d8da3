/* The layers of the Transformer, forward and backward, with no knowledge of the model
   that assembles them -- generated from the book's chapters by notangle: edit the book,
   not this file. */
#include "layers.h"
/* <<layers.c includes>> */
#include <string.h>

#ifndef TRANSFORMER_BROWSER
#include <immintrin.h>
#endif

/* <<layers.c definitions>> */
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

void embedding_forward(float *out, const int *tokens, const float *table,
                       int n, int d_model, int vocab, float scale)
{
    PARALLEL_FOR((size_t)n * d_model)
    for (int p = 0; p < n; p++) {
        ENSURE(tokens[p] >= 0 && tokens[p] < vocab, "token %d of %d", tokens[p], vocab);
        const float *row = table + (size_t)tokens[p] * d_model;
        float *out_p = out + (size_t)p * d_model;
        for (int i = 0; i < d_model; i++) out_p[i] = scale * row[i];
    }
}

void embedding_backward(float *d_table, const float *d_out, const int *tokens, int n,
                        int d_model, float scale)
{
    for (int p = 0; p < n; p++) {
        float *row = d_table + (size_t)tokens[p] * d_model;
        const float *d_out_p = d_out + (size_t)p * d_model;
        for (int i = 0; i < d_model; i++) row[i] += scale * d_out_p[i];
    }
}

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

void positional_encoding_forward(float *x, const float *table, int batch, int len,
                                 int d_model)
{
    PARALLEL_FOR((size_t)batch * len * d_model)
    for (int b = 0; b < batch; b++)
        for (size_t pi = 0; pi < (size_t)len * d_model; pi++)
            x[(size_t)b * len * d_model + pi] += table[pi];
}

void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int n, int in_features, int out_features)
{
    PARALLEL_FOR((size_t)n * out_features)
    for (int r = 0; r < n; r++)
        memcpy(out + (size_t)r * out_features, bias, (size_t)out_features * sizeof *out);
    matmul(n, out_features, in_features, 1.0f, matrix(in, in_features),
           transposed(weight, in_features), 1.0f, out, out_features);
}

void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int n, int in_features,
                     int out_features)
{
    bf16_operand_hold(d_out, n, out_features);
    if (d_in)
        matmul(n, in_features, out_features, 1.0f, matrix(d_out, out_features),
               matrix(weight, in_features), 1.0f, d_in, in_features);
    matmul(out_features, in_features, n, 1.0f, transposed(d_out, out_features),
           matrix(in, in_features), 1.0f, d_weight, in_features);
    bf16_operand_release(d_out);
    if (d_bias) add_column_sums(d_bias, d_out, n, out_features);
}

enum { COLUMN_SUM_WIDTH = 64 };   /* sums held at once: 4 AVX-512 registers, 16 SSE ones */

void add_column_sums(float *sums, const float *x, int rows, int cols)
{
    PARALLEL_FOR((size_t)rows * cols)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const int end = block_start(block + 1, cols);
        for (int first = block_start(block, cols); first < end; first += COLUMN_SUM_WIDTH) {
            const int width = end - first < COLUMN_SUM_WIDTH ? end - first : COLUMN_SUM_WIDTH;
            float partial[COLUMN_SUM_WIDTH];
            memcpy(partial, sums + first, (size_t)width * sizeof *partial);
            for (int r = 0; r < rows; r++) {
                const float *x_r = x + (size_t)r * cols + first;
                for (int c = 0; c < width; c++) partial[c] += x_r[c];
            }
            memcpy(sums + first, partial, (size_t)width * sizeof *partial);
        }
    }
}

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

void attention_forward(float *out, const AttentionWeights *w, const AttentionSaved *saved,
                       const float *query_in, const float *memory_in, const Mask *mask,
                       const AttentionShape *shape)
{
    const int batch = shape->batch, len_q = shape->len_q, len_k = shape->len_k;
    const int d_model = shape->d_model, heads = shape->heads;
    ENSURE(heads > 0 && d_model % heads == 0, "d_model %d, heads %d", d_model, heads);
    const int d_k = d_model / heads;
    float *q = saved->q, *k = saved->k, *v = saved->v, *probs = saved->probs;
    /* <<Hold the inputs, which two or three products read>> */
    bf16_operand_hold(query_in, batch * len_q, d_model);
    bf16_operand_hold(memory_in, batch * len_k, d_model);
    linear_forward(q, query_in, w->w_q, w->b_q, batch * len_q, d_model, d_model);
    linear_forward(k, memory_in, w->w_k, w->b_k, batch * len_k, d_model, d_model);
    linear_forward(v, memory_in, w->w_v, w->b_v, batch * len_k, d_model, d_model);
    bf16_operand_release(memory_in), bf16_operand_release(query_in);
    PARALLEL_FOR((size_t)batch * heads * len_q * len_k * d_k)
    for (int head_of_batch = 0; head_of_batch < batch * heads; head_of_batch++) {
        const int b = head_of_batch / heads, a = head_of_batch % heads;
        /* <<Attend with head a of sequence b>> */
        const size_t q_offset = (size_t)b * len_q * d_model + (size_t)a * d_k;
        const size_t k_offset = (size_t)b * len_k * d_model + (size_t)a * d_k;
        float *p = probs + ((size_t)b * heads + a) * len_q * len_k;
        const float scale = shape->unscaled ? 1.0f : 1.0f / sqrtf((float)d_k);
        matmul(len_q, len_k, d_k, scale, matrix(q + q_offset, d_model),
               transposed(k + k_offset, d_model), 0.0f, p, len_k);
        const uint8_t *keep = mask->keep + (size_t)b * mask->batch_stride;
        layer_kernels[compute.kernel_set].masked_softmax(p, keep, mask->row_stride, len_q, len_k);
        const float *weights = p;
        if (saved->probs_keep) {   /* keep p itself: the softmax's backward needs it */
            const size_t head = ((size_t)b * heads + a) * len_q * len_k;
            float *dropped = saved->probs_dropped + head;
            for (size_t i = 0; i < (size_t)len_q * len_k; i++)
                dropped[i] = p[i] * saved->probs_keep[head + i];
            weights = dropped;
        }
        matmul(len_q, d_k, len_k, 1.0f, matrix(weights, len_k), matrix(v + k_offset, d_model), 0.0f,
               saved->context + q_offset, d_model);
    }
    linear_forward(out, saved->context, w->w_o, w->b_o, batch * len_q, d_model, d_model);
}

void masked_softmax_rows(float *p, const uint8_t *keep, size_t keep_row_stride, int rows,
                         int cols)
{
    mask_scores(p, keep, keep_row_stride, rows, cols);
    softmax_rows(p, p, rows, cols);
}

void attention_backward(float *d_query_in, float *d_memory_in, const AttentionWeights *d_w,
                        const AttentionScratch *scratch, const float *d_out,
                        const AttentionWeights *w, const AttentionSaved *saved,
                        const float *query_in, const float *memory_in,
                        const AttentionShape *shape)
{
    const int batch = shape->batch, len_q = shape->len_q, len_k = shape->len_k;
    const int d_model = shape->d_model, heads = shape->heads;
    const int d_k = d_model / heads;
    const size_t q_size = (size_t)batch * len_q * d_model;
    const size_t k_size = (size_t)batch * len_k * d_model;
    memset(scratch->d_context, 0, q_size * sizeof(float));
    memset(scratch->d_q, 0, q_size * sizeof(float));
    memset(scratch->d_k, 0, k_size * sizeof(float));
    memset(scratch->d_v, 0, k_size * sizeof(float));
    linear_backward(scratch->d_context, d_w->w_o, d_w->b_o, d_out, saved->context, w->w_o,
                    batch * len_q, d_model, d_model);
    PARALLEL_FOR((size_t)batch * heads * len_q * len_k * d_k)
    for (int head_of_batch = 0; head_of_batch < batch * heads; head_of_batch++) {
        const int b = head_of_batch / heads, a = head_of_batch % heads;
        /* <<Carry the gradient back through head a of sequence b>> */
        const size_t q_offset = (size_t)b * len_q * d_model + (size_t)a * d_k;
        const size_t k_offset = (size_t)b * len_k * d_model + (size_t)a * d_k;
        const size_t head = ((size_t)b * heads + a) * len_q * len_k;
        const float *probs = saved->probs + head;
        const float *weights = saved->probs_keep ? saved->probs_dropped + head : probs;
        float *d_p = scratch->d_p + (size_t)omp_get_thread_num() * len_q * len_k;   /* its own */
        matmul(len_q, len_k, d_k, 1.0f, matrix(scratch->d_context + q_offset, d_model),
               transposed(saved->v + k_offset, d_model), 0.0f, d_p, len_k);
        matmul(len_k, d_k, len_q, 1.0f, transposed(weights, len_k),
               matrix(scratch->d_context + q_offset, d_model), 1.0f, scratch->d_v + k_offset, d_model);
        if (saved->probs_keep)
            dropout_apply(d_p, saved->probs_keep + head, (size_t)len_q * len_k);
        softmax_rows_backward(d_p, d_p, probs, len_q, len_k);
        const float scale = shape->unscaled ? 1.0f : 1.0f / sqrtf((float)d_k);
        matmul(len_q, d_k, len_k, scale, matrix(d_p, len_k), matrix(saved->k + k_offset, d_model), 1.0f,
               scratch->d_q + q_offset, d_model);
        matmul(len_k, d_k, len_q, scale, transposed(d_p, len_k), matrix(saved->q + q_offset, d_model),
               1.0f, scratch->d_k + k_offset, d_model);
    }
    /* <<Hold the inputs, which two or three products read>> */
    bf16_operand_hold(query_in, batch * len_q, d_model);
    bf16_operand_hold(memory_in, batch * len_k, d_model);
    linear_backward(d_query_in, d_w->w_q, d_w->b_q, scratch->d_q, query_in, w->w_q,
                    batch * len_q, d_model, d_model);
    linear_backward(d_memory_in, d_w->w_k, d_w->b_k, scratch->d_k, memory_in, w->w_k,
                    batch * len_k, d_model, d_model);
    linear_backward(d_memory_in, d_w->w_v, d_w->b_v, scratch->d_v, memory_in, w->w_v,
                    batch * len_k, d_model, d_model);
    bf16_operand_release(memory_in), bf16_operand_release(query_in);
}

void dropout_mask(float *keep_scale, size_t n, float p, Rng *rng)
{
    ENSURE(p >= 0.0f && p < 1.0f, "dropout probability %g", p);
    const float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++) keep_scale[i] = rng_uniform(rng) < p ? 0.0f : scale;
}

void dropout_apply(float *x, const float *keep_scale, size_t n)
{
    PARALLEL_FOR(n)
    for (size_t i = 0; i < n; i++) x[i] *= keep_scale[i];
}

void row_moments(const float *x, int d, double *mean, double *squares)
{
    double sum = 0.0, deviations = 0.0;
    for (int i = 0; i < d; i++) sum += x[i];
    const double mu = sum / d;
    for (int i = 0; i < d; i++) deviations += (x[i] - mu) * (x[i] - mu);
    *mean = mu, *squares = deviations;
}

void layernorm_forward(float *out, const LayerNormWeights *w, const LayerNormSaved *saved,
                       const float *in, int n, int d, LayerNormFormula formula, float eps)
{
    const float *gain = w->gain, *bias = w->bias;
    float *mean = saved->mean, *rstd = saved->rstd;
    ENSURE(d > 1, "layer norm over %d values", d);
    PARALLEL_FOR((size_t)n * d)
    for (int r = 0; r < n; r++) {
        const float *x = in + (size_t)r * d;
        float *y = out + (size_t)r * d;
        double mu, squares;
        layer_kernels[compute.kernel_set].row_moments(x, d, &mu, &squares);
        const double r_factor = formula == LAYERNORM_STANDARD
                                    ? 1.0 / sqrt(squares / d + eps)
                                    : 1.0 / (sqrt(squares / (d - 1)) + eps);
        for (int i = 0; i < d; i++)
            y[i] = (float)(gain[i] * (x[i] - mu) * r_factor + bias[i]);
        mean[r] = (float)mu;
        rstd[r] = (float)r_factor;
    }
}

void layernorm_backward(float *d_in, const LayerNormWeights *d_w, const float *d_out,
                        const LayerNormWeights *w, const LayerNormSaved *saved,
                        const float *in, int n, int d, LayerNormFormula formula, float eps)
{
    float *d_gain = d_w->gain, *d_bias = d_w->bias;
    const float *gain = w->gain, *mean = saved->mean, *rstd = saved->rstd;
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
        /* <<Find dr_per_c, the derivative of the factor over c_i>> */
        double dr_per_c;
        if (formula == LAYERNORM_STANDARD) {
            dr_per_c = -factor * factor * factor / d;
        } else {
            const double s = 1.0 / factor - eps;
            dr_per_c = s > 0.0 ? -factor * factor / ((d - 1) * s) : 0.0;
        }
        for (int i = 0; i < d; i++) {
            const double c = x[i] - mu;
            dx[i] += (float)(factor * ((double)gain[i] * dy[i] - g_sum / d)
                             + gc_sum * dr_per_c * c);
        }
    }
    /* <<Add the gain's and the bias's gradients, row after row>> */
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
}

void feed_forward_forward(float *out, const FeedForwardWeights *w,
                          const FeedForwardSaved *saved, const float *in, int n,
                          int d_model, int d_ff)
{
    float *hidden = saved->hidden;
    matmul(n, d_ff, d_model, 1.0f, matrix(in, d_model), transposed(w->w_1, d_model), 0.0f,
           hidden, d_ff);
    /* <<Add the bias, apply the ReLU and the dropout, in one pass>> */
    const float *keep = saved->hidden_keep, *bias = w->b_1;
    PARALLEL_FOR((size_t)n * d_ff)
    for (int r = 0; r < n; r++) {
        float *h = hidden + (size_t)r * d_ff;
        const float *m = keep ? keep + (size_t)r * d_ff : NULL;
        if (m)
            for (int j = 0; j < d_ff; j++) {
                const float z = h[j] + bias[j];
                h[j] = (z < 0.0f ? 0.0f : z) * m[j];
            }
        else
            for (int j = 0; j < d_ff; j++) {
                const float z = h[j] + bias[j];
                h[j] = z < 0.0f ? 0.0f : z;
            }
    }
    linear_forward(out, hidden, w->w_2, w->b_2, n, d_ff, d_model);
}

void feed_forward_backward(float *d_in, const FeedForwardWeights *d_w, float *d_hidden,
                           const float *d_out, const FeedForwardWeights *w,
                           const FeedForwardSaved *saved, const float *in, int n,
                           int d_model, int d_ff)
{
    const float *hidden = saved->hidden, *keep = saved->hidden_keep;
    bf16_operand_hold(d_out, n, d_model);   /* read by the next two products */
    matmul(n, d_ff, d_model, 1.0f, matrix(d_out, d_model), matrix(w->w_2, d_ff), 0.0f,
           d_hidden, d_ff);
    linear_backward(NULL, d_w->w_2, d_w->b_2, d_out, hidden, w->w_2, n, d_ff, d_model);
    bf16_operand_release(d_out);
    /* <<Mask the hidden layer's gradient and sum the first bias's, in one pass>> */
    float *d_bias = d_w->b_1;
    PARALLEL_FOR((size_t)n * d_ff)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const int end = block_start(block + 1, d_ff);
        for (int first = block_start(block, d_ff); first < end; first += COLUMN_SUM_WIDTH) {
            const int width = end - first < COLUMN_SUM_WIDTH ? end - first : COLUMN_SUM_WIDTH;
            float partial[COLUMN_SUM_WIDTH];
            memcpy(partial, d_bias + first, (size_t)width * sizeof *partial);
            for (int r = 0; r < n; r++) {
                const size_t at = (size_t)r * d_ff + first;
                float *restrict g = d_hidden + at;
                const float *restrict h = hidden + at, *restrict m = keep ? keep + at : NULL;
                if (m)
                    for (int j = 0; j < width; j++) {
                        const float kept = g[j] * m[j];   /* read unconditionally: vectorizes */
                        g[j] = h[j] > 0.0f ? kept : 0.0f;
                        partial[j] += g[j];
                    }
                else
                    for (int j = 0; j < width; j++) {
                        g[j] = h[j] > 0.0f ? g[j] : 0.0f;
                        partial[j] += g[j];
                    }
            }
            memcpy(d_bias + first, partial, (size_t)width * sizeof *partial);
        }
    }
    linear_backward(d_in, d_w->w_1, NULL, d_hidden, in, w->w_1, n, d_model, d_ff);
}

void log_softmax_rows(float *x, int rows, int cols)
{
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

void log_softmax_backward(float *d_x, const float *d_y, const float *y, int rows, int cols)
{
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++) {
        const float *d_y_r = d_y + (size_t)r * cols, *y_r = y + (size_t)r * cols;
        float *d_x_r = d_x + (size_t)r * cols;
        double sum = 0.0;
        for (int j = 0; j < cols; j++) sum += d_y_r[j];
        for (int j = 0; j < cols; j++) d_x_r[j] = d_y_r[j] - expf(y_r[j]) * (float)sum;
    }
}

const LayerKernels layer_kernels[KERNEL_SETS] = {
    [KERNELS_FAST] = {
        .masked_softmax = masked_softmax_rows_fast,
        .dropout_mask = dropout_mask_parallel,
        .row_moments = row_moments_fast,
        .log_softmax = log_softmax_rows_fast,
        .log_softmax_backward = log_softmax_backward_fast,
    },
    [KERNELS_REFERENCE] = {
        .masked_softmax = masked_softmax_rows,
        .dropout_mask = dropout_mask,
        .row_moments = row_moments,
        .log_softmax = log_softmax_rows,
        .log_softmax_backward = log_softmax_backward,
    },
};

#ifndef TRANSFORMER_BROWSER
enum { DROPOUT_LANES = 16 };

/* keep_scale[first..end) as dropout_mask draws them, from stream standing at draw first:
   16 copies of the generator in the lanes of two AVX-512 registers. */
__attribute__((target("avx512f,avx512dq,avx512vl")))
static void dropout_mask_block_avx512(float *keep_scale, size_t first, size_t end,
                                      Rng stream, uint32_t threshold, float scale)
{
    uint64_t start[DROPOUT_LANES], multiplier = 1;
    Rng lane = stream, zero = {0, stream.increment};
    for (int j = 0; j < DROPOUT_LANES; j++) {
        start[j] = lane.state;
        rng_advance(&lane, 1);
        multiplier *= 6364136223846793005ULL;
    }
    rng_advance(&zero, DROPOUT_LANES);
    __m512i state[2] = {_mm512_loadu_si512(start), _mm512_loadu_si512(start + 8)};
    const __m512i a = _mm512_set1_epi64((long long)multiplier);
    const __m512i c = _mm512_set1_epi64((long long)zero.state);
    const __m256i limit = _mm256_set1_epi32((int)threshold);
    const __m256 keep = _mm256_set1_ps(scale), drop = _mm256_setzero_ps();
    size_t i = first;
    for (; i + DROPOUT_LANES <= end; i += DROPOUT_LANES)
        for (int half = 0; half < 2; half++) {
            const __m512i old = state[half];
            const __m256i xorshifted = _mm512_cvtepi64_epi32(
                _mm512_srli_epi64(_mm512_xor_si512(_mm512_srli_epi64(old, 18), old), 27));
            const __m256i rotation = _mm512_cvtepi64_epi32(_mm512_srli_epi64(old, 59));
            const __m256i draw = _mm256_rorv_epi32(xorshifted, rotation);
            const __mmask8 dropped = _mm256_cmplt_epu32_mask(_mm256_srli_epi32(draw, 8), limit);
            _mm256_storeu_ps(keep_scale + i + 8 * half, _mm256_mask_blend_ps(dropped, keep, drop));
            state[half] = _mm512_add_epi64(_mm512_mullo_epi64(old, a), c);
        }
    _mm512_storeu_si512(start, state[0]);
    Rng rest = {start[0], stream.increment};   /* lane 0 stands at draw i */
    for (; i < end; i++) keep_scale[i] = rng_next(&rest) >> 8 < threshold ? 0.0f : scale;
}
#endif

void dropout_mask_parallel(float *keep_scale, size_t n, float p, Rng *rng)
{
    ENSURE(p >= 0.0f && p < 1.0f, "dropout probability %g", p);
    const float scale = 1.0f / (1.0f - p);
    const uint32_t threshold = (uint32_t)ceilf(p * 0x1p24f);   /* exact: p < 1 */
#ifndef TRANSFORMER_BROWSER
    const bool avx512 = __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    PARALLEL_FOR(n)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const size_t first = n * block / PARALLEL_BLOCKS;
        const size_t end = n * (block + 1) / PARALLEL_BLOCKS;
        Rng stream = *rng;
        rng_advance(&stream, first);
#ifndef TRANSFORMER_BROWSER
        if (avx512) {
            dropout_mask_block_avx512(keep_scale, first, end, stream, threshold, scale);
            continue;
        }
#endif
        for (size_t i = first; i < end; i++)
            keep_scale[i] = rng_next(&stream) >> 8 < threshold ? 0.0f : scale;
    }
    rng_advance(rng, n);
}

void masked_softmax_rows_fast(float *p, const uint8_t *keep, size_t keep_row_stride,
                              int rows, int cols)
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

void row_moments_fast(const float *x, int d, double *mean, double *squares)
{
    double sum = 0.0, sum_of_squares = 0.0;
    for (int i = 0; i < d; i++) {
        sum += x[i];
        sum_of_squares += (double)x[i] * x[i];
    }
    *mean = sum / d;
    *squares = fmax(sum_of_squares - sum * *mean, 0.0);
}

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
