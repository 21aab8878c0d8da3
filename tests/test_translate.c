/* test_translate.c -- book/translate.nw: batches of similar lengths within a token budget,
   filled with the right padding and shifts, visited in a per-epoch random order. */
#include <stdlib.h>
#include <string.h>
#include "data.h"
#include "tests.h"

/* n pairs with lengths 3..max_len (<s> ... </s>); token numbers 4.. encode (pair, position). */
static Corpus random_corpus(int n, int max_len, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed, 1);
    Corpus c = {.count = n};
    c.src_offset = malloc((size_t)(n + 1) * sizeof(int));
    c.tgt_offset = malloc((size_t)(n + 1) * sizeof(int));
    c.src_ids = malloc((size_t)n * max_len * sizeof(int));
    c.tgt_ids = malloc((size_t)n * max_len * sizeof(int));
    c.src_offset[0] = c.tgt_offset[0] = 0;
    for (int i = 0; i < n; i++) {
        const int s = 3 + (int)(rng_next(&rng) % (uint32_t)(max_len - 2));
        const int t = 3 + (int)(rng_next(&rng) % (uint32_t)(max_len - 2));
        for (int k = 0; k < s; k++)
            c.src_ids[c.src_offset[i] + k] = k == 0 ? 0 : k == s - 1 ? 1 : 4 + i * 100 + k;
        for (int k = 0; k < t; k++)
            c.tgt_ids[c.tgt_offset[i] + k] = k == 0 ? 0 : k == t - 1 ? 1 : 4 + i * 100 + k;
        c.src_offset[i + 1] = c.src_offset[i] + s;
        c.tgt_offset[i + 1] = c.tgt_offset[i] + t;
    }
    return c;
}

START_TEST(batch_plan_covers_every_pair_within_the_budget)
{
    Corpus c = random_corpus(1000, 40, 1);
    BatchPlan plan;
    const int budget = 400;
    batch_plan(&plan, &c, budget);
    int *seen = calloc(1000, sizeof(int));
    long padded = 0, real = 0;
    for (int b = 0; b < plan.count; b++) {
        const BatchSpan *span = &plan.spans[b];
        ck_assert_int_gt(span->count, 0);
        const int longest = span->src_len > span->tgt_len ? span->src_len : span->tgt_len;
        ck_assert(span->count == 1 || (long)span->count * longest <= budget);
        int s = 0, t = 0;
        for (int k = 0; k < span->count; k++) {
            const int pair = plan.order[span->first + k];
            seen[pair]++;
            if (corpus_src_len(&c, pair) > s) s = corpus_src_len(&c, pair);
            if (corpus_tgt_len(&c, pair) > t) t = corpus_tgt_len(&c, pair);
            real += corpus_tgt_len(&c, pair);
            if (k > 0)   /* sorted by target length */
                ck_assert_int_le(corpus_tgt_len(&c, plan.order[span->first + k - 1]),
                                 corpus_tgt_len(&c, pair));
        }
        ck_assert_int_eq(s, span->src_len);
        ck_assert_int_eq(t, span->tgt_len);
        ck_assert_int_le(span->count, plan.max_pairs);
        ck_assert_int_le(span->tgt_len, plan.max_tgt_len);
        padded += (long)span->count * span->tgt_len;
        /* the next pair would have broken the budget: batches are as full as allowed */
        if (b + 1 < plan.count) {
            const int next = plan.order[span->first + span->count];
            int s2 = s > corpus_src_len(&c, next) ? s : corpus_src_len(&c, next);
            int t2 = t > corpus_tgt_len(&c, next) ? t : corpus_tgt_len(&c, next);
            ck_assert_int_gt((long)(span->count + 1) * (s2 > t2 ? s2 : t2), budget);
        }
    }
    for (int i = 0; i < 1000; i++) ck_assert_int_eq(seen[i], 1);
    /* sorted by target length, target padding is small: under 2% here */
    ck_assert_msg(padded < real * 1.02, "padded %ld for %ld real tokens", padded, real);
    free(seen);
    batch_plan_free(&plan);
    corpus_free(&c);
}
END_TEST

START_TEST(batch_fill_span_pads_and_shifts)
{
    Corpus c = random_corpus(50, 12, 2);
    BatchPlan plan;
    batch_plan(&plan, &c, 60);
    Batch batch;
    batch_init(&batch, plan.max_pairs, plan.max_src_len, plan.max_tgt_len - 1);
    const int pad = 2;
    for (int b = 0; b < plan.count; b++) {
        const BatchSpan *span = &plan.spans[b];
        batch_fill_span(&batch, &c, &plan, span, pad);
        ck_assert_int_eq(batch.batch, span->count);
        ck_assert_int_eq(batch.src_len, span->src_len);
        ck_assert_int_eq(batch.tgt_len, span->tgt_len - 1);
        const int s = batch.src_len, t = batch.tgt_len;
        for (int k = 0; k < span->count; k++) {
            const int pair = plan.order[span->first + k];
            const int sl = corpus_src_len(&c, pair), tl = corpus_tgt_len(&c, pair);
            for (int i = 0; i < s; i++) {
                ck_assert_int_eq(batch.src[k * s + i], i < sl ? corpus_src(&c, pair)[i] : pad);
                ck_assert_int_eq(batch.src_keep[k * s + i], i < sl);
            }
            for (int i = 0; i < t; i++) {
                ck_assert_int_eq(batch.tgt[k * t + i], i < tl ? corpus_tgt(&c, pair)[i] : pad);
                ck_assert_int_eq(batch.tgt_y[k * t + i],
                                 i + 1 < tl ? corpus_tgt(&c, pair)[i + 1] : pad);
                for (int j = 0; j < t; j++)   /* causal and no padded key */
                    ck_assert_int_eq(batch.tgt_keep[((size_t)k * t + i) * t + j],
                                     j <= i && j < tl);
            }
        }
    }
    batch_free(&batch);
    batch_plan_free(&plan);
    corpus_free(&c);
}
END_TEST

START_TEST(batch_order_is_a_permutation_per_epoch)
{
    enum { N = 200 };
    int a[N], b[N], again[N];
    batch_order(a, N, 1, 1);
    batch_order(b, N, 1, 2);
    batch_order(again, N, 1, 1);
    ck_assert(memcmp(a, again, sizeof a) == 0);   /* a function of the epoch */
    ck_assert(memcmp(a, b, sizeof a) != 0);
    int count[N] = {0}, moved = 0;
    for (int i = 0; i < N; i++) count[a[i]]++, moved += a[i] != i;
    for (int i = 0; i < N; i++) ck_assert_int_eq(count[i], 1);
    ck_assert_int_gt(moved, N / 2);
}
END_TEST

Suite *translate_suite(void)
{
    Suite *suite = suite_create("translate");
    TCase *batches = tcase_create("batches");
    tcase_add_test(batches, batch_plan_covers_every_pair_within_the_budget);
    tcase_add_test(batches, batch_fill_span_pads_and_shifts);
    tcase_add_test(batches, batch_order_is_a_permutation_per_epoch);
    suite_add_tcase(suite, batches);
    return suite;
}
