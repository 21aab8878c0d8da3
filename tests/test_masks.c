/* test_masks.c -- the masks chapter: padding, subsequent and target masks; masked scores. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "layers.h"
#include "tests.h"

START_TEST(padding_mask_keeps_real_tokens)
{
    const int tokens[2][5] = {{0, 7, 8, 1, 2}, {0, 9, 1, 2, 2}};   /* pad = 2 */
    const uint8_t expected[2][5] = {{1, 1, 1, 1, 0}, {1, 1, 1, 0, 0}};
    uint8_t keep[2][5];
    memset(keep, 7, sizeof keep);
    padding_mask(&keep[0][0], &tokens[0][0], 2, 5, 2);
    ck_assert_mem_eq(keep, expected, sizeof keep);
}
END_TEST

START_TEST(subsequent_mask_is_lower_triangular)
{
    for (int len = 1; len <= 20; len++) {
        uint8_t keep[20 * 20];
        subsequent_mask(keep, len);
        int ones = 0;
        for (int i = 0; i < len; i++)
            for (int j = 0; j < len; j++) {
                ck_assert_int_eq(keep[i * len + j], j <= i);
                ones += keep[i * len + j];
            }
        ck_assert_int_eq(ones, len * (len + 1) / 2);   /* 210 for len = 20 */
    }
}
END_TEST

/* A hand-written case, then the definition (Equation 3.3) on random batches. */
START_TEST(target_mask_combines_padding_and_future)
{
    const int tokens[1][4] = {{0, 5, 2, 2}};   /* <s> word <blank> <blank>, pad = 2 */
    const uint8_t expected[1][4][4] = {{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 0, 0}, {1, 1, 0, 0}}};
    uint8_t keep[1][4][4];
    target_mask(&keep[0][0][0], &tokens[0][0], 1, 4, 2);
    ck_assert_mem_eq(keep, expected, sizeof keep);

    enum { B = 4, T = 9 };
    int random_tokens[B][T];
    uint8_t full[B][T][T], pad[B][T], causal[T][T];
    Rng rng;
    rng_seed(&rng, 3, 3);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) random_tokens[b][t] = (int)(rng_next(&rng) % 4);
    target_mask(&full[0][0][0], &random_tokens[0][0], B, T, 0);
    padding_mask(&pad[0][0], &random_tokens[0][0], B, T, 0);
    subsequent_mask(&causal[0][0], T);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                ck_assert_int_eq(full[b][i][j], pad[b][j] && causal[i][j]);
                ck_assert_int_eq(full[b][i][j], random_tokens[b][j] != 0 && j <= i);
            }
}
END_TEST

/* A full mask (row stride = cols) and a broadcast one (row stride 0). */
START_TEST(mask_scores_sets_minus_infinity)
{
    float scores[2][3] = {{1, 2, 3}, {4, 5, 6}};
    const uint8_t full[2][3] = {{1, 0, 1}, {0, 1, 1}};
    mask_scores(&scores[0][0], &full[0][0], 3, 2, 3);
    ck_assert_float_eq(scores[0][0], 1);
    ck_assert(isinf(scores[0][1]) && scores[0][1] < 0);
    ck_assert_float_eq(scores[0][2], 3);
    ck_assert(isinf(scores[1][0]) && scores[1][0] < 0);
    ck_assert_float_eq(scores[1][1], 5);
    ck_assert_float_eq(expf(scores[0][1] - 3), 0.0f);   /* weight exactly zero */

    float broadcast_scores[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    const uint8_t row[2] = {1, 0};
    mask_scores(&broadcast_scores[0][0], row, 0, 3, 2);
    for (int i = 0; i < 3; i++) {
        ck_assert_float_eq(broadcast_scores[i][0], (float)(2 * i + 1));
        ck_assert(isinf(broadcast_scores[i][1]));
    }
}
END_TEST

/* The masks chapter: -1e9 (the reference) and -infinity (ours) give the same softmax weights,
   bit for bit, for every row that keeps at least one key. */
static void softmax_row(float *p, const float *s, int n)
{
    float m = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++) m = fmaxf(m, s[j]);
    for (int j = 0; j < n; j++) sum += (p[j] = expf(s[j] - m));
    for (int j = 0; j < n; j++) p[j] /= sum;
}

START_TEST(minus_1e9_and_minus_infinity_agree_on_kept_rows)
{
    Rng rng;
    rng_seed(&rng, 11, 1);
    for (int trial = 0; trial < 200; trial++) {
        enum { N = 12 };
        float raw[N], with_inf[N], with_1e9[N], p_inf[N], p_1e9[N];
        uint8_t keep[N];
        for (int j = 0; j < N; j++) {
            raw[j] = rng_uniform_between(&rng, -30, 30);
            keep[j] = rng_next(&rng) % 3 != 0;
        }
        keep[rng_next(&rng) % N] = 1;   /* at least one key kept */
        memcpy(with_inf, raw, sizeof raw);
        mask_scores(with_inf, keep, 0, 1, N);
        for (int j = 0; j < N; j++) with_1e9[j] = keep[j] ? raw[j] : -1e9f;
        softmax_row(p_inf, with_inf, N);
        softmax_row(p_1e9, with_1e9, N);
        ck_assert_mem_eq(p_inf, p_1e9, sizeof p_inf);
        for (int j = 0; j < N; j++)
            if (!keep[j]) ck_assert_float_eq(p_inf[j], 0.0f);
    }
}
END_TEST

Suite *masks_suite(void)
{
    Suite *suite = suite_create("masks");
    TCase *masks = tcase_create("masks");
    tcase_add_test(masks, padding_mask_keeps_real_tokens);
    tcase_add_test(masks, subsequent_mask_is_lower_triangular);
    tcase_add_test(masks, target_mask_combines_padding_and_future);
    tcase_add_test(masks, mask_scores_sets_minus_infinity);
    tcase_add_test(masks, minus_1e9_and_minus_infinity_agree_on_kept_rows);
    suite_add_tcase(suite, masks);
    return suite;
}
