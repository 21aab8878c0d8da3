/* test_fast.c -- the speed chapter: the FLOP count, threads, the faster kernels against the
   chapters' first versions, and no allocation inside a training step (in float and in
   bfloat16). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"
#include "trainer.h"
#include "tests.h"

/* Every allocation of the trainer's code goes through these (the test binary is linked
   with -Wl,--wrap=malloc and friends); they count while counting is on. */
void *__real_malloc(size_t bytes);
void *__real_calloc(size_t count, size_t bytes);
void *__real_realloc(void *memory, size_t bytes);
void *__real_aligned_alloc(size_t alignment, size_t bytes);
static bool counting;
static long allocations;
static void count(void)
{
    if (counting) __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}
void *__wrap_malloc(size_t bytes) { count(); return __real_malloc(bytes); }
void *__wrap_calloc(size_t n, size_t bytes) { count(); return __real_calloc(n, bytes); }
void *__wrap_realloc(void *p, size_t bytes) { count(); return __real_realloc(p, bytes); }
void *__wrap_aligned_alloc(size_t alignment, size_t bytes)
{
    count();
    return __real_aligned_alloc(alignment, bytes);
}

/* A small model with everything switched on: dropout, smoothing, two layers. */
typedef struct {
    Trainer trainer;   /* as a run sets it up */
    int *full;         /* [T_BATCH][T_LEN]: the sequences of a batch */
} StepRun;

enum { T_BATCH = 6, T_LEN = 9, T_VOCAB = 13 };

static void step_run_init_sized(StepRun *t, int d_model)
{
    Config config = config_default(T_VOCAB, T_VOCAB, 2);
    config.d_model = d_model, config.d_ff = 2 * d_model, config.heads = 4;
    config.max_len = T_LEN;
    const StepSettings settings = {.smoothing = 0.1f, .factor = 1.0, .warmup = 4, .pad = 0};
    const BatchBounds bounds = fixed_bounds(T_BATCH, T_LEN);
    trainer_setup(&t->trainer, config, 5, &bounds, &settings);
    t->full = malloc(sizeof(int) * T_BATCH * T_LEN);
}

static void step_run_init(StepRun *t) { step_run_init_sized(t, 32); }

static double step_run_step(StepRun *t)
{
    return copy_task_step(&t->trainer, t->full, T_VOCAB, true);   /* some padding, too */
}

static void step_run_free(StepRun *t)
{
    free(t->full);
    trainer_free(&t->trainer);
}

/* Equation (step-flops) against the products a step actually computes. */
START_TEST(step_flops_match_the_products)
{
    StepRun t;
    step_run_init(&t);
    MatmulLog log = {0};
    compute.log = &log;
    step_run_step(&t);
    compute.log = NULL;
    ck_assert_int_gt(log.count, 0);
    const double expected = training_step_flops(&t.trainer.model.config, T_BATCH, T_LEN, T_LEN - 1);
    ck_assert_double_eq(matmul_log_flops(&log), expected);   /* integers: exact */
    matmul_log_free(&log);
    step_run_free(&t);
}
END_TEST

/* The copy task's step of the chapter: 67 231 825 920 operations. */
START_TEST(copy_task_step_flops)
{
    const Config config = config_default(11, 11, 2);
    ck_assert_double_eq(training_step_flops(&config, 80, 10, 9), 67231825920.0);
}
END_TEST

/* |x - y| within twice the bound of the tensor chapter for c = alpha op(a) op(b) + c, plus
   the rounding of the result: x, y, c0: [m][n]. */
static void assert_within_dot_bound(const float *x, const float *y, bool ta, bool tb, int m,
                                    int n, int k, float alpha, const float *a,
                                    const float *b)
{
    const double u = 0x1p-24, gamma = k * u / (1 - k * u);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double magnitude = 0.0;
            for (int p = 0; p < k; p++)
                magnitude += fabs(ta ? a[p * m + i] : a[i * k + p])
                           * fabs(tb ? b[j * k + p] : b[p * n + j]);
            const double bound = 2 * gamma * fabs(alpha) * magnitude + 2 * u * fabs(x[i * n + j]);
            ck_assert_msg(fabs(x[i * n + j] - y[i * n + j]) <= bound,
                          "%d x %d x %d, transposes %d %d, (%d, %d)", m, n, k, ta, tb, i, j);
        }
}

/* A product cut between threads agrees with the whole product within the dot-product
   bound of the tensor chapter (OpenBLAS does not round a cut product bit for bit as the whole one),
   for every transpose case and sizes that are not multiples of the tile width. */
START_TEST(split_products_equal_whole_ones)
{
    static const int sizes[][3] = {{37, 129, 70}, {200, 33, 65}, {64, 64, 64}, {17, 300, 5}};
    Rng rng;
    rng_seed(&rng, 9, 9);
    for (int s = 0; s < 4; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                const int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
                float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
                float *whole = malloc(sizeof(float) * m * n);
                float *split = malloc(sizeof(float) * m * n);
                for (int i = 0; i < m * k; i++) a[i] = rng_normal(&rng);
                for (int i = 0; i < k * n; i++) b[i] = rng_normal(&rng);
                for (int i = 0; i < m * n; i++) whole[i] = split[i] = rng_normal(&rng);
                set_threads(1);
                matmul_blas(m, n, k, 0.5f, (MatmulOperand){a, ta ? m : k, ta},
                            (MatmulOperand){b, tb ? k : n, tb}, 1.0f, whole, n);
                set_threads(3);   /* three parts: ranges that are not halves */
                matmul_blas_split(m, n, k, 0.5f, (MatmulOperand){a, ta ? m : k, ta},
                                  (MatmulOperand){b, tb ? k : n, tb}, 1.0f, split, n);
                assert_within_dot_bound(whole, split, ta, tb, m, n, k, 0.5f, a, b);
                free(a), free(b), free(whole), free(split);
            }
    set_threads(2);
}
END_TEST

/* A single row goes through sgemv: it agrees with sgemm within the same bound, for every
   transpose case (a transposed row is a column, read with stride lda). */
START_TEST(single_row_products_use_sgemv_correctly)
{
    enum { K = 70, N = 129 };
    Rng rng;
    rng_seed(&rng, 6, 6);
    float a[K], b[K * N], with_gemv[N], with_gemm[N];
    for (int i = 0; i < K; i++) a[i] = rng_normal(&rng);
    for (int i = 0; i < K * N; i++) b[i] = rng_normal(&rng);
    set_threads(1);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            for (int j = 0; j < N; j++) with_gemv[j] = with_gemm[j] = (float)j;
            compute.kernel_set = KERNELS_FAST;
            matmul_blas(1, N, K, 0.5f, (MatmulOperand){a, ta ? 1 : K, ta},
                        (MatmulOperand){b, tb ? K : N, tb}, 1.0f, with_gemv, N);
            compute.kernel_set = KERNELS_REFERENCE;
            matmul_blas(1, N, K, 0.5f, (MatmulOperand){a, ta ? 1 : K, ta},
                        (MatmulOperand){b, tb ? K : N, tb}, 1.0f, with_gemm, N);
            compute.kernel_set = KERNELS_FAST;
            assert_within_dot_bound(with_gemv, with_gemm, ta, tb, 1, N, K, 0.5f, a, b);
        }
    set_threads(2);
}
END_TEST

/* vector_expf within 2 units in the last place of e^x rounded to float, on a grid of
   step 2^-10 over [-87, 88], 0 below -87, and NaN for NaN. */
START_TEST(vector_exponential_is_accurate)
{
    double worst = 0.0;
    for (float x = -87.0f; x <= 88.0f; x += 0x1p-10f) {
        const float exact = (float)exp((double)x), got = vector_expf(x);
        const float ulp = nextafterf(exact, INFINITY) - exact;
        const double error = fabs((double)got - exact) / ulp;
        worst = error > worst ? error : worst;
    }
    ck_assert_msg(worst <= 2.0, "worst error %.2f ulp", worst);
    ck_assert_float_eq(vector_expf(-88.0f), 0.0f);
    ck_assert_float_eq(vector_expf(-INFINITY), 0.0f);
    ck_assert_float_eq(vector_expf(0.0f), 1.0f);
    ck_assert(isnan(vector_expf(NAN)));
}
END_TEST

/* The vector log-softmax and its backward against the first versions: within 1e-6 of
   each value's size (a few float roundings; the values are up to about 20). */
START_TEST(vector_log_softmax_equals_first_version)
{
    enum { ROWS = 6, COLS = 1001 };
    static float x[ROWS * COLS], reference[ROWS * COLS], d_y[ROWS * COLS];
    static float d_fast[ROWS * COLS], d_reference[ROWS * COLS];
    Rng rng;
    rng_seed(&rng, 2, 3);
    for (int i = 0; i < ROWS * COLS; i++) {
        x[i] = reference[i] = 5.0f * rng_normal(&rng);
        d_y[i] = rng_uniform(&rng) < 0.01f ? -0.1f : -0.001f;
    }
    layer_kernels[KERNELS_FAST].log_softmax(x, ROWS, COLS);
    layer_kernels[KERNELS_FAST].log_softmax_backward(d_fast, d_y, x, ROWS, COLS);
    layer_kernels[KERNELS_REFERENCE].log_softmax(reference, ROWS, COLS);
    layer_kernels[KERNELS_REFERENCE].log_softmax_backward(d_reference, d_y, reference, ROWS, COLS);
    for (int r = 0; r < ROWS; r++) {
        float sum = 0.0f;   /* the backward's term p_j * sum of the row's d_y */
        for (int j = 0; j < COLS; j++) sum += fabsf(d_y[r * COLS + j]);
        for (int j = 0; j < COLS; j++) {
            const int i = r * COLS + j;
            ck_assert_float_eq_tol(x[i], reference[i], 1e-6f * (1.0f + fabsf(reference[i])));
            ck_assert_float_eq_tol(d_fast[i], d_reference[i],
                                   1e-6f * (fabsf(d_y[i]) + expf(reference[i]) * sum));
        }
    }
}
END_TEST

START_TEST(rng_advance_equals_repeated_next)
{
    static const uint64_t deltas[] = {0, 1, 2, 3, 17, 1000, 65537};
    for (int d = 0; d < 7; d++) {
        Rng stepped, jumped;
        rng_seed(&stepped, 42, 54);
        jumped = stepped;
        for (uint64_t i = 0; i < deltas[d]; i++) rng_next(&stepped);
        rng_advance(&jumped, deltas[d]);
        ck_assert_uint_eq(stepped.state, jumped.state);
        ck_assert_uint_eq(rng_next(&stepped), rng_next(&jumped));
    }
}
END_TEST

/* The parallel mask is the serial one, and leaves the generator in the same state: for
   blocks shorter than the lanes (37 draws) and longer, with a tail (100003). */
START_TEST(parallel_dropout_equals_serial)
{
    enum { N = 100003 };
    static const float probabilities[] = {0.0f, 0.1f, 0.5f, 0.9f};
    static const size_t sizes[] = {37, N};
    float *serial = malloc(sizeof(float) * N), *parallel = malloc(sizeof(float) * N);
    for (int z = 0; z < 2; z++)
        for (int p = 0; p < 4; p++) {
            Rng a, b;
            rng_seed(&a, 3, 7);
            b = a;
            layer_kernels[KERNELS_REFERENCE].dropout_mask(serial, sizes[z], probabilities[p], &a);
            layer_kernels[KERNELS_FAST].dropout_mask(parallel, sizes[z], probabilities[p], &b);
            ck_assert(memcmp(serial, parallel, sizeof(float) * sizes[z]) == 0);
            ck_assert_uint_eq(a.state, b.state);
        }
    free(serial), free(parallel);
}
END_TEST

/* The feed-forward network's fused passes give the bits of the separate ones they replaced
   (the bias copied in before the product, the ReLU and dropout after it; the gradient
   cleared, masked, then summed into the first bias by linear_backward), with one thread and
   with two (1000 columns: blocks of 62 and 63, cut into 64 sums and fewer), with and
   without a dropout pattern. Compared with ==, since 0 + -0 is +0. */
START_TEST(fused_feed_forward_equals_separate_passes)
{
    enum { N = 40, D = 8, FF = 1000 };   /* N FF >= 32768: the passes run on both threads */
    Rng rng;
    rng_seed(&rng, 11, 4);
    float *w1 = malloc(sizeof(float) * FF * D), *b1 = malloc(sizeof(float) * FF);
    float *w2 = malloc(sizeof(float) * D * FF), *b2 = malloc(sizeof(float) * D);
    float *in = malloc(sizeof(float) * N * D), *d_out = malloc(sizeof(float) * N * D);
    float *keep = malloc(sizeof(float) * N * FF);
    for (int i = 0; i < FF * D; i++) w1[i] = rng_normal(&rng), w2[i] = rng_normal(&rng);
    for (int i = 0; i < FF; i++) b1[i] = rng_normal(&rng);
    for (int i = 0; i < D; i++) b2[i] = rng_normal(&rng);
    for (int i = 0; i < N * D; i++) in[i] = rng_normal(&rng), d_out[i] = rng_normal(&rng);
    for (int i = 0; i < N * FF; i++) keep[i] = rng_uniform(&rng) < 0.3f ? 0.0f : 1.0f / 0.7f;
    const FeedForwardWeights w = {w1, b1, w2, b2};
    const size_t sizes[4] = {(size_t)FF * D, FF, (size_t)D * FF, D};
    for (int threads = 1; threads <= 2; threads++)
        for (int dropout = 0; dropout < 2; dropout++) {
            set_threads(threads);
            const float *mask = dropout ? keep : NULL;
            float *grads[2][4], *hidden[2], *d_hidden[2], *out[2], *d_in[2];
            for (int v = 0; v < 2; v++) {
                for (int a = 0; a < 4; a++) grads[v][a] = calloc(sizes[a], sizeof(float));
                for (size_t i = 0; i < sizes[1]; i++) grads[v][1][i] = 0.25f;   /* added to */
                hidden[v] = malloc(sizeof(float) * N * FF);
                d_hidden[v] = malloc(sizeof(float) * N * FF);
                out[v] = malloc(sizeof(float) * N * D), d_in[v] = calloc(N * D, sizeof(float));
            }
            /* the fused passes */
            const FeedForwardSaved saved = {hidden[0], mask};
            const FeedForwardWeights d_w = {grads[0][0], grads[0][1], grads[0][2], grads[0][3]};
            feed_forward_forward(out[0], &w, &saved, in, N, D, FF);
            feed_forward_backward(d_in[0], &d_w, d_hidden[0], d_out, &w, &saved, in, N, D, FF);
            /* the separate ones */
            float *h = hidden[1], *g = d_hidden[1];
            linear_forward(h, in, w1, b1, N, D, FF);
            for (int i = 0; i < N * FF; i++) {
                const float relu = h[i] < 0.0f ? 0.0f : h[i];
                h[i] = mask ? relu * mask[i] : relu;
            }
            linear_forward(out[1], h, w2, b2, N, FF, D);
            memset(g, 0, sizeof(float) * N * FF);
            linear_backward(g, grads[1][2], grads[1][3], d_out, h, w2, N, FF, D);
            for (int i = 0; i < N * FF; i++) g[i] = h[i] > 0.0f ? g[i] * (mask ? mask[i] : 1) : 0;
            linear_backward(d_in[1], grads[1][0], NULL, g, in, w1, N, D, FF);
            for (int r = 0; r < N; r++)
                for (int c = 0; c < FF; c++) grads[1][1][c] += g[(size_t)r * FF + c];
            for (int i = 0; i < N * FF; i++) {
                ck_assert_msg(hidden[0][i] == hidden[1][i], "hidden %d", i);
                ck_assert_msg(d_hidden[0][i] == d_hidden[1][i], "d_hidden %d", i);
            }
            for (int i = 0; i < N * D; i++)
                ck_assert(out[0][i] == out[1][i] && d_in[0][i] == d_in[1][i]);
            for (int a = 0; a < 4; a++)
                for (size_t i = 0; i < sizes[a]; i++)
                    ck_assert_msg(grads[0][a][i] == grads[1][a][i], "gradient %d[%zu]: %g, not %g",
                                  a, i, grads[0][a][i], grads[1][a][i]);
            for (int v = 0; v < 2; v++) {
                for (int a = 0; a < 4; a++) free(grads[v][a]);
                free(hidden[v]), free(d_hidden[v]), free(out[v]), free(d_in[v]);
            }
        }
    set_threads(2);
    free(w1), free(b1), free(w2), free(b2), free(in), free(d_out), free(keep);
}
END_TEST

/* add_column_sums adds every column from the first row to the last: the bits of the plain
   loop, on one thread or two, for widths that fill its 64 sums, leave some over, or fit in
   fewer. */
START_TEST(column_sums_equal_the_plain_loop)
{
    static const int shapes[][2] = {{3, 5}, {40, 1000}, {9, 8000}, {70, 512}};
    Rng rng;
    rng_seed(&rng, 12, 5);
    for (int s = 0; s < 4; s++) {
        const int rows = shapes[s][0], cols = shapes[s][1];
        float *x = malloc(sizeof(float) * rows * cols);
        float *sums = malloc(sizeof(float) * cols), *plain = malloc(sizeof(float) * cols);
        for (int i = 0; i < rows * cols; i++) x[i] = rng_normal(&rng) * 100.0f;
        for (int threads = 1; threads <= 2; threads++) {
            set_threads(threads);
            for (int c = 0; c < cols; c++) sums[c] = plain[c] = rng_normal(&rng);
            add_column_sums(sums, x, rows, cols);
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < cols; c++) plain[c] += x[(size_t)r * cols + c];
            ck_assert(memcmp(sums, plain, sizeof(float) * cols) == 0);
        }
        free(x), free(sums), free(plain);
    }
    set_threads(2);
}
END_TEST

/* The fused masked softmax gives the bits of mask_scores + softmax_rows, also for rows
   that are entirely masked and for a causal mask. */
START_TEST(masked_softmax_equals_mask_then_softmax)
{
    enum { ROWS = 7, COLS = 9 };
    Rng rng;
    rng_seed(&rng, 1, 2);
    uint8_t keep[ROWS * COLS];
    float scores[ROWS * COLS], reference[ROWS * COLS];
    for (int trial = 0; trial < 50; trial++) {
        for (int i = 0; i < ROWS * COLS; i++) {
            keep[i] = trial % 2 ? (i % COLS) <= (i / COLS) : rng_uniform(&rng) < 0.6f;
            scores[i] = reference[i] = 8.0f * rng_normal(&rng);
        }
        if (trial % 2 == 0) memset(keep + 2 * COLS, 0, COLS);   /* an all-masked row */
        mask_scores(reference, keep, COLS, ROWS, COLS);
        softmax_rows(reference, reference, ROWS, COLS);
        layer_kernels[KERNELS_FAST].masked_softmax(scores, keep, COLS, ROWS, COLS);
        ck_assert(memcmp(scores, reference, sizeof scores) == 0);
    }
}
END_TEST

/* One pass gives the two-pass mean and squared deviations to 1e-12, relatively, also for a
   row whose mean is a hundred times its spread. */
START_TEST(one_pass_moments_equal_two_pass)
{
    enum { D = 512 };
    float x[D];
    Rng rng;
    rng_seed(&rng, 4, 4);
    for (int trial = 0; trial < 3; trial++) {
        const float offset = trial == 2 ? 100.0f : (float)trial;
        for (int i = 0; i < D; i++) x[i] = offset + rng_normal(&rng);
        double sum = 0, squares = 0, mean, one_pass;
        for (int i = 0; i < D; i++) sum += x[i];
        const double mu = sum / D;
        for (int i = 0; i < D; i++) squares += (x[i] - mu) * (x[i] - mu);
        layer_kernels[KERNELS_FAST].row_moments(x, D, &mean, &one_pass);
        ck_assert_double_eq_tol(mean, mu, 1e-12 * (fabs(mu) + 1));
        ck_assert_double_eq_tol(one_pass, squares, 1e-12 * squares * offset * offset + 1e-12);
    }
}
END_TEST

/* The closed-form loss against the chapter's word-by-word sum: the same gradient values, the
   loss to 1e-12 relatively; with padding rows, smoothing 0, and -infinity at the padding
   word and at a target. */
START_TEST(closed_form_loss_equals_word_sums)
{
    enum { ROWS = 5, V = 11 };
    const int targets[ROWS] = {3, 0, 10, 1, 3};
    float logprobs[ROWS * V], reference[ROWS * V], fast[ROWS * V];
    Rng rng;
    rng_seed(&rng, 8, 8);
    for (int i = 0; i < ROWS * V; i++) logprobs[i] = -3.0f * rng_uniform(&rng);
    logprobs[0 * V + 0] = -INFINITY;   /* the padding word of row 0 */
    for (int s = 0; s < 3; s++) {
        const float smoothing = s == 0 ? 0.0f : s == 1 ? 0.1f : 0.4f;
        int tokens_reference, tokens_fast;
        const double loss_reference = loss_kernels[KERNELS_REFERENCE].smoothed_loss(
            reference, logprobs, targets, ROWS, V, 0, smoothing, &tokens_reference);
        const double loss_fast = loss_kernels[KERNELS_FAST].smoothed_loss(
            fast, logprobs, targets, ROWS, V, 0, smoothing, &tokens_fast);
        ck_assert_int_eq(tokens_fast, tokens_reference);
        ck_assert(isfinite(loss_fast));
        ck_assert_double_eq_tol(loss_fast, loss_reference, 1e-12 * fabs(loss_reference));
        for (int i = 0; i < ROWS * V; i++)   /* == : the chapter's zeros are -0 */
            ck_assert_msg(fast[i] == reference[i], "gradient %d: %g, not %g", i, fast[i],
                          reference[i]);
    }
    /* a target with probability 0 costs infinitely much, in both */
    logprobs[3 * V + 1] = -INFINITY;
    int tokens;
    ck_assert(isinf(loss_kernels[KERNELS_FAST].smoothed_loss(fast, logprobs, targets, ROWS, V, 0,
                                                             0.1f, &tokens)));
}
END_TEST

/* The three passes of a kernel set that its smoothed_logits_gradient stands for: the
   loss's gradient into d_y, its rescaling from the tokens to norm, the log-softmax backward
   into d_logits. Returns the loss; *tokens as the loss sets it. */
static double three_passes(KernelSet set, float *d_logits, float *d_y,
                           const float *logprobs, const int *targets, int rows, int vocab,
                           float smoothing, double norm, int *tokens)
{
    const double loss = loss_kernels[set].smoothed_loss(d_y, logprobs, targets, rows, vocab, 0,
                                                        smoothing, tokens);
    const float rescale = (float)(*tokens / norm);
    for (int i = 0; i < rows * vocab; i++) d_y[i] *= rescale;
    layer_kernels[set].log_softmax_backward(d_logits, d_y, logprobs, rows, vocab);
    return loss;
}

/* The fused loss and logits' gradient against the three passes it replaces (the loss's
   gradient, its rescaling from the part's tokens to the batch's, the log-softmax backward):
   the loss the same bits (the same sums in the same order), every gradient within 2^-20 of
   1/norm (the largest gradient is about 0.9 / norm; the two ways round differently, by a few
   units of 2^-24 each), a row of padding all zeros, and every other row summing to about 0
   (probabilities and smoothed targets both add up to 1). Rows of 3000 words, so that the
   vector loop runs long. */
START_TEST(fused_loss_gradient_equals_separate_passes)
{
    enum { ROWS = 6, V = 3000 };
    const int targets[ROWS] = {3, 0, 2999, 1, 1500, 0};
    const double norm = 9.0;   /* tokens of the whole batch: more than these 4 */
    float *logprobs = malloc(sizeof(float) * ROWS * V), *d_y = malloc(sizeof(float) * ROWS * V);
    float *separate = malloc(sizeof(float) * ROWS * V), *fused = malloc(sizeof(float) * ROWS * V);
    float *reference = malloc(sizeof(float) * ROWS * V);
    Rng rng;
    rng_seed(&rng, 21, 21);
    for (int i = 0; i < ROWS * V; i++) logprobs[i] = 8.0f * rng_uniform(&rng) - 4.0f;
    layer_kernels[KERNELS_FAST].log_softmax(logprobs, ROWS, V);
    for (int s = 0; s < 2; s++) {
        const float smoothing = s == 0 ? 0.0f : 0.1f;
        int tokens_separate, tokens_fused;
        const double loss_separate = three_passes(KERNELS_FAST, separate, d_y, logprobs,
                                                  targets, ROWS, V, smoothing, norm,
                                                  &tokens_separate);
        /* the reference table's entry is its three passes, to the bit */
        int tokens_reference;
        const double loss_reference = loss_kernels[KERNELS_REFERENCE].smoothed_logits_gradient(
            fused, logprobs, targets, ROWS, V, 0, smoothing, norm, &tokens_reference);
        ck_assert(loss_reference == three_passes(KERNELS_REFERENCE, reference, d_y, logprobs,
                                                 targets, ROWS, V, smoothing, norm,
                                                 &tokens_reference));
        ck_assert(memcmp(fused, reference, sizeof(float) * ROWS * V) == 0);
        const double loss_fused = loss_kernels[KERNELS_FAST].smoothed_logits_gradient(
            fused, logprobs, targets, ROWS, V, 0, smoothing, norm, &tokens_fused);
        ck_assert_int_eq(tokens_fused, 4);
        ck_assert_int_eq(tokens_separate, 4);
        ck_assert(loss_fused == loss_separate);
        for (int i = 0; i < ROWS * V; i++)
            ck_assert_msg(fabs(fused[i] - separate[i]) <= 0x1p-20 / norm,
                          "gradient %d: %.9g, not %.9g", i, fused[i], separate[i]);
        for (int r = 0; r < ROWS; r++) {
            double sum = 0.0, largest = 0.0;
            for (int w = 0; w < V; w++) {
                sum += fused[r * V + w];
                largest = fmax(largest, fabs(fused[r * V + w]));
            }
            if (targets[r] == 0) ck_assert(largest == 0.0);
            else ck_assert_msg(fabs(sum) <= 1e-5 / norm, "row %d sums to %g", r, sum);
        }
    }
    free(logprobs), free(d_y), free(separate), free(fused), free(reference);
}
END_TEST

/* Two runs on two threads give the same bits (no sum depends on which thread finishes
   first), with a model large enough that the products are split (m n k >= 1e6) and every
   PARALLEL_FOR loop runs on both threads (54 rows x 640 >= 32768 elements). With one
   thread, OpenBLAS rounds the uncut products differently, so the first step's gradients
   are compared within 1e-4 of the largest one: gamma_k of the tensor chapter for the longest sums
   (k = 1280) is 7.6e-5. (Parameters are not compared after Adam: it divides a gradient
   by its own size, and a gradient near 0 can change sign by rounding.) */
START_TEST(training_with_threads_is_deterministic)
{
    StepRun runs[3];
    const int threads[3] = {2, 2, 1};
    for (int r = 0; r < 3; r++) {
        set_threads(threads[r]);
        step_run_init_sized(&runs[r], 640);
        step_run_step(&runs[r]);
    }
    const Model *m0 = &runs[0].trainer.model, *m1 = &runs[1].trainer.model;
    const size_t total = m0->parameters.total;
    ck_assert(memcmp(m0->parameters.data, m1->parameters.data, total * sizeof(float)) == 0);
    ck_assert(memcmp(m0->gradients.data, m1->gradients.data, total * sizeof(float)) == 0);
    const float *g2 = m0->gradients.data, *g1 = runs[2].trainer.model.gradients.data;
    float largest = 0.0f, difference = 0.0f;
    for (size_t i = 0; i < total; i++) {
        largest = fmaxf(largest, fabsf(g2[i]));
        difference = fmaxf(difference, fabsf(g2[i] - g1[i]));
    }
    ck_assert_float_gt(largest, 0.0f);
    ck_assert_float_le(difference, 1e-4f * largest);
    for (int r = 0; r < 3; r++) step_run_free(&runs[r]);
    set_threads(2);
}
END_TEST

/* The faster kernels against the first versions, on a whole step with the same dropout
   and masks: the loss within 1e-6 relatively, and every gradient within 1e-5 of the
   largest one. The kernels differ by a few units in the last place (2^-24 = 6e-8) per
   value: the vector exponential by up to 2, the sums by their order; the backward pass
   adds such differences along some thirty operations, which stays well below 1e-5.
   (Parameters after Adam are not compared: see training_with_threads_is_deterministic.) */
START_TEST(fast_and_reference_kernels_train_alike)
{
    StepRun fast, reference;
    compute.kernel_set = KERNELS_REFERENCE;
    step_run_init(&reference);
    const double loss_reference = step_run_step(&reference);
    compute.kernel_set = KERNELS_FAST;
    step_run_init(&fast);
    const double loss_fast = step_run_step(&fast);
    ck_assert_double_eq_tol(loss_fast, loss_reference, 1e-6 * loss_reference);
    const float *g_fast = fast.trainer.model.gradients.data;
    const float *g_reference = reference.trainer.model.gradients.data;
    float largest = 0.0f, difference = 0.0f;
    for (size_t i = 0; i < fast.trainer.model.gradients.total; i++) {
        largest = fmaxf(largest, fabsf(g_reference[i]));
        difference = fmaxf(difference, fabsf(g_fast[i] - g_reference[i]));
    }
    ck_assert_float_gt(largest, 0.0f);
    ck_assert_float_le(difference, 1e-5f * largest);
    step_run_free(&fast), step_run_free(&reference);
}
END_TEST

/* After the first step has touched everything, training steps allocate nothing. */
START_TEST(training_steps_do_not_allocate)
{
    StepRun t;
    step_run_init(&t);
    step_run_step(&t);
    allocations = 0;
    counting = true;
    for (int s = 0; s < 3; s++) step_run_step(&t);
    counting = false;
    ck_assert_int_eq(allocations, 0);
    /* and the counter does count: */
    counting = true;
    free(xmalloc(16));
    counting = false;
    ck_assert_int_eq(allocations, 1);
    step_run_free(&t);
}
END_TEST

/* The same in bfloat16, with every product outside the heads' loops sent to oneDNN: the
   first step makes the primitives and grows the buffers (the weights' copy, the rounded
   operands, the scratchpad); the steps after it allocate nothing. */
START_TEST(bf16_training_steps_do_not_allocate)
{
    if (!bf16_hardware()) {
        printf("bf16_training_steps_do_not_allocate: skipped: this processor has no "
               "AVX512_BF16 (or ONEDNN_MAX_CPU_ISA hides it)\n");
        return;
    }
    const ComputeSettings saved = compute;
    compute.precision = PRECISION_BF16, compute.bf16_min_work = 0;
    StepRun t;
    step_run_init(&t);
    step_run_step(&t);
    allocations = 0;
    counting = true;
    for (int s = 0; s < 3; s++) step_run_step(&t);
    counting = false;
    compute = saved;
    ck_assert_int_eq(allocations, 0);
    step_run_free(&t);
}
END_TEST

/* The recorded measurements of the chapter's figures (figures/bench/): the rows in the
   order the bar charts label them, and columns that agree with each other: the ratio is
   C's median over PyTorch's, the percentage of sgemm is C's model rate over the sgemm rate,
   every median lies within its min-max, and the model rate is the FLOP count of the
   configuration (equation (step-flops)) times the steps per second. */
static const int bench_sizes[3][6] = {{2, 512, 2048, 80, 10, 11}, {3, 256, 1024, 64, 32, 8000},
                                       {6, 512, 2048, 32, 32, 8000}};

/* The FLOP count of a step of the benchmark's configuration number config (copy, small,
   base), by equation (19.1), and its target tokens per step. */
static double bench_step_flops(int config, double *tokens_per_step)
{
    const int *z = bench_sizes[config];
    Config model = config_default(z[5], z[5], z[0]);
    model.d_model = z[1], model.d_ff = z[2];
    *tokens_per_step = (double)z[3] * (z[4] - 1);
    return training_step_flops(&model, z[3], z[4], z[4] - 1);
}

/* A recorded data file, opened for reading, and its next line that is not a comment. */
static FILE *open_recorded(const char *path)
{
    FILE *file = fopen(path, "r");
    ck_assert_msg(file != NULL, "%s is missing", path);
    return file;
}

static bool next_data_line(FILE *file, char *line, int size)
{
    while (fgets(line, size, file))
        if (line[0] != '#') return true;
    return false;
}

/* A table of bench.py --dat: eight rows in order, medians within their ranges, ratios the
   quotients of the medians, model GFLOP/s the FLOP count times the rate. */
static void check_bench_table(const char *path)
{
    static const char *const configs[4] = {"copy", "small", "base", "decode"};
    FILE *table = open_recorded(path);
    char line[512];
    int row = 0;
    while (next_data_line(table, line, sizeof line)) {
        char config[16], f[12][32];
        int threads;
        ck_assert_int_eq(sscanf(line, "%15s %d %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s "
                                      "%31s %31s", config, &threads, f[0], f[1], f[2], f[3], f[4],
                                f[5], f[6], f[7], f[8], f[9], f[10], f[11]), 14);
        ck_assert_str_eq(config, configs[row / 2]);
        ck_assert_int_eq(threads, 1 + row % 2);
        const double c = atof(f[0]), pt = atof(f[3]), ratio = atof(f[6]);
        ck_assert(atof(f[1]) <= c && c <= atof(f[2]) && atof(f[4]) <= pt && pt <= atof(f[5]));
        ck_assert_double_eq_tol(ratio, c / pt, 1e-3 * ratio);
        if (row < 6) {   /* training rows: tokens/s; model GFLOP/s from the FLOP count */
            double tokens;
            const double flops = bench_step_flops(row / 2, &tokens);
            ck_assert_double_eq_tol(atof(f[7]), flops * c / tokens * 1e-9, 1e-2 * atof(f[7]));
            ck_assert_double_eq_tol(atof(f[9]), 100 * atof(f[7]) / atof(f[8]), 0.1);
        }
        row++;
    }
    fclose(table);
    ck_assert_int_eq(row, 8);
}

/* A table of bench.py --precision-dat: six training rows in order; every ratio the quotient
   of its two rates; the C bf16 model GFLOP/s the FLOP count times its rate. */
static void check_precision_table(const char *path)
{
    static const char *const configs[3] = {"copy", "small", "base"};
    FILE *table = open_recorded(path);
    char line[512];
    int row = 0;
    while (next_data_line(table, line, sizeof line)) {
        char config[16];
        int threads;
        double v[13];
        ck_assert_int_eq(sscanf(line, "%15s %d %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf "
                                      "%lf", config, &threads, &v[0], &v[1], &v[2], &v[3], &v[4],
                                &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12]),
                         15);
        ck_assert_str_eq(config, configs[row / 2]);
        ck_assert_int_eq(threads, 1 + row % 2);
        const double c_fp32 = v[0], c_bf16 = v[1], pt_fp32 = v[2], pt_bf16 = v[3];
        ck_assert_double_eq_tol(v[4], c_bf16 / c_fp32, 1e-3 * v[4]);
        ck_assert_double_eq_tol(v[5], c_bf16 / pt_fp32, 1e-3 * v[5]);
        ck_assert_double_eq_tol(v[6], c_bf16 / pt_bf16, 1e-3 * v[6]);
        ck_assert_double_eq_tol(v[7], c_fp32 / pt_fp32, 1e-3 * v[7]);
        double tokens;
        const double flops = bench_step_flops(row / 2, &tokens);
        ck_assert_double_eq_tol(v[10], flops * c_bf16 / tokens * 1e-9, 1e-2 * v[10]);
        ck_assert_double_le(v[10], v[9]);   /* the step is no faster than its products */
        row++;
    }
    fclose(table);
    ck_assert_int_eq(row, 6);
}

START_TEST(recorded_benchmark_data_is_consistent)
{
    check_bench_table("figures/bench/table.dat");
    check_precision_table("figures/bench/precision.dat");
    static const char *const configs[4] = {"copy", "small", "base", "decode"};
    char line[512];
    FILE *stages = open_recorded("figures/bench/stages.dat");
    int row = 0;
    while (next_data_line(stages, line, sizeof line)) {
        char config[16];
        int threads;
        double rates[3];
        ck_assert_int_eq(sscanf(line, "%15s %d %lf %lf %lf", config, &threads, &rates[0],
                                &rates[1], &rates[2]), 5);
        ck_assert_str_eq(config, configs[row / 2]);
        ck_assert_int_eq(threads, 1 + row % 2);
        for (int s = 0; s < 3; s++) ck_assert_double_gt(rates[s], 0.0);
        row++;
    }
    fclose(stages);
    ck_assert_int_eq(row, 8);
}
END_TEST

Suite *fast_suite(void)
{
    Suite *suite = suite_create("fast");
    TCase *count = tcase_create("FLOP count");
    tcase_add_test(count, step_flops_match_the_products);
    tcase_add_test(count, copy_task_step_flops);
    tcase_add_test(count, recorded_benchmark_data_is_consistent);
    suite_add_tcase(suite, count);
    TCase *kernels = tcase_create("kernels");
    tcase_add_test(kernels, split_products_equal_whole_ones);
    tcase_add_test(kernels, single_row_products_use_sgemv_correctly);
    tcase_add_test(kernels, vector_exponential_is_accurate);
    tcase_add_test(kernels, vector_log_softmax_equals_first_version);
    tcase_add_test(kernels, rng_advance_equals_repeated_next);
    tcase_add_test(kernels, parallel_dropout_equals_serial);
    tcase_add_test(kernels, masked_softmax_equals_mask_then_softmax);
    tcase_add_test(kernels, fused_feed_forward_equals_separate_passes);
    tcase_add_test(kernels, column_sums_equal_the_plain_loop);
    tcase_add_test(kernels, one_pass_moments_equal_two_pass);
    tcase_add_test(kernels, closed_form_loss_equals_word_sums);
    tcase_add_test(kernels, fused_loss_gradient_equals_separate_passes);
    suite_add_tcase(suite, kernels);
    TCase *steps = tcase_create("training steps");
    tcase_add_test(steps, training_with_threads_is_deterministic);
    tcase_add_test(steps, fast_and_reference_kernels_train_alike);
    tcase_add_test(steps, training_steps_do_not_allocate);
    tcase_add_test(steps, bf16_training_steps_do_not_allocate);
    suite_add_tcase(suite, steps);
    return suite;
}
