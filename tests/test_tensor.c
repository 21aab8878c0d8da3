/* test_tensor.c -- the tensor chapter: the random number generator, flat buffers, matrix products. */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tensor.h"
#include "tests.h"

/* ---------------------------------------------------------------- random numbers */

/* The first outputs of PCG32 for seed 42, stream 54, as printed by the demonstration program
   of the PCG reference implementation (pcg32-demo), and as quoted in the tensor chapter. */
START_TEST(rng_matches_pcg32_reference)
{
    static const uint32_t expected[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                         0x83d2f293, 0xbfa4784b, 0xcbed606e};
    Rng rng;
    rng_seed(&rng, 42, 54);
    for (int i = 0; i < 6; i++) ck_assert_uint_eq(rng_next(&rng), expected[i]);
}
END_TEST

/* Uniform numbers are the top 24 bits times 2^-24: exact, so compared exactly. The values
   are those of the book's text and of the solution of its first exercise. */
START_TEST(rng_uniform_documented_values)
{
    Rng rng;
    rng_seed(&rng, 42, 54);
    ck_assert_float_eq(rng_uniform(&rng), 10574850.0f / 16777216.0f);
    ck_assert_float_eq(rng_uniform(&rng), 8079348.0f / 16777216.0f);
    ck_assert_float_eq(rng_uniform(&rng), 12197171.0f / 16777216.0f);
    ck_assert_float_eq_tol(10574850.0f / 16777216.0f, 0.6303102f, 1e-7f);
}
END_TEST

/* rng_normal is Box-Muller on two consecutive outputs: u1 = (top 24 bits + 1) 2^-24,
   u2 = (top 24 bits) 2^-24, computed in double and rounded once. */
START_TEST(rng_normal_is_box_muller_of_the_stream)
{
    Rng bits, normal;
    rng_seed(&bits, 7, 3);
    rng_seed(&normal, 7, 3);
    for (int i = 0; i < 100; i++) {
        double u1 = (double)((rng_next(&bits) >> 8) + 1) / 16777216.0;
        double u2 = (double)(rng_next(&bits) >> 8) / 16777216.0;
        float expected = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        ck_assert_float_eq(rng_normal(&normal), expected);
    }
}
END_TEST

START_TEST(rng_is_reproducible_and_streams_differ)
{
    Rng a, b, other_stream, other_seed;
    rng_seed(&a, 1234, 1);
    rng_seed(&b, 1234, 1);
    rng_seed(&other_stream, 1234, 2);
    rng_seed(&other_seed, 1235, 1);
    int same_stream_differs = 0, streams_equal = 0, seeds_equal = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = rng_next(&a);
        same_stream_differs += x != rng_next(&b);
        streams_equal += x == rng_next(&other_stream);
        seeds_equal += x == rng_next(&other_seed);
    }
    ck_assert_int_eq(same_stream_differs, 0);
    ck_assert_int_le(streams_equal, 2);   /* equal outputs by chance: expected 1000 / 2^32 */
    ck_assert_int_le(seeds_equal, 2);
    /* The whole state is the struct: a copy continues the same stream (checkpoint/resume). */
    Rng saved = a;
    uint32_t next = rng_next(&a);
    ck_assert_uint_eq(rng_next(&saved), next);
}
END_TEST

/* Sample moments of 10^6 draws. Standard errors: uniform mean sqrt(1/12/N) = 0.00029,
   normal mean 1/sqrt(N) = 0.001, normal variance sqrt(2/N) = 0.0014; bounds are 5 of them. */
START_TEST(rng_moments)
{
    enum { N = 1000000 };
    Rng rng;
    rng_seed(&rng, 2024, 5);
    double sum = 0, low = 1, high = 0;
    for (int i = 0; i < N; i++) {
        float u = rng_uniform(&rng);
        sum += u;
        low = fmin(low, u);
        high = fmax(high, u);
    }
    ck_assert_double_ge(low, 0.0);
    ck_assert_double_lt(high, 1.0);
    ck_assert_double_eq_tol(sum / N, 0.5, 5 * 0.00029);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        double z = rng_normal(&rng);
        ck_assert(isfinite(z));
        s1 += z;
        s2 += z * z;
    }
    double mean = s1 / N, variance = s2 / N - mean * mean;
    ck_assert_double_eq_tol(mean, 0.0, 5 * 0.001);
    ck_assert_double_eq_tol(variance, 1.0, 5 * 0.0014);
    for (int i = 0; i < 1000; i++) {
        float x = rng_uniform_between(&rng, -0.25f, 0.75f);
        ck_assert(x >= -0.25f && x < 0.75f);
    }
}
END_TEST

/* ---------------------------------------------------------------- flat buffers */

/* The layout of an exercise of the tensor chapter: [11][30] at 0, [30] at the next multiple of 16 floats. */
START_TEST(flat_buffer_layout_and_views)
{
    FlatBuffer parameters = {0}, gradients = {0};
    int embedding = flat_add(&parameters, "src_embed.0.lut.weight", 2, (int[]){11, 30});
    int bias = flat_add(&parameters, "generator.proj.bias", 1, (int[]){30});
    ck_assert_int_eq(embedding, 0);
    ck_assert_int_eq(bias, 1);
    ck_assert_uint_eq(parameters.views[embedding].offset, 0);
    ck_assert_uint_eq(parameters.views[embedding].size, 330);
    ck_assert_uint_eq(parameters.views[bias].offset, 336);
    ck_assert_uint_eq(parameters.total, 366);
    ck_assert_int_eq(flat_find(&parameters, "generator.proj.bias"), bias);
    ck_assert_int_eq(flat_find(&parameters, "generator.proj.weight"), -1);

    flat_allocate(&parameters);
    ck_assert_uint_eq((uintptr_t)parameters.data % 64, 0);
    for (size_t i = 0; i < parameters.total; i++) ck_assert_float_eq(parameters.data[i], 0.0f);
    float *e = flat_view(&parameters, embedding), *b = flat_view(&parameters, bias);
    ck_assert_uint_eq((uintptr_t)b % 64, 0);
    for (int i = 0; i < 330; i++) e[i] = 1.0f;
    for (int i = 0; i < 30; i++) b[i] = 2.0f;
    ck_assert_float_eq(e[329], 1.0f);          /* the views do not overlap */
    ck_assert_float_eq(b[0], 2.0f);

    flat_allocate_like(&gradients, &parameters);
    ck_assert_int_eq(gradients.count, 2);
    ck_assert_uint_eq(gradients.total, parameters.total);
    ck_assert_uint_eq(gradients.views[bias].offset, parameters.views[bias].offset);
    ck_assert_str_eq(gradients.views[bias].name, "generator.proj.bias");
    ck_assert_int_eq(gradients.views[embedding].shape[1], 30);
    ck_assert_float_eq(flat_view(&gradients, bias)[0], 0.0f);
    flat_free(&parameters);
    flat_free(&gradients);
    ck_assert_ptr_null(parameters.data);
}
END_TEST

/* Broken invariants: run fn in a child process, which must abort (SIGABRT) after printing
   one line "book/tensor.nw:LINE: internal error: CONDITION: message" -- the place in the
   book, thanks to the #line directives, not in tangled/. */
static void expect_internal_error(void (*fn)(void), const char *condition_and_message)
{
    int pipe_fds[2];
    ck_assert_int_eq(pipe(pipe_fds), 0);
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        fn();
        _exit(0);   /* not reached when the invariant is enforced */
    }
    close(pipe_fds[1]);
    char message[1024];
    size_t length = 0;
    ssize_t got;
    while ((got = read(pipe_fds[0], message + length, sizeof message - 1 - length)) > 0)
        length += (size_t)got;
    close(pipe_fds[0]);
    message[length] = '\0';
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "no abort: %s", message);
    ck_assert_msg(strncmp(message, "book/tensor.nw:", 15) == 0, "not a book line: %s", message);
    const char *after_line = message + 15 + strspn(message + 15, "0123456789");
    ck_assert_msg(after_line > message + 15 && strncmp(after_line, ": internal error: ", 18) == 0,
                  "no line number: %s", message);
    ck_assert_msg(strstr(message, condition_and_message) != NULL, "unexpected: %s", message);
    ck_assert_msg(strchr(message, '\n') == message + length - 1, "not one line: %s", message);
}

static void add_a_view_twice(void)
{
    FlatBuffer buffer = {0};
    flat_add(&buffer, "x", 1, (int[]){3});
    flat_add(&buffer, "x", 1, (int[]){3});
}

static void add_a_view_after_allocation(void)
{
    FlatBuffer buffer = {0};
    flat_add(&buffer, "x", 1, (int[]){3});
    flat_allocate(&buffer);
    flat_add(&buffer, "y", 1, (int[]){3});
}

static void multiply_with_a_short_leading_dimension(void)
{
    float a[6] = {0}, b[6] = {0}, c[4] = {0};
    matmul_blas(2, 2, 3, 1.0f, matrix(a, 2 /* < k = 3 */), matrix(b, 2), 0.0f, c, 2);
}

/* c = a b with c written over the last row of a: BLAS forbids it, so must we (both kernels). */
static void multiply_into_an_operand_blas(void)
{
    float a[6] = {0}, b[6] = {0};
    matmul_blas(2, 2, 3, 1.0f, matrix(a, 3), matrix(b, 2), 0.0f, a + 3, 2);
}

static void multiply_into_an_operand_reference(void)
{
    float a[6] = {0}, b[6] = {0};
    matmul_reference(2, 2, 3, 1.0f, matrix(a, 3), transposed(b, 3), 0.0f, b + 4, 2);
}

START_TEST(broken_invariants_abort_naming_the_book_line)
{
    expect_internal_error(add_a_view_twice, "flat_find(buffer, name) < 0: view x added twice");
    expect_internal_error(add_a_view_after_allocation,
                          "buffer->data == NULL: view y added after the buffer was allocated");
    expect_internal_error(multiply_with_a_short_leading_dimension, "leading dimension lda=2 too small");
    expect_internal_error(multiply_into_an_operand_blas, "the product's result overlaps an operand");
    expect_internal_error(multiply_into_an_operand_reference,
                          "the product's result overlaps an operand");
}
END_TEST

/* ---------------------------------------------------------------- matrix products */

/* A = [[1 2 3] [4 5 6]] (2x3), B = [[7 8] [9 10] [11 12]] (3x2): A B = [[58 64] [139 154]].
   Each operand is also stored transposed, and every combination must give the same product,
   exactly (small integers are exact in float). */
START_TEST(matmul_reference_hand_computed)
{
    const float a[6] = {1, 2, 3, 4, 5, 6}, a_t[6] = {1, 4, 2, 5, 3, 6};
    const float b[6] = {7, 8, 9, 10, 11, 12}, b_t[6] = {7, 9, 11, 8, 10, 12};
    const float expected[4] = {58, 64, 139, 154};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            float c[4] = {1, 1, 1, 1};
            matmul_reference(2, 2, 3, 1.0f, (MatmulOperand){ta ? a_t : a, ta ? 2 : 3, ta},
                             (MatmulOperand){tb ? b_t : b, tb ? 3 : 2, tb}, 0.0f, c, 2);
            for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], expected[i]);
            /* c += 0.5 a b */
            matmul_reference(2, 2, 3, 0.5f, (MatmulOperand){ta ? a_t : a, ta ? 2 : 3, ta},
                             (MatmulOperand){tb ? b_t : b, tb ? 3 : 2, tb}, 1.0f, c, 2);
            for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], 1.5f * expected[i]);
        }
}
END_TEST

/* gamma_n = n u / (1 - n u), u = 2^-24: the dot-product error bound of the tensor chapter. */
static double gamma_n(int n)
{
    double u = 0x1p-24;
    return n * u / (1 - n * u);
}

/* Reference vs OpenBLAS on all four transpose cases, odd sizes, leading dimensions larger
   than the rows, three values of beta (beta = 0 with NaN in C: it must be ignored).
   Bound per element: both kernels are within gamma_{k+2} (|alpha| sum_p |a_ip b_pj| +
   |beta c_ij|) of the exact value (k products and sums, then the scaling by alpha and the
   addition of beta c), so they differ by at most twice that. */
START_TEST(matmul_reference_agrees_with_blas)
{
    static const int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {67, 61, 59}, {33, 1, 17},
                                   {1, 45, 64}, {16, 16, 16}, {5, 9, 0}};
    static const float betas[] = {0.0f, 1.0f, -0.5f};
    Rng rng;
    rng_seed(&rng, 99, 0);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int bi = 0; bi < 3; bi++) {
                    int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
                    int a_rows = ta ? k : m, a_cols = ta ? m : k;
                    int b_rows = tb ? n : k, b_cols = tb ? k : n;
                    int lda = a_cols + 3, ldb = b_cols + 2, ldc = n + 1;
                    float alpha = 0.75f, beta = betas[bi];
                    float *a = malloc(sizeof(float) * (size_t)(a_rows * lda + 1));
                    float *b = malloc(sizeof(float) * (size_t)(b_rows * ldb + 1));
                    float *c0 = malloc(sizeof(float) * (size_t)(m * ldc + 1));
                    float *c_ref = malloc(sizeof(float) * (size_t)(m * ldc + 1));
                    float *c_blas = malloc(sizeof(float) * (size_t)(m * ldc + 1));
                    for (int i = 0; i < a_rows * lda; i++) a[i] = rng_uniform_between(&rng, -1, 1);
                    for (int i = 0; i < b_rows * ldb; i++) b[i] = rng_uniform_between(&rng, -1, 1);
                    for (int i = 0; i < m * ldc; i++)
                        c0[i] = beta == 0.0f ? NAN : rng_uniform_between(&rng, -1, 1);
                    memcpy(c_ref, c0, sizeof(float) * (size_t)(m * ldc));
                    memcpy(c_blas, c0, sizeof(float) * (size_t)(m * ldc));
                    matmul_reference(m, n, k, alpha, (MatmulOperand){a, lda, ta},
                                     (MatmulOperand){b, ldb, tb}, beta, c_ref, ldc);
                    matmul_blas(m, n, k, alpha, (MatmulOperand){a, lda, ta},
                                (MatmulOperand){b, ldb, tb}, beta, c_blas, ldc);
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double magnitude = 0;
                            for (int p = 0; p < k; p++) {
                                double x = ta ? a[p * lda + i] : a[i * lda + p];
                                double y = tb ? b[j * ldb + p] : b[p * ldb + j];
                                magnitude += fabs(x * y);
                            }
                            double old = beta == 0.0f ? 0.0 : fabs(beta * c0[i * ldc + j]);
                            double bound = 2 * gamma_n(k + 2) * (alpha * magnitude + old);
                            float r = c_ref[i * ldc + j], f = c_blas[i * ldc + j];
                            ck_assert_msg(isfinite(r) && isfinite(f), "NaN leaked (beta %g)", beta);
                            ck_assert_msg(fabs((double)r - f) <= bound,
                                          "m=%d n=%d k=%d ta=%d tb=%d beta=%g (%d,%d): "
                                          "%.9g vs %.9g, bound %.3g",
                                          m, n, k, ta, tb, beta, i, j, r, f, bound);
                        }
                    free(a); free(b); free(c0); free(c_ref); free(c_blas);
                }
}
END_TEST

/* alpha = 0: BLAS reads neither A nor B, so NaN there must not reach C = beta C. */
START_TEST(matmul_alpha_zero_reads_neither_a_nor_b)
{
    const float a[6] = {NAN, 1, 2, 3, 4, 5}, b[6] = {1, NAN, 2, 3, 4, 5};
    for (int kernel = 0; kernel < 2; kernel++) {
        float c[4] = {1, 2, 3, 4};
        (kernel ? matmul_blas : matmul_reference)(2, 2, 3, 0.0f, matrix(a, 3), matrix(b, 2),
                                                  0.5f, c, 2);
        for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], 0.5f * (float)(i + 1));
    }
}
END_TEST

/* The same rule on the single-row path (m = 1, a matrix-vector product) and with alpha = 0
   and beta = 0 together: c becomes zeros, even where it held NaN. */
START_TEST(matmul_alpha_zero_single_row_and_beta_zero)
{
    const float a[3] = {NAN, 1, 2}, b[6] = {1, NAN, 2, 3, 4, 5};
    for (int kernel = 0; kernel < 2; kernel++) {
        float c[2] = {1, 2};
        (kernel ? matmul_blas : matmul_reference)(1, 2, 3, 0.0f, matrix(a, 3), matrix(b, 2),
                                                  0.5f, c, 2);
        ck_assert_float_eq(c[0], 0.5f);
        ck_assert_float_eq(c[1], 1.0f);
        float d[2] = {NAN, INFINITY};
        (kernel ? matmul_blas : matmul_reference)(1, 2, 3, 0.0f, matrix(a, 3), matrix(b, 2),
                                                  0.0f, d, 2);
        ck_assert_float_eq(d[0], 0.0f);
        ck_assert_float_eq(d[1], 0.0f);
    }
}
END_TEST

/* beta = 0: the old c is not read, so NaN and infinity in it never reach the result; on
   every path (one row, a small product, a large one that may be split between threads). */
START_TEST(matmul_beta_zero_ignores_nan_in_c)
{
    enum { M = 64, N = 80, K = 48 };
    static float a[M * K], b[K * N], c[M * N], expected[M * N];
    Rng rng;
    rng_seed(&rng, 11, 3);
    for (int i = 0; i < M * K; i++) a[i] = rng_uniform(&rng);
    for (int i = 0; i < K * N; i++) b[i] = rng_uniform(&rng);
    const int rows[3] = {1, 3, M};
    for (int r = 0; r < 3; r++) {
        const int m = rows[r];
        matmul_reference(m, N, K, 1.0f, matrix(a, K), matrix(b, N), 0.0f, expected, N);
        for (int i = 0; i < m * N; i++) c[i] = i % 2 ? NAN : -INFINITY;
        matmul_blas(m, N, K, 1.0f, matrix(a, K), matrix(b, N), 0.0f, c, N);
        for (int i = 0; i < m * N; i++) {
            ck_assert_msg(isfinite(c[i]), "m=%d: c[%d] = %g", m, i, c[i]);
            /* a dot product of K terms in [0, 1): the bound of equation (dot-error), twice */
            ck_assert_float_eq_tol(c[i], expected[i], 2.0f * K * 0x1p-24f * K);
        }
    }
}
END_TEST

/* k = 0: an empty sum, so c = beta c, and neither a nor b is touched (they may be NULL). */
START_TEST(matmul_empty_inner_dimension_scales_c)
{
    for (int kernel = 0; kernel < 2; kernel++) {
        float c[4] = {1, 2, NAN, 4};
        (kernel ? matmul_blas : matmul_reference)(2, 2, 0, 1.0f, matrix(NULL, 1),
                                                  matrix(NULL, 2), 0.0f, c, 2);
        for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], 0.0f);
        float d[4] = {1, 2, 3, 4};
        (kernel ? matmul_blas : matmul_reference)(2, 2, 0, 1.0f, transposed(NULL, 2),
                                                  transposed(NULL, 1), 2.0f, d, 2);
        for (int i = 0; i < 4; i++) ck_assert_float_eq(d[i], 2.0f * (float)(i + 1));
    }
}
END_TEST

/* matmul forwards to the kernel that compute.matmul names. */
START_TEST(matmul_dispatches_to_the_chosen_kernel)
{
    float a[12], b[20], c_reference[15], c_chosen[15];
    Rng rng;
    rng_seed(&rng, 5, 5);
    for (int i = 0; i < 12; i++) a[i] = rng_uniform(&rng);
    for (int i = 0; i < 20; i++) b[i] = rng_uniform(&rng);
    matmul_reference(3, 5, 4, 1.0f, matrix(a, 4), matrix(b, 5), 0.0f, c_reference, 5);
    MatmulKernel saved = compute.matmul;
    compute.matmul = MATMUL_REFERENCE;
    matmul(3, 5, 4, 1.0f, matrix(a, 4), matrix(b, 5), 0.0f, c_chosen, 5);
    compute.matmul = saved;
    ck_assert_mem_eq(c_reference, c_chosen, sizeof c_chosen);
}
END_TEST

Suite *tensor_suite(void)
{
    Suite *suite = suite_create("tensor");
    TCase *rng = tcase_create("random numbers");
    tcase_add_test(rng, rng_matches_pcg32_reference);
    tcase_add_test(rng, rng_uniform_documented_values);
    tcase_add_test(rng, rng_normal_is_box_muller_of_the_stream);
    tcase_add_test(rng, rng_is_reproducible_and_streams_differ);
    tcase_add_test(rng, rng_moments);
    tcase_set_timeout(rng, 60);
    suite_add_tcase(suite, rng);

    TCase *flat = tcase_create("flat buffers");
    tcase_add_test(flat, flat_buffer_layout_and_views);
    suite_add_tcase(suite, flat);

    TCase *mm = tcase_create("matrix products");
    tcase_add_test(mm, matmul_reference_hand_computed);
    tcase_add_test(mm, matmul_reference_agrees_with_blas);
    tcase_add_test(mm, matmul_alpha_zero_reads_neither_a_nor_b);
    tcase_add_test(mm, matmul_alpha_zero_single_row_and_beta_zero);
    tcase_add_test(mm, matmul_beta_zero_ignores_nan_in_c);
    tcase_add_test(mm, matmul_empty_inner_dimension_scales_c);
    tcase_add_test(mm, matmul_dispatches_to_the_chosen_kernel);
    tcase_set_timeout(mm, 60);
    suite_add_tcase(suite, mm);

    TCase *invariants = tcase_create("invariants");
    tcase_add_test(invariants, broken_invariants_abort_naming_the_book_line);
    suite_add_tcase(suite, invariants);
    return suite;
}
