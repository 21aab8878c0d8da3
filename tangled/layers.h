/* The Transformer's layers: masked scores, embeddings, attention, layer norm,
   feed-forward, the log-softmax and the loss, each a forward function and its backward,
   and their faster twins of the speed chapter.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef LAYERS_H
#define LAYERS_H
#include <math.h>
#include "tensor.h"

/* <<layers.h declarations>> */
/* The score of a masked position: its softmax weight is exactly 0. */
#define MASKED_SCORE (-INFINITY)

/* scores[i][j] = MASKED_SCORE where keep[i * keep_row_stride + j] == 0;
   scores: [rows][cols]. keep_row_stride is cols for a full mask, 0 for one row
   broadcast to every query. */
void mask_scores(float *scores, const uint8_t *keep, size_t keep_row_stride,
                 int rows, int cols);

/* out[p][i] = scale * table[tokens[p]][i], scale being sqrt(d_model) in the model;
   out: [n][d_model], tokens: [n], table: [vocab][d_model]. */
void embedding_forward(float *out, const int *tokens, const float *table,
                       int n, int d_model, int vocab, float scale);

/* d_table[tokens[p]] += scale * d_out[p], with the forward's scale; d_table:
   [vocab][d_model], d_out: [n][d_model], tokens: [n]. */
void embedding_backward(float *d_table, const float *d_out, const int *tokens, int n,
                        int d_model, float scale);

/* table[p][2i] = sin(p w_i), table[p][2i+1] = cos(p w_i), w_i = 10000^(-2i/d_model);
   table: [max_len][d_model], d_model even. */
void positional_encoding_table(float *table, int max_len, int d_model);

/* x[b][p][i] += table[p][i]; x: [batch][len][d_model], table: [>= len][d_model]. */
void positional_encoding_forward(float *x, const float *table, int batch, int len,
                                 int d_model);

/* out[r] = in[r] weight^T + bias; out: [n][out_features], in: [n][in_features],
   weight: [out_features][in_features], bias: [out_features]. */
void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int n, int in_features, int out_features);

/* d_in += d_out weight; d_weight += d_out^T in; d_bias += sum of the rows of d_out.
   d_in, in: [n][in_features] (d_in may be NULL), d_out: [n][out_features],
   weight, d_weight: [out_features][in_features], d_bias: [out_features] (may be NULL). */
void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int n, int in_features,
                     int out_features);
/* sums[c] += x[0][c] + x[1][c] + ... + x[rows-1][c], added in that order;
   sums: [cols], x: [rows][cols]. */
void add_column_sums(float *sums, const float *x, int rows, int cols);

/* p[i] = softmax(s[i]) for each row; -INFINITY entries get weight 0, and a row that is
   all -INFINITY gets all zeros. p, s: [rows][cols]; p may be s. */
void softmax_rows(float *p, const float *s, int rows, int cols);

/* ds[i][k] = p[i][k] * (dp[i][k] - sum_j p[i][j] dp[i][j]); ds, dp, p: [rows][cols];
   ds may be dp. */
void softmax_rows_backward(float *ds, const float *dp, const float *p, int rows, int cols);

/* The four linear layers of an attention, the reference's linears.0 to linears.3 (query,
   key, value, output): w_q, w_k, w_v, w_o: [d][d]; b_q, b_k, b_v, b_o: [d]. The same
   structure names their gradients. */
typedef struct { float *w_q, *b_q, *w_k, *b_k, *w_v, *b_v, *w_o, *b_o; } AttentionWeights;

/* What the forward pass saves for the backward pass: q: [B][Tq][d]; k, v: [B][Tk][d];
   probs: [B][heads][Tq][Tk], the weights before dropout; context: [B][Tq][d], the heads
   side by side. probs_keep: the weights' dropout pattern [B][heads][Tq][Tk], NULL for
   none; with it, probs_dropped (same shape) receives the weights after dropout. */
typedef struct {
    float *q, *k, *v, *probs, *probs_dropped, *context;
    const float *probs_keep;
} AttentionSaved;

/* Keep flags of a batch: flag (b,i,j) at keep[b * batch_stride + i * row_stride + j]. */
typedef struct { const uint8_t *keep; size_t batch_stride, row_stride; } Mask;

/* B = batch sequences of Tq = len_q queries over Tk = len_k keys, d = d_model wide;
   unscaled: scores without the 1/sqrt(d_k) (the --no-scale experiment). */
typedef struct { int batch, len_q, len_k, d_model, heads; bool unscaled; } AttentionShape;

/* Multi-head attention of query_in: [B][Tq][d] over memory_in: [B][Tk][d] (the same tensor
   for self-attention) under mask, into out: [B][Tq][d]; fills saved's arrays. */
void attention_forward(float *out, const AttentionWeights *w, const AttentionSaved *saved,
                       const float *query_in, const float *memory_in, const Mask *mask,
                       const AttentionShape *shape);

/* p[i] = softmax(p[i]) after mask_scores with keep, in place; p: [rows][cols] scores in,
   weights out; keep as in mask_scores. */
void masked_softmax_rows(float *p, const uint8_t *keep, size_t keep_row_stride, int rows,
                         int cols);

/* Scratch for attention_backward: d_context, d_q: [B][Tq][d]; d_k, d_v: [B][Tk][d];
   d_p: [Tq][Tk] for each thread. */
typedef struct { float *d_context, *d_q, *d_k, *d_v, *d_p; } AttentionScratch;

/* Gradients of attention_forward, added into d_query_in: [B][Tq][d], d_memory_in:
   [B][Tk][d] (the same array for self-attention) and d_w's arrays, from d_out: [B][Tq][d].
   The other arguments are attention_forward's, with saved as it filled it. */
void attention_backward(float *d_query_in, float *d_memory_in, const AttentionWeights *d_w,
                        const AttentionScratch *scratch, const float *d_out,
                        const AttentionWeights *w, const AttentionSaved *saved,
                        const float *query_in, const float *memory_in,
                        const AttentionShape *shape);

/* keep_scale[i] = 0 with probability p, else 1/(1-p); keep_scale: [n]. */
void dropout_mask(float *keep_scale, size_t n, float p, Rng *rng);
/* x[i] *= keep_scale[i]; x, keep_scale: [n]. */
void dropout_apply(float *x, const float *keep_scale, size_t n);

typedef enum { LAYERNORM_STANDARD, LAYERNORM_ANNOTATED } LayerNormFormula;

/* A layer norm's gain and bias (the reference's a_2, b_2), or their gradients: [d]. */
typedef struct { float *gain, *bias; } LayerNormWeights;
/* Saved by the forward pass, per row: mean, rstd: [n]
   (rstd = 1/sqrt(var + eps) or 1/(std + eps)). */
typedef struct { float *mean, *rstd; } LayerNormSaved;

/* out[r] = gain * (in[r] - mean[r]) * rstd[r] + bias, per row; out, in: [n][d]; fills
   saved's arrays. */
void layernorm_forward(float *out, const LayerNormWeights *w, const LayerNormSaved *saved,
                       const float *in, int n, int d, LayerNormFormula formula, float eps);

/* *mean and *squares = sum (x[i] - mean)^2 of x: [d], in double precision. */
void row_moments(const float *x, int d, double *mean, double *squares);

/* Gradients of layernorm_forward, added into d_in: [n][d] and d_w's arrays, from
   d_out: [n][d]; in: [n][d] and saved as in the forward. */
void layernorm_backward(float *d_in, const LayerNormWeights *d_w, const float *d_out,
                        const LayerNormWeights *w, const LayerNormSaved *saved,
                        const float *in, int n, int d, LayerNormFormula formula, float eps);

/* The two linear layers (or their gradients): w_1: [d_ff][d_model], b_1: [d_ff],
   w_2: [d_model][d_ff], b_2: [d_model]. */
typedef struct { float *w_1, *b_1, *w_2, *b_2; } FeedForwardWeights;
/* Saved by the forward pass: hidden: [n][d_ff], after the ReLU and the dropout given by
   hidden_keep: [n][d_ff], NULL for none. */
typedef struct { float *hidden; const float *hidden_keep; } FeedForwardSaved;

/* out = relu(in w_1^T + b_1) w_2^T + b_2; in, out: [n][d_model]; fills saved->hidden. */
void feed_forward_forward(float *out, const FeedForwardWeights *w,
                          const FeedForwardSaved *saved, const float *in, int n,
                          int d_model, int d_ff);

/* Gradients of feed_forward_forward, added into d_in: [n][d_model] and d_w's arrays, from
   d_out: [n][d_model]; d_hidden: scratch [n][d_ff]; in: [n][d_model], w and saved as in
   the forward. */
void feed_forward_backward(float *d_in, const FeedForwardWeights *d_w, float *d_hidden,
                           const float *d_out, const FeedForwardWeights *w,
                           const FeedForwardSaved *saved, const float *in, int n,
                           int d_model, int d_ff);

/* x[r] = log_softmax(x[r]) for each row, in place; x: [rows][cols]. */
void log_softmax_rows(float *x, int rows, int cols);

/* L = -sum over rows r with targets[r] != pad of logprobs[r][targets[r]]; returns L and
   writes d_logprobs = dL/dlogprobs. logprobs, d_logprobs: [rows][vocab], targets: [rows]. */
double nll_loss(float *d_logprobs, const float *logprobs, const int *targets, int rows,
                int vocab, int pad);
/* d_x = d_y - softmax(x) * sum(d_y), per row, from y = log_softmax(x); all [rows][cols]. */
void log_softmax_backward(float *d_x, const float *d_y, const float *y, int rows, int cols);

/* The kernels of the layers, in two versions (layer_kernels[compute.kernel_set]). */
typedef struct {
    void (*masked_softmax)(float *p, const uint8_t *keep, size_t keep_row_stride, int rows,
                           int cols);
    void (*dropout_mask)(float *keep_scale, size_t n, float p, Rng *rng);
    void (*row_moments)(const float *x, int d, double *mean, double *squares);
    void (*log_softmax)(float *x, int rows, int cols);
    void (*log_softmax_backward)(float *d_x, const float *d_y, const float *y, int rows,
                                 int cols);
} LayerKernels;
extern const LayerKernels layer_kernels[KERNEL_SETS];

/* dropout_mask's exact result, drawn by blocks on several threads. */
void dropout_mask_parallel(float *keep_scale, size_t n, float p, Rng *rng);

/* masked_softmax_rows in one pass over each row. */
void masked_softmax_rows_fast(float *p, const uint8_t *keep, size_t keep_row_stride,
                              int rows, int cols);

/* row_moments in one pass over x. */
void row_moments_fast(const float *x, int d, double *mean, double *squares);

/* e^x within 2 units in the last place for x in [-87, 88]; 0 below -87, NaN for NaN.
   Plain arithmetic, so that a loop of it runs in vector registers. */
static inline float vector_expf(float x)
{
    const float log2e = 1.44269504088896341f;
    const float ln2_high = 0.693359375f, ln2_low = -2.12194440e-4f;   /* sum: ln 2 */
    const float round = 12582912.0f;   /* 1.5 * 2^23: adding it rounds to an integer */
    const float clamped = x > -87.0f ? (x < 88.0f ? x : 88.0f) : -87.0f;   /* NaN: -87 */
    const float n = (clamped * log2e + round) - round;
    const float r = (clamped - n * ln2_high) - n * ln2_low;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float e_r = p * (r * r) + r + 1.0f;
    const union { uint32_t bits; float value; } two_n = {.bits = (uint32_t)((int32_t)n + 127)
                                                                 << 23};
    const float e_x = x < -87.0f ? 0.0f : e_r * two_n.value;
    return x == x ? e_x : x;   /* NaN in, NaN out */
}

/* log_softmax_rows and log_softmax_backward with vector_expf; x, d_x, d_y, y:
   [rows][cols]. */
void log_softmax_rows_fast(float *x, int rows, int cols);
void log_softmax_backward_fast(float *d_x, const float *d_y, const float *y, int rows,
                               int cols);
#endif
