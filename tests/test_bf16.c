/* test_bf16.c -- the speed chapter's bfloat16 products through oneDNN: the rounding, one product
   against the bound (bf16-error), the weights' copy, a whole training step against float,
   determinism, and the command line (the copy task in bf16, resumption, the refusal on a
   processor without bf16). Every test that needs the processor's bf16 instructions says
   on standard output that it was skipped where they are missing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "train.h"
#include "trainer.h"
#include "tests.h"

/* True, after printing why, when the processor (or ONEDNN_MAX_CPU_ISA) has no bf16. */
static bool skip_without_bf16(const char *test)
{
    if (bf16_hardware()) return false;
    printf("%s: skipped: this processor has no AVX512_BF16 (or ONEDNN_MAX_CPU_ISA hides "
           "it)\n", test);
    return true;
}

#define SKIP_WITHOUT_BF16() \
    do {                                             \
        if (skip_without_bf16(__func__)) return;     \
    } while (0)

/* Rounding to nearest, ties to even; NaN stays NaN; back to float is exact. */
START_TEST(bf16_rounding_is_to_nearest_even)
{
    ck_assert_uint_eq(bf16_from_float(1.0f), 0x3f80);
    ck_assert_uint_eq(bf16_from_float(1.0f + 0x1p-8f), 0x3f80);           /* tie: down */
    ck_assert_uint_eq(bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3f82);       /* tie: up */
    ck_assert_uint_eq(bf16_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* above a tie */
    ck_assert_uint_eq(bf16_from_float(-2.0f), 0xc000);
    ck_assert_uint_eq(bf16_from_float(INFINITY), 0x7f80);
    ck_assert_uint_eq(bf16_from_float(0x1.fffffep127f), 0x7f80);   /* rounds past the largest */
    ck_assert(isnan(float_from_bf16(bf16_from_float(NAN))));
    for (uint32_t bits = 0; bits < 0x10000; bits++) {   /* every bf16 survives the trip */
        const float x = float_from_bf16((uint16_t)bits);
        if (!isnan(x)) ck_assert_uint_eq(bf16_from_float(x), bits);
    }
    /* and the relative error of rounding is at most u16 = 2^-8 (8 significant bits) */
    Rng rng;
    rng_seed(&rng, 3, 3);
    for (int i = 0; i < 100000; i++) {
        const float x = rng_uniform_between(&rng, -1e3f, 1e3f);
        ck_assert(fabsf(float_from_bf16(bf16_from_float(x)) - x) <= 0x1p-8f * fabsf(x));
    }
}
END_TEST

/* c = alpha op(a) op(b) + beta c0 in double from the bf16-rounded operands would be exact up
   to the float sum; the bound (bf16-error) covers both the rounding of the operands and the
   float sum: |c - exact| <= (2 u16 + u16^2 + gamma_k) alpha sum |a||b| + the rounding of
   beta c0 and of the result (2 u |c|). */
START_TEST(bf16_products_are_within_the_bound)
{
    SKIP_WITHOUT_BF16();
    static const int sizes[][3] = {{37, 129, 70}, {200, 33, 65}, {64, 64, 64}, {17, 300, 5},
                                   {128, 256, 512}};
    const double u = 0x1p-24, u16 = 0x1p-8;
    Rng rng;
    rng_seed(&rng, 7, 1);
    const double saved = compute.bf16_min_work;
    for (int s = 0; s < 5; s++)
        for (int t = 0; t < 4; t++) {
            const bool ta = t & 1, tb = t & 2;
            const int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
            const int lda = (ta ? m : k) + 3, ldc = n + 5;   /* wider than the rows */
            const int ldb = (tb ? k : n) + 2;
            const int b_rows = tb ? n : k, a_rows = ta ? k : m;
            float *a = malloc(sizeof(float) * (size_t)a_rows * lda);
            float *b = malloc(sizeof(float) * (size_t)b_rows * ldb);
            float *c = malloc(sizeof(float) * (size_t)m * ldc), *c0 = malloc(sizeof(float) * (size_t)m * ldc);
            for (int i = 0; i < a_rows * lda; i++) a[i] = rng_uniform_between(&rng, -1, 1);
            for (int i = 0; i < b_rows * ldb; i++) b[i] = rng_uniform_between(&rng, -1, 1);
            for (int i = 0; i < m * ldc; i++) c0[i] = c[i] = rng_uniform_between(&rng, -1, 1);
            const float alpha = 0.75f, beta = t == 3 ? 0.0f : 1.0f;
            if (beta == 0.0f)   /* beta = 0 must not read c: a NaN there stays out */
                for (int i = 0; i < m * ldc; i++) c[i] = NAN;
            matmul_bf16(m, n, k, alpha, (MatmulOperand){a, lda, ta},
                        (MatmulOperand){b, ldb, tb}, beta, c, ldc);
            const double gamma = k * u / (1 - k * u);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double exact = 0.0, magnitude = 0.0;
                    for (int p = 0; p < k; p++) {
                        const double x = ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                        const double y = tb ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                        exact += x * y, magnitude += fabs(x * y);
                    }
                    exact = alpha * exact + beta * c0[(size_t)i * ldc + j];
                    const double got = c[(size_t)i * ldc + j];
                    const double bound = (2 * u16 + u16 * u16 + gamma) * alpha * magnitude
                                       + 2 * u * (fabs(got) + fabs(beta * c0[(size_t)i * ldc + j]));
                    ck_assert_msg(fabs(got - exact) <= bound,
                                  "%d x %d x %d, transposes %d %d, (%d, %d): %g vs %g, bound %g",
                                  m, n, k, ta, tb, i, j, got, exact, bound);
                }
            /* the columns past n are not written */
            for (int i = 0; i < m; i++)
                for (int j = n; j < ldc; j++)
                    ck_assert(beta == 0.0f ? isnan(c[(size_t)i * ldc + j])
                                           : c[(size_t)i * ldc + j] == c0[(size_t)i * ldc + j]);
            free(a), free(b), free(c), free(c0);
        }
    compute.bf16_min_work = saved;
}
END_TEST

/* The products really are in bf16: an operand that bf16 cannot hold (1 + 2^-10) gives the
   product of the rounded one (1), not the float product. And matmul sends a product to bf16
   only when the precision says so and it is large enough. */
START_TEST(bf16_products_round_their_operands)
{
    SKIP_WITHOUT_BF16();
    enum { N = 128 };
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
    float *c = malloc(sizeof(float) * N * N);
    for (int i = 0; i < N * N; i++) a[i] = 1.0f + 0x1p-10f, b[i] = 1.0f;
    matmul_bf16(N, N, N, 1.0f, matrix(a, N), matrix(b, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], (float)N);
    const Precision saved = compute.precision;
    compute.precision = PRECISION_FP32;
    matmul(N, N, N, 1.0f, matrix(a, N), matrix(b, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], N * (1.0f + 0x1p-10f));
    compute.precision = PRECISION_BF16;   /* N^3 = 2^21 >= the threshold of 10^6 */
    matmul(N, N, N, 1.0f, matrix(a, N), matrix(b, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], (float)N);
    matmul(8, 8, 8, 1.0f, matrix(a, N), matrix(b, N), 0.0f, c, N);   /* small: float */
    ck_assert_float_eq(c[0], 8 * (1.0f + 0x1p-10f));
    compute.precision = saved;
    free(a), free(b), free(c);
}
END_TEST

/* An operand inside the weights is read from the copy made by bf16_weights_use, until
   bf16_weights_forget: a change of the weights in between is not seen, and is after. */
START_TEST(bf16_weights_copy_is_used_until_forgotten)
{
    SKIP_WITHOUT_BF16();
    enum { N = 64 };
    float *w = malloc(sizeof(float) * 3 * N * N), *x = malloc(sizeof(float) * N * N);
    float *c = malloc(sizeof(float) * N * N);
    for (int i = 0; i < 3 * N * N; i++) w[i] = 2.0f;
    for (int i = 0; i < N * N; i++) x[i] = 1.0f;
    bf16_weights_use(w, 3 * N * N);
    for (int i = 0; i < 3 * N * N; i++) w[i] = 3.0f;   /* the copy still holds 2 */
    const float *view = w + N * N;                     /* a view in the middle */
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), transposed(view, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], 2.0f * N);
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), matrix(view, N), 0.0f, c, N);   /* b not transposed */
    ck_assert_float_eq(c[N * N - 1], 2.0f * N);
    matmul_bf16(N, N, N, 1.0f, matrix(view, N), matrix(x, N), 0.0f, c, N);   /* as a */
    ck_assert_float_eq(c[0], 2.0f * N);
    bf16_weights_forget();
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), transposed(view, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], 3.0f * N);
    free(w), free(x), free(c);
}
END_TEST

/* A held operand is rounded at its first product and read from that copy until its last
   holder releases it: changed meanwhile (which a caller must not do), the products still see
   the old values. Holds nest; a part of the operand (fewer rows) is rounded afresh. And
   linear_backward, which holds its d_out, gives the bits of its two products made apart. */
START_TEST(bf16_held_operand_is_rounded_once)
{
    SKIP_WITHOUT_BF16();
    enum { N = 64 };
    float *x = malloc(sizeof(float) * N * N), *y = malloc(sizeof(float) * N * N);
    float *c = malloc(sizeof(float) * N * N);
    for (int i = 0; i < N * N; i++) x[i] = 1.0f, y[i] = 1.0f;
    bf16_operand_hold(x, N, N);
    bf16_operand_hold(x, N, N);   /* nested */
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), matrix(y, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], 1.0f * N);
    for (int i = 0; i < N * N; i++) x[i] = 2.0f;
    matmul_bf16(N, N, N, 1.0f, matrix(y, N), transposed(x, N), 0.0f, c, N);   /* as b */
    ck_assert_float_eq(c[N * N - 1], 1.0f * N);
    matmul_bf16(N / 2, N, N, 1.0f, matrix(x, N), matrix(y, N), 0.0f, c, N);   /* a part */
    ck_assert_float_eq(c[0], 2.0f * N);
    bf16_operand_release(x);
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), matrix(y, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], 1.0f * N);   /* still held once */
    bf16_operand_release(x);
    matmul_bf16(N, N, N, 1.0f, matrix(x, N), matrix(y, N), 0.0f, c, N);
    ck_assert_float_eq(c[0], 2.0f * N);
    free(x), free(y), free(c);

    enum { ROWS = 40, IN = 48, OUT = 80 };
    float *d_out = malloc(sizeof(float) * ROWS * OUT), *in = malloc(sizeof(float) * ROWS * IN);
    float *w = malloc(sizeof(float) * OUT * IN);
    float *d_in[2], *d_w[2];
    Rng rng;
    rng_seed(&rng, 4, 4);
    for (int i = 0; i < ROWS * OUT; i++) d_out[i] = rng_uniform(&rng) - 0.5f;
    for (int i = 0; i < ROWS * IN; i++) in[i] = rng_uniform(&rng) - 0.5f;
    for (int i = 0; i < OUT * IN; i++) w[i] = rng_uniform(&rng) - 0.5f;
    for (int k = 0; k < 2; k++) {
        d_in[k] = calloc(ROWS * IN, sizeof(float)), d_w[k] = calloc(OUT * IN, sizeof(float));
    }
    const ComputeSettings saved = compute;
    compute.precision = PRECISION_BF16, compute.bf16_min_work = 0;
    linear_backward(d_in[0], d_w[0], NULL, d_out, in, w, ROWS, IN, OUT);
    matmul_bf16(ROWS, IN, OUT, 1.0f, matrix(d_out, OUT), matrix(w, IN), 1.0f, d_in[1], IN);
    matmul_bf16(OUT, IN, ROWS, 1.0f, transposed(d_out, OUT), matrix(in, IN), 1.0f, d_w[1], IN);
    compute = saved;
    ck_assert(memcmp(d_in[0], d_in[1], sizeof(float) * ROWS * IN) == 0);
    ck_assert(memcmp(d_w[0], d_w[1], sizeof(float) * OUT * IN) == 0);
    for (int k = 0; k < 2; k++) free(d_in[k]), free(d_w[k]);
    free(d_out), free(in), free(w);
}
END_TEST

/* ---- whole training steps ---- */

typedef struct {
    Trainer trainer;   /* a small model with dropout and smoothing, as a run sets it up */
    int *full;         /* [R_BATCH][R_LEN]: the sequences of a batch */
} Run1;

enum { R_BATCH = 8, R_LEN = 12, R_VOCAB = 17 };

static void run1_init(Run1 *t)
{
    Config config = config_default(R_VOCAB, R_VOCAB, 2);
    config.d_model = 64, config.d_ff = 128, config.heads = 4, config.max_len = R_LEN;
    const StepSettings settings = {.smoothing = 0.1f, .factor = 1.0, .warmup = 4, .pad = 0};
    const BatchBounds bounds = fixed_bounds(R_BATCH, R_LEN);
    trainer_setup(&t->trainer, config, 9, &bounds, &settings);
    t->full = malloc(sizeof(int) * R_BATCH * R_LEN);
}

static double run1_step(Run1 *t)
{
    return copy_task_step(&t->trainer, t->full, R_VOCAB, false);
}

static void run1_free(Run1 *t)
{
    free(t->full);
    trainer_free(&t->trainer);
}

/* One step in bf16 (every product outside the heads' loop in bf16: the threshold at 0)
   against the same step in float. Each operand carries a relative rounding of at most
   u16 = 2^-8, so each product is off by at most 2 u16 = 2^-7 of sum |a||b| (equation
   bf16-error). The loss is a mean over 88 positions of values each a few products deep,
   whose roundings are independent and partly cancel: within 2^-6 relatively (two
   products' worth). A gradient passes through some dozen products in sequence (forward
   and backward of two layers); independent errors of 2^-7 each add up in norm to about
   2^-7 sqrt(12) = 0.027: the gradient vector within 2^-4 = 0.0625 in relative norm, and
   no element off by more than 2^-3 of the largest. A wrong operand, transpose or scale
   anywhere would give errors of order 1. (Measured on the machine of the book: 1.4e-4,
   0.016 and 0.012.) And the two are not equal: the products did run in bf16. */
START_TEST(bf16_step_agrees_with_float)
{
    SKIP_WITHOUT_BF16();
    const double saved = compute.bf16_min_work;
    Run1 full, half;
    compute.precision = PRECISION_FP32;
    run1_init(&full);
    const double loss_full = run1_step(&full);
    compute.precision = PRECISION_BF16, compute.bf16_min_work = 0;
    run1_init(&half);
    const double loss_half = run1_step(&half);
    compute.precision = PRECISION_FP32, compute.bf16_min_work = saved;
    ck_assert_double_eq_tol(loss_half, loss_full, 0x1p-6 * loss_full);
    ck_assert(loss_half != loss_full);
    /* the gradients as left by the step (Adam does not change them) */
    const float *g_full = full.trainer.model.gradients.data;
    const float *g_half = half.trainer.model.gradients.data;
    double norm = 0.0, difference = 0.0, largest = 0.0, largest_difference = 0.0;
    for (size_t i = 0; i < full.trainer.model.gradients.total; i++) {
        const double d = (double)g_half[i] - g_full[i];
        norm += (double)g_full[i] * g_full[i], difference += d * d;
        largest = fmax(largest, fabs(g_full[i]));
        largest_difference = fmax(largest_difference, fabs(d));
    }
    printf("bf16_step_agrees_with_float: loss %.6f vs %.6f (relative %.2g), gradient "
           "relative norm %.2g, largest element difference %.2g of the largest\n",
           loss_half, loss_full, fabs(loss_half - loss_full) / loss_full,
           sqrt(difference / norm), largest_difference / largest);
    ck_assert_double_gt(norm, 0.0);
    ck_assert_double_le(sqrt(difference / norm), 0x1p-4);
    ck_assert_double_le(largest_difference, 0x1p-3 * largest);
    ck_assert_double_gt(difference, 0.0);
    run1_free(&full), run1_free(&half);
}
END_TEST

/* Two runs in bf16 with the same seeds and threads give the same parameters, bit for bit,
   after several steps (oneDNN's kernels sum in a fixed order for a given thread count). */
START_TEST(bf16_training_is_deterministic)
{
    SKIP_WITHOUT_BF16();
    const double saved = compute.bf16_min_work;
    compute.precision = PRECISION_BF16, compute.bf16_min_work = 0;
    Run1 x, y;
    run1_init(&x), run1_init(&y);
    for (int s = 0; s < 4; s++) {
        const double loss_x = run1_step(&x), loss_y = run1_step(&y);
        ck_assert(loss_x == loss_y);
    }
    ck_assert(memcmp(x.trainer.model.parameters.data, y.trainer.model.parameters.data,
                     x.trainer.model.parameters.total * sizeof(float)) == 0);
    compute.precision = PRECISION_FP32, compute.bf16_min_work = saved;
    run1_free(&x), run1_free(&y);
}
END_TEST

/* ---- the command line ---- */

/* The small copy task of cli_copy_task_learns, twice as wide so that its products (400 rows
   by 64 by 64 and more) reach the bf16 threshold, still copies every example exactly
   (status 0, eight "exact") when it computes in bf16. */
START_TEST(cli_copy_task_decodes_exactly_in_bf16)
{
    SKIP_WITHOUT_BF16();
    Run *r = run("OMP_NUM_THREADS=1",
                 "copy --d-model 64 --d-ff 128 --heads 2 --batch-size 40 --precision bf16");
    ck_assert_msg(r->status == 0, "status %d: %s\n%s", r->status, r->err, r->out);
    int exact = 0;
    for (const char *p = r->out; (p = strstr(p, " exact\n")) != NULL; p++) exact++;
    ck_assert_int_eq(exact, 8);
}
END_TEST

/* Resumption is bit-exact in bf16 too: 10 steps at once against 4 + 6 with a resumption,
   same checkpoint bytes. A checkpoint notes its precision, and resuming in the other one
   warns on one line. */
START_TEST(cli_resume_is_bit_exact_in_bf16)
{
    SKIP_WITHOUT_BF16();
    const char *small = "copy --d-model 64 --d-ff 128 --heads 4 --batch-size 40 --batches 5 "
                        "--epochs 2 --precision bf16";
    char a[64], b[64], arguments[1024];
    snprintf(a, sizeof a, "/tmp/bf16-a-%d.safetensors", (int)getpid());
    snprintf(b, sizeof b, "/tmp/bf16-b-%d.safetensors", (int)getpid());
    snprintf(arguments, sizeof arguments, "%s --checkpoint %s", small, a);
    Run *r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
    snprintf(arguments, sizeof arguments, "%s --checkpoint %s --stop-after 4", small, b);
    r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(arguments, sizeof arguments, "%s --resume %s", small, b);
    r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "warning") == NULL, "%s", r->err);
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    ck_assert(fa && fb);
    int ca, cb;
    long at = 0;
    do {
        ca = fgetc(fa), cb = fgetc(fb);
        ck_assert_msg(ca == cb, "the checkpoints differ at byte %ld", at);
        at++;
    } while (ca != EOF);
    fclose(fa), fclose(fb);
    /* the other precision warns */
    snprintf(arguments, sizeof arguments,
             "copy --d-model 64 --d-ff 128 --heads 4 --batch-size 40 --batches 5 --epochs 3 "
             "--precision fp32 --resume %s --stop-after 11", b);
    r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "written by a run in bf16 and this one computes in fp32"),
                  "%s", r->err);
    unlink(a), unlink(b);
}
END_TEST

/* Where oneDNN may not use the bf16 instructions, --precision bf16 is refused on one line
   with status 2 (ONEDNN_MAX_CPU_ISA imitates such a processor), and the default is fp32. */
START_TEST(cli_bf16_is_refused_without_the_instructions)
{
    Run *r = run("ONEDNN_MAX_CPU_ISA=AVX2",
                 "benchmark train --d-model 16 --d-ff 16 --heads 2 --steps 1 --precision bf16");
    ck_assert_int_eq(r->status, 2);
    ck_assert_msg(strstr(r->err, "transformer benchmark: --precision bf16 needs a processor "
                                 "with AVX512_BF16")
                  && strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
    r = run("ONEDNN_MAX_CPU_ISA=AVX2",
            "benchmark train --d-model 16 --d-ff 16 --heads 2 --steps 1 --warmup-steps 1");
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "precision=fp32"));
    ck_assert_ptr_null(strstr(r->out, "bf16_gflops"));
    r = run("", "benchmark train --precision fp16");
    ck_assert_int_eq(r->status, 2);
}
END_TEST

Suite *bf16_suite(void)
{
    Suite *suite = suite_create("bf16");
    TCase *products = tcase_create("products");
    tcase_add_test(products, bf16_rounding_is_to_nearest_even);
    tcase_add_test(products, bf16_products_are_within_the_bound);
    tcase_add_test(products, bf16_products_round_their_operands);
    tcase_add_test(products, bf16_weights_copy_is_used_until_forgotten);
    tcase_add_test(products, bf16_held_operand_is_rounded_once);
    suite_add_tcase(suite, products);
    TCase *steps = tcase_create("training steps");
    tcase_add_test(steps, bf16_step_agrees_with_float);
    tcase_add_test(steps, bf16_training_is_deterministic);
    suite_add_tcase(suite, steps);
    TCase *command = tcase_create("command line");
    tcase_set_timeout(command, 1200);   /* the copy task: 20 s on a quiet machine */
    tcase_add_test(command, cli_copy_task_decodes_exactly_in_bf16);
    tcase_add_test(command, cli_resume_is_bit_exact_in_bf16);
    tcase_add_test(command, cli_bf16_is_refused_without_the_instructions);
    suite_add_tcase(suite, command);
    return suite;
}
