/* test_beam.c -- Chapter "Beam search" (book/beam.nw): greedy decoding with an end
   symbol, beam search against greedy decoding, hand-made tables, model_forward and brute
   force, on the golden models (tests/golden/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "beam.h"
#include "tests.h"

enum { VARIANTS = GOLDEN_VARIANTS, LEN = 16, END = 2 };   /* LEN: tokens of an output, start included */
typedef GoldenFixture Fixture;

/* The golden batch, as the hand-made tables here assume: three sources, a small vocabulary. */
static void fixture_open(Fixture *f, const char *variant)
{
    golden_fixture_open(f, variant, LEN);
    ck_assert_int_eq(f->batch, 3);
    ck_assert_int_le(f->vocab, 16);
}

/* The summed log-probability of tokens[1..length-1] after tokens[0], for source b, by one
   model_forward over the whole output (the subsequent mask, as in greedy_decode). */
static double forward_sum(Fixture *f, int b, const int *tokens, int length)
{
    static uint8_t keep[LEN * LEN];
    const int steps = length - 1, vocab = f->vocab;
    if (steps == 0) return 0.0;
    subsequent_mask(keep, steps);
    const float *logprobs =
        test_forward(&f->model, f->src + b * f->src_len, tokens,
                     f->src_keep + b * f->src_len, keep, 1, f->src_len, steps, NULL);
    double sum = 0.0;
    for (int t = 0; t < steps; t++) sum += logprobs[t * vocab + tokens[t + 1]];
    return sum;
}

/* |got - want| <= 1e-5 max(1, |want|): the parity bound; the search's sums come from
   steps of the cache, whose products have other shapes than model_forward's. */
static bool close_enough(double got, double want)
{
    return fabs(got - want) <= 1e-5 * fmax(1.0, fabs(want));
}

/* An output row is the start symbol, then length - 1 tokens, then padding; it ends with
   the end symbol, which occurs nowhere else in it, or has used its whole limit. */
static void assert_well_formed(const int *row, int length, const DecodeSettings *settings,
                               int limit, const char *what)
{
    ck_assert_msg(length >= 1 && length <= settings->max_len && length - 1 <= limit,
                  "%s: length %d, limit %d", what, length, limit);
    ck_assert_int_eq(row[0], settings->start);
    for (int t = 1; t < length - 1; t++)
        ck_assert_msg(row[t] != settings->end, "%s: end symbol at %d of %d", what, t,
                      length);
    for (int t = length; t < settings->max_len; t++)
        ck_assert_int_eq(row[t], settings->pad);
    const bool ended = length > 1 && row[length - 1] == settings->end;
    ck_assert_msg(ended || length - 1 == limit,
                  "%s: stopped at %d, limit %d, no end symbol", what, length, limit);
}

/* A beam of one writes greedy_translate's tokens, lengths and sums, bit for bit; with the
   end symbol 2 some rows end with it and some at their limits. Without end symbol and
   source limit, greedy_translate writes greedy_decode_cached's tokens. */
START_TEST(beam_of_one_is_greedy)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch;
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch, f.src_len, LEN - 1);
    Beam beam;
    beam_init(&beam, batch, 1, LEN, f.vocab);
    int greedy[3 * LEN], beamed[3 * LEN], cached[3 * LEN], greedy_len[3], beam_len[3];
    double greedy_sum[3], beam_sum[3];
    int ended = 0, limited = 0;
    for (int start = 1; start < f.vocab; start++) {
        DecodeSettings settings = decode_settings(start, END, f.pad, LEN);
        settings.max_extra = 4;   /* limits 11, 9 and 7 */
        greedy_translate(&f.model, &cache, greedy, greedy_len, greedy_sum,
                         &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        beam_search(&f.model, &cache, &beam, beamed, beam_len, beam_sum,
                    &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        ck_assert_msg(memcmp(greedy, beamed, sizeof greedy) == 0,
                      "%s: beam of one differs from greedy from start %d", golden_variants[_i],
                      start);
        ck_assert_mem_eq(greedy_len, beam_len, sizeof greedy_len);
        for (int b = 0; b < batch; b++) {
            ck_assert_msg(greedy_sum[b] == beam_sum[b], "%s: sums %.17g and %.17g",
                          golden_variants[_i], greedy_sum[b], beam_sum[b]);
            const int limit =
                decode_limit(&settings, f.src_keep + b * f.src_len, f.src_len);
            ck_assert_int_eq(limit, (b == 0 ? 7 : b == 1 ? 5 : 3) + 4);
            ended += greedy[b * LEN + greedy_len[b] - 1] == END;
            limited += greedy_len[b] - 1 == limit;
        }
        settings.end = -1, settings.max_extra = -1;
        greedy_translate(&f.model, &cache, greedy, greedy_len, NULL,
                         &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        greedy_decode_cached(&f.model, &cache, cached, f.src, f.src_keep, batch,
                             f.src_len, LEN, start);
        ck_assert_mem_eq(greedy, cached, sizeof greedy);
        for (int b = 0; b < batch; b++) ck_assert_int_eq(greedy_len[b], LEN);
    }
    ck_assert_msg(ended > 0 && limited > 0, "%s: %d rows ended, %d limited", golden_variants[_i],
                  ended, limited);
    beam_free(&beam);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

/* Greedy and beam-of-three outputs (every finished one, for the beam) are well formed,
   with the end symbol and with limits only; without an end symbol each output fills its
   limit. */
START_TEST(outputs_stop_at_end_and_limit)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch, k = 3;
    KVCache greedy_cache, beam_cache;
    decoder_cache_init(&greedy_cache, &f.model, batch, f.src_len, LEN - 1);
    decoder_cache_init(&beam_cache, &f.model, batch * k, f.src_len, LEN - 1);
    Beam beam;
    beam_init(&beam, batch, k, LEN, f.vocab);
    int out[3 * LEN], lengths[3];
    for (int start = 1; start < f.vocab; start++)
        for (int variant = 0; variant < 3; variant++) {
            DecodeSettings settings =
                decode_settings(start, variant == 0 ? END : -1, f.pad, LEN);
            settings.max_extra = variant == 2 ? -1 : 4;
            for (int b = 0; b < batch; b++) out[b * LEN + LEN - 1] = -7;
            greedy_translate(&f.model, &greedy_cache, out, lengths, NULL,
                             &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
            for (int b = 0; b < batch; b++) {
                const int limit = decode_limit(&settings, f.src_keep + b * f.src_len,
                                               f.src_len);
                assert_well_formed(out + b * LEN, lengths[b], &settings, limit, "greedy");
                if (settings.end < 0) ck_assert_int_eq(lengths[b], limit + 1);
            }
            beam_search(&f.model, &beam_cache, &beam, out, lengths, NULL,
                        &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
            for (int b = 0; b < batch; b++) {
                const int limit = decode_limit(&settings, f.src_keep + b * f.src_len,
                                               f.src_len);
                ck_assert_int_eq(beam.limit[b], limit);
                ck_assert_mem_eq(out + b * LEN, beam.hyp + b * k * LEN,
                                 LEN * sizeof *out);
                for (int i = 0; i < beam.count[b]; i++) {
                    const int r = b * k + i;
                    assert_well_formed(beam.hyp + r * LEN, beam.hyp_len[r], &settings,
                                       limit, "beam");
                    if (settings.end < 0) ck_assert_int_eq(beam.hyp_len[r], limit + 1);
                }
            }
        }
    beam_free(&beam);
    decoder_cache_free(&beam_cache);
    decoder_cache_free(&greedy_cache);
    golden_fixture_close(&f);
}
END_TEST

/* ---------------------------------------------------------------- hand-made tables */
enum { TABLE_VOCAB = 5, TABLE_LEN = 8 };   /* 0 pad, 1 <s>, 2 </s>, 3 a, 4 b */
enum { S = 1, E = 2, A = 3, B = 4 };
typedef void (*Table)(float *logprobs, const int *prefix, int t);

static void table_row(float *logprobs, double end, double a, double b)
{
    const double p[TABLE_VOCAB] = {1e-9, 1e-9, end, a, b};
    for (int w = 0; w < TABLE_VOCAB; w++) logprobs[w] = (float)log(p[w]);
}

/* Section "Why greedy is not enough": after <s>: a .5, b .4, </s> .1; after a: </s> .4,
   a .3, b .3; after b: </s> .9, a .05, b .05; later: uniform. */
static void why_table(float *logprobs, const int *prefix, int t)
{
    if (t == 0) table_row(logprobs, 0.1, 0.5, 0.4);
    else if (t == 1 && prefix[1] == A) table_row(logprobs, 0.4, 0.3, 0.3);
    else if (t == 1) table_row(logprobs, 0.9, 0.05, 0.05);
    else table_row(logprobs, 1.0 / 3, 1.0 / 3, 1.0 / 3);
}

/* Section "The length penalty": after <s>: </s> .3, a .7;
   after a, aa, aaa: a .8, </s> .2; after aaaa: </s> .7, a .3; b almost never. */
static void penalty_table(float *logprobs, const int *prefix, int t)
{
    (void)prefix;
    if (t == 0) table_row(logprobs, 0.3, 0.7, 1e-9);
    else if (t < 4) table_row(logprobs, 0.2, 0.8, 1e-9);
    else if (t == 4) table_row(logprobs, 0.7, 0.3, 1e-9);
    else table_row(logprobs, 0.5, 0.5, 1e-9);
}

/* Run the search of one source with the log-probabilities of table; rows of no alive
   candidate get NaN, which must not be read. */
static void table_search(Beam *beam, Table table, const DecodeSettings *settings)
{
    float logprobs[4 * TABLE_VOCAB];
    ck_assert_int_le(beam->size, 4);
    beam_begin(beam, 1, NULL, 0, settings);
    while (!beam->done) {
        for (int j = 0; j < beam->size; j++) {
            float *row = logprobs + j * TABLE_VOCAB;
            if (j < beam->alive[0])
                table(row, beam->prefix + j * beam->max_len, beam->step);
            else
                for (int w = 0; w < TABLE_VOCAB; w++) row[w] = NAN;
        }
        beam_advance(beam, logprobs);
    }
}

START_TEST(beam_finds_what_greedy_misses)
{
    Beam beam;
    DecodeSettings settings = decode_settings(S, E, 0, TABLE_LEN);
    int out[TABLE_LEN], length;
    double sum;
    beam_init(&beam, 1, 1, TABLE_LEN, TABLE_VOCAB);
    table_search(&beam, why_table, &settings);
    beam_finish(&beam, out, &length, &sum);
    const int greedy[TABLE_LEN] = {S, A, E, 0, 0, 0, 0, 0};
    ck_assert_int_eq(length, 3);
    ck_assert_mem_eq(out, greedy, sizeof out);
    ck_assert_double_eq_tol(sum, log(0.2), 1e-6);   /* float log-probabilities */
    beam_free(&beam);

    beam_init(&beam, 1, 2, TABLE_LEN, TABLE_VOCAB);
    table_search(&beam, why_table, &settings);
    beam_finish(&beam, out, &length, &sum);
    const int best[TABLE_LEN] = {S, B, E, 0, 0, 0, 0, 0};
    ck_assert_int_eq(length, 3);
    ck_assert_mem_eq(out, best, sizeof out);
    ck_assert_double_eq_tol(sum, log(0.36), 1e-6);
    ck_assert_int_eq(beam.count[0], 2);   /* both places finished at step 2 */
    ck_assert_mem_eq(beam.hyp + TABLE_LEN, greedy, sizeof greedy);
    ck_assert_int_eq(beam.step, 2);
    beam_free(&beam);
}
END_TEST

/* After <s>: a .4, b .4, </s> .2; then </s> for sure. Equal sums: a beam of one takes the
   smaller token, as greedy decoding does; a beam of two keeps a before b, and finishes
   both, a first. */
static void tie_table(float *logprobs, const int *prefix, int t)
{
    (void)prefix;
    if (t == 0) table_row(logprobs, 0.2, 0.4, 0.4);
    else table_row(logprobs, 1.0, 1e-9, 1e-9);
}

START_TEST(ties_go_to_the_smaller_token)
{
    const int first[TABLE_LEN] = {S, A, E, 0, 0, 0, 0, 0};
    const int second[TABLE_LEN] = {S, B, E, 0, 0, 0, 0, 0};
    DecodeSettings settings = decode_settings(S, E, 0, TABLE_LEN);
    for (int k = 1; k <= 2; k++) {
        Beam beam;
        beam_init(&beam, 1, k, TABLE_LEN, TABLE_VOCAB);
        float logprobs[2 * TABLE_VOCAB];
        beam_begin(&beam, 1, NULL, 0, &settings);
        tie_table(logprobs, beam.prefix, 0);
        ck_assert(!beam_advance(&beam, logprobs));
        ck_assert_int_eq(beam.alive[0], k);   /* a first, then b */
        ck_assert_int_eq(beam.prefix[1], A);
        if (k == 2) ck_assert_int_eq(beam.prefix[TABLE_LEN + 1], B);
        table_search(&beam, tie_table, &settings);
        ck_assert_int_eq(beam.count[0], k);
        ck_assert_mem_eq(beam.hyp, first, sizeof first);
        if (k == 2) {
            ck_assert_mem_eq(beam.hyp + TABLE_LEN, second, sizeof second);
            ck_assert(beam.hyp_score[0] == beam.hyp_score[1]);
        }
        beam_free(&beam);
    }
}
END_TEST

START_TEST(length_penalty_prefers_the_longer_output)
{
    const double short_sum = log(0.3), long_sum = 2 * log(0.7) + 3 * log(0.8);
    const int shortest[TABLE_LEN] = {S, E, 0, 0, 0, 0, 0, 0};
    const int longest[TABLE_LEN] = {S, A, A, A, A, E, 0, 0};
    Beam beam;
    beam_init(&beam, 1, 2, TABLE_LEN, TABLE_VOCAB);
    for (int penalty = 0; penalty < 3; penalty++) {
        DecodeSettings settings = decode_settings(S, E, 0, TABLE_LEN);
        if (penalty == 0) settings.alpha = 0.0f;
        if (penalty == 2) settings.penalty = PENALTY_POWER, settings.alpha = 1.0f;
        int out[TABLE_LEN], length;
        double sum;
        table_search(&beam, penalty_table, &settings);
        beam_finish(&beam, out, &length, &sum);
        ck_assert_int_eq(beam.count[0], 2);
        if (penalty == 0) {   /* raw sums: -1.204 beats -1.383 */
            ck_assert_mem_eq(out, shortest, sizeof out);
            ck_assert_double_eq_tol(sum, short_sum, 1e-6);
            ck_assert_double_eq_tol(beam.hyp_score[1], long_sum, 1e-6);
        } else {              /* -1.383 / lp(5) beats -1.204 / lp(1) = -1.204 */
            const double lp = penalty == 1 ? pow(10.0 / 6.0, 0.6) : 5.0;
            ck_assert_mem_eq(out, longest, sizeof out);
            ck_assert_int_eq(length, 6);
            ck_assert_double_eq_tol(sum, long_sum, 1e-6);
            ck_assert_double_eq_tol(beam.hyp_score[0], long_sum / lp, 1e-6);
            ck_assert_double_eq_tol(beam.hyp_score[1], short_sum, 1e-6);
        }
    }
    beam_free(&beam);
}
END_TEST

/* ---------------------------------------------------------------- against the models */

/* Raw sums, no end symbol, fifteen tokens, from every start symbol: beams of 2 and 4 find
   more probable outputs than greedy decoding in many cases, and less probable ones in
   few. Beam search does not promise more (Exercise ex:beam-worse): of the 72 cases of
   each model, 24 to 50 were better and 0 to 3 worse when this was written. */
START_TEST(beam_beats_greedy_on_the_models)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch;
    KVCache greedy_cache, beam_cache;
    decoder_cache_init(&greedy_cache, &f.model, batch, f.src_len, LEN - 1);
    decoder_cache_init(&beam_cache, &f.model, batch * 4, f.src_len, LEN - 1);
    int out[3 * LEN], lengths[3], better = 0, worse = 0, cases = 0;
    double greedy_sum[3], beam_sum[3];
    for (int k = 2; k <= 4; k += 2) {
        Beam beam;
        beam_init(&beam, batch, k, LEN, f.vocab);
        for (int start = 1; start < f.vocab; start++) {
            DecodeSettings settings = decode_settings(start, -1, f.pad, LEN);
            settings.alpha = 0.0f, settings.max_extra = -1;
            greedy_translate(&f.model, &greedy_cache, out, lengths, greedy_sum,
                             &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
            beam_search(&f.model, &beam_cache, &beam, out, lengths, beam_sum,
                        &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
            for (int b = 0; b < batch; b++, cases++) {
                /* 1e-3: far above rounding, far below the differences seen */
                better += beam_sum[b] > greedy_sum[b] + 1e-3;
                worse += beam_sum[b] < greedy_sum[b] - 1e-3;
            }
        }
        beam_free(&beam);
    }
    ck_assert_int_eq(cases, 72);
    ck_assert_msg(better >= 18 && worse <= 4,
                  "%s: of %d cases, beams were better in %d and worse in %d",
                  golden_variants[_i], cases, better, worse);
    decoder_cache_free(&beam_cache);
    decoder_cache_free(&greedy_cache);
    golden_fixture_close(&f);
}
END_TEST

/* Beams of 4, end symbol 2, the default penalty: every finished output of every source
   has the sum model_forward gives it and the score that sum gives; the outputs of a
   source are different and sorted by score. */
START_TEST(beam_sums_equal_forward)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch, k = 4;
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch * k, f.src_len, LEN - 1);
    Beam beam;
    beam_init(&beam, batch, k, LEN, f.vocab);
    int compared = 0, long_ones = 0;
    for (int start = 1; start < f.vocab; start++) {
        DecodeSettings settings = decode_settings(start, END, f.pad, LEN);
        beam_search(&f.model, &cache, &beam, NULL, NULL, NULL,
                    &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        for (int b = 0; b < batch; b++) {
            ck_assert_int_eq(beam.count[b], k);   /* every place is finished */
            for (int i = 0; i < beam.count[b]; i++) {
                const int r = b * k, n = beam.hyp_len[r + i];
                const int *row = beam.hyp + (r + i) * LEN;
                const double want = forward_sum(&f, b, row, n);
                ck_assert_msg(close_enough(beam.hyp_sum[r + i], want),
                              "%s, start %d, source %d, output %d: sum %.8g, model %.8g",
                              golden_variants[_i], start, b, i, beam.hyp_sum[r + i], want);
                ck_assert(close_enough(beam.hyp_score[r + i],
                                       want / length_penalty(&settings, n - 1)));
                if (i > 0) ck_assert(beam.hyp_score[r + i] <= beam.hyp_score[r + i - 1]);
                for (int j = 0; j < i; j++)
                    ck_assert(memcmp(row, beam.hyp + (r + j) * LEN, LEN * sizeof *row));
                compared++, long_ones += n > 4;
            }
        }
    }
    ck_assert_int_eq(compared, (f.vocab - 1) * batch * k);
    ck_assert_msg(long_ones > 0, "%s: no output longer than 3 tokens", golden_variants[_i]);
    beam_free(&beam);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

static int compare_descending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* With a beam of V^L for outputs of at most L tokens the search is exhaustive: for each
   source its finished outputs are all possible outputs (those ending with the end symbol
   at any position, and those of L tokens without it), and their sums and scores, sorted,
   equal those of the brute force, which scores every output with model_forward; the best
   output is the brute force's. */
static void check_exhaustive(Fixture *f, int L, int sources, float alpha)
{
    const int vocab = f->vocab, start = 1;
    int k = 1;
    for (int i = 0; i < L; i++) k *= vocab;
    const int prefixes = k / vocab;   /* V^(L-1) decoder inputs of L tokens */
    DecodeSettings settings = decode_settings(start, END, f->pad, L + 1);
    settings.alpha = alpha, settings.max_extra = -1;
    KVCache cache;
    decoder_cache_init(&cache, &f->model, sources * k, f->src_len, L);
    Beam beam;
    beam_init(&beam, sources, k, L + 1, vocab);
    model_prepare(&f->model, prefixes > 3 ? prefixes : 3, f->src_len, L);
    int best[3 * 4];
    beam_search(&f->model, &cache, &beam, best, NULL, NULL,
                &(SourceBatch){f->src, f->src_keep, sources, f->src_len}, &settings);
    int *src = malloc((size_t)prefixes * f->src_len * sizeof *src);   /* [prefixes][S] */
    uint8_t *src_keep = malloc((size_t)prefixes * f->src_len);        /* [prefixes][S] */
    int *tgt = malloc((size_t)prefixes * L * sizeof *tgt);            /* [prefixes][L] */
    uint8_t *tgt_keep = malloc((size_t)prefixes * L * L);   /* [prefixes][L][L] */
    double *sums = malloc(3 * (size_t)k * sizeof *sums);     /* [k] each: */
    double *scores = sums + k, *found = scores + k;          /* brute force; search */
    for (int b = 0; b < sources; b++) {
        /* Decoder input q: the start symbol and the L - 1 digits of q in base V. */
        for (int q = 0; q < prefixes; q++) {
            memcpy(src + q * f->src_len, f->src + b * f->src_len,
                   f->src_len * sizeof *src);
            memcpy(src_keep + q * f->src_len, f->src_keep + b * f->src_len, f->src_len);
            tgt[q * L] = start;
            for (int i = L - 1, rest = q; i >= 1; i--, rest /= vocab)
                tgt[q * L + i] = rest % vocab;
            subsequent_mask(tgt_keep + q * L * L, L);
        }
        const float *logprobs = test_forward(&f->model, src, tgt, src_keep, tgt_keep,
                                             prefixes, f->src_len, L, NULL);
        /* Output z: the L digits y_1 .. y_L of z, cut after the first end symbol; counted
           once, as the z whose digits after the cut are all 0. Its first L - 1 digits are
           decoder input z / V, whose rows up to the cut are those of the output. */
        int outputs = 0, best_z = -1, best_m = 0;
        double best_score = -INFINITY;
        for (int z = 0; z < k; z++) {
            int y[8], m = L;
            for (int i = L, rest = z; i >= 1; i--, rest /= vocab) y[i] = rest % vocab;
            for (int i = L; i >= 1; i--) if (y[i] == END) m = i;
            bool canonical = true;
            for (int i = m + 1; i <= L; i++) canonical = canonical && y[i] == 0;
            if (!canonical) continue;
            double sum = 0.0;
            for (int i = 1; i <= m; i++)
                sum += logprobs[((size_t)(z / vocab) * L + i - 1) * vocab + y[i]];
            sums[outputs] = sum, scores[outputs] = sum / length_penalty(&settings, m);
            if (scores[outputs] > best_score)
                best_score = scores[outputs], best_z = z, best_m = m;
            outputs++;
        }
        int expected = 0, power = 1;   /* (V-1)^(m-1) outputs end at token m */
        for (int m = 1; m <= L; m++) expected += power, power *= vocab - 1;
        expected += power;             /* (V-1)^L outputs have no end symbol */
        ck_assert_int_eq(outputs, expected);
        ck_assert_int_eq(beam.count[b], outputs);
        /* The scores are sorted by the search; sort the rest and compare in order. */
        for (int i = 0; i < outputs; i++) found[i] = beam.hyp_sum[b * k + i];
        qsort(sums, (size_t)outputs, sizeof *sums, compare_descending);
        qsort(scores, (size_t)outputs, sizeof *scores, compare_descending);
        qsort(found, (size_t)outputs, sizeof *found, compare_descending);
        for (int i = 0; i < outputs; i++) {
            ck_assert_msg(close_enough(beam.hyp_score[b * k + i], scores[i]),
                          "L %d, source %d, output %d: score %.8g, brute force %.8g", L,
                          b, i, beam.hyp_score[b * k + i], scores[i]);
            ck_assert(close_enough(found[i], sums[i]));
        }
        /* The best output is the brute force's, unless the two best nearly tie. */
        const int *row = best + b * (L + 1);
        if (outputs < 2 || scores[0] - scores[1] > 1e-4) {
            ck_assert_int_eq(row[0], start);
            for (int i = L, rest = best_z; i >= 1; i--, rest /= vocab)
                ck_assert_int_eq(row[i], i <= best_m ? rest % vocab : f->pad);
        }
    }
    free(sums), free(tgt_keep), free(tgt), free(src_keep), free(src);
    beam_free(&beam);
    decoder_cache_free(&cache);
}

START_TEST(small_beam_search_is_exhaustive)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    check_exhaustive(&f, 1, 3, 0.6f);
    check_exhaustive(&f, 2, 3, 0.0f);
    check_exhaustive(&f, 2, 3, 0.6f);
    check_exhaustive(&f, 3, 1, 0.6f);
    golden_fixture_close(&f);
}
END_TEST

/* A batch of three sources with a beam of three gives each source the output it gets
   alone: the same tokens and lengths, and the same sums within rounding. */
START_TEST(batch_equals_single_sources)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch, k = 3;
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch * k, f.src_len, LEN - 1);
    Beam beam;
    beam_init(&beam, batch, k, LEN, f.vocab);
    int together[3 * LEN], alone[LEN], together_len[3], alone_len;
    double together_sum[3], alone_sum;
    for (int start = 1; start < f.vocab; start++) {
        DecodeSettings settings = decode_settings(start, END, f.pad, LEN);
        settings.max_extra = 6;
        beam_search(&f.model, &cache, &beam, together, together_len, together_sum,
                    &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        for (int b = 0; b < batch; b++) {
            beam_search(&f.model, &cache, &beam, alone, &alone_len, &alone_sum,
                        &(SourceBatch){f.src + b * f.src_len, f.src_keep + b * f.src_len, 1, f.src_len}, &settings);
            ck_assert_msg(memcmp(alone, together + b * LEN, sizeof alone) == 0,
                          "%s, start %d: source %d differs alone", golden_variants[_i], start,
                          b);
            ck_assert_int_eq(alone_len, together_len[b]);
            ck_assert(close_enough(alone_sum, together_sum[b]));
        }
    }
    beam_free(&beam);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

/* Greedy decoding of a batch gives each source the output it gets alone (tokens and
   lengths; sums within rounding), although finished rows leave the cache: with the end
   symbol some rows end early, and the batch the cache holds at the end is smaller. */
START_TEST(greedy_batch_equals_single_sources_as_rows_leave)
{
    Fixture f;
    fixture_open(&f, golden_variants[_i]);
    const int batch = f.batch;
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch, f.src_len, LEN - 1);
    int together[3 * LEN], alone[LEN], together_len[3], alone_len, shrunk = 0;
    double together_sum[3], alone_sum;
    for (int start = 1; start < f.vocab; start++) {
        DecodeSettings settings = decode_settings(start, END, f.pad, LEN);
        settings.max_extra = 4;
        greedy_translate(&f.model, &cache, together, together_len, together_sum,
                         &(SourceBatch){f.src, f.src_keep, batch, f.src_len}, &settings);
        shrunk += cache.batch < batch;
        for (int b = 0; b < batch; b++) {
            greedy_translate(&f.model, &cache, alone, &alone_len, &alone_sum,
                             &(SourceBatch){f.src + b * f.src_len, f.src_keep + b * f.src_len,
                                            1, f.src_len}, &settings);
            ck_assert_msg(memcmp(alone, together + b * LEN, sizeof alone) == 0,
                          "%s, start %d: source %d differs alone", golden_variants[_i], start,
                          b);
            ck_assert_int_eq(alone_len, together_len[b]);
            ck_assert(close_enough(alone_sum, together_sum[b]));
        }
    }
    ck_assert_msg(shrunk > 0, "%s: no row ever left the cache", golden_variants[_i]);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

Suite *beam_suite(void)
{
    Suite *suite = suite_create("beam");
    TCase *tables = tcase_create("tables");
    tcase_add_test(tables, beam_finds_what_greedy_misses);
    tcase_add_test(tables, ties_go_to_the_smaller_token);
    tcase_add_test(tables, length_penalty_prefers_the_longer_output);
    suite_add_tcase(suite, tables);
    TCase *models = tcase_create("models");
    tcase_add_loop_test(models, beam_of_one_is_greedy, 0, VARIANTS);
    tcase_add_loop_test(models, outputs_stop_at_end_and_limit, 0, VARIANTS);
    tcase_add_loop_test(models, beam_beats_greedy_on_the_models, 0, VARIANTS);
    tcase_add_loop_test(models, beam_sums_equal_forward, 0, VARIANTS);
    tcase_add_loop_test(models, small_beam_search_is_exhaustive, 0, VARIANTS);
    tcase_add_loop_test(models, batch_equals_single_sources, 0, VARIANTS);
    tcase_add_loop_test(models, greedy_batch_equals_single_sources_as_rows_leave, 0, VARIANTS);
    tcase_set_timeout(models, 60);
    suite_add_tcase(suite, models);
    return suite;
}
