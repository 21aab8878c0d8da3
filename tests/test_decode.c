/* test_decode.c -- the decoding chapter (book/decode.nw): greedy decoding with a key-value cache
   against the recomputing decoder, against model_forward and against PyTorch, for every
   golden model (tests/golden/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "decode.h"
#include "tests.h"

enum { VARIANTS = GOLDEN_VARIANTS, LEN = 16 };   /* LEN: tokens decoded, start included */
typedef GoldenFixture Fixture;

/* Feed tokens [batch][steps] step by step; logprobs[b][t] = the step's row b, as
   [batch][steps][vocab] like model_forward's. */
static void cached_steps(Fixture *f, KVCache *cache, float *logprobs, const int *tokens,
                         int steps)
{
    const int batch = f->batch, vocab = f->model.config.tgt_vocab;
    int column[8];
    ck_assert_int_le(batch, 8);
    decoder_cache_start(&f->model, cache, f->src, f->src_keep, batch, f->src_len);
    for (int t = 0; t < steps; t++) {
        for (int b = 0; b < batch; b++) column[b] = tokens[b * steps + t];
        const float *step = decoder_cache_step(&f->model, cache, column);
        for (int b = 0; b < batch; b++)
            memcpy(logprobs + ((size_t)b * steps + t) * vocab, step + (size_t)b * vocab,
                   (size_t)vocab * sizeof *logprobs);
    }
    ck_assert_int_eq(cache->length, steps);
}

/* |got - want| <= 1e-5 max(1, |want|), the parity bound of the model chapter's parity section: float rounding,
   since the two paths multiply matrices of other shapes and BLAS may sum in another order. */
static void assert_close(float got, float want, const char *variant, int b, int t, int w)
{
    double error = fabs((double)got - want) / fmax(1.0, fabs(want));
    ck_assert_msg(error <= 1e-5, "%s: sequence %d, position %d, token %d: %.8g vs %.8g",
                  variant, b, t, w, got, want);
}

/* Both decoders write the same tokens, from every start symbol; the outputs are not all one
   token, and some row changes token along the way, so that the comparison has something to
   compare. Reusing the cache for a smaller batch (the last two sources) repeats their rows. */
START_TEST(cached_decoder_equals_recomputing)
{
    Fixture f;
    golden_fixture_open(&f, golden_variants[_i], LEN);
    const int batch = f.batch, vocab = f.model.config.tgt_vocab;
    int recomputed[3 * LEN], cached[3 * LEN], again[2 * LEN];
    ck_assert_int_eq(batch, 3);
    ck_assert_int_le(vocab, 64);
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch, f.src_len, LEN - 1);
    bool seen[64] = {false}, varies = false;
    for (int start = 1; start < vocab; start++) {
        greedy_decode(&f.model, recomputed, f.src, f.src_keep, batch, f.src_len, LEN, start);
        memset(cached, 0xff, sizeof cached);
        greedy_decode_cached(&f.model, &cache, cached, f.src, f.src_keep, batch, f.src_len,
                             LEN, start);
        ck_assert_msg(memcmp(cached, recomputed, sizeof cached) == 0,
                      "%s: the decoders differ from start %d", golden_variants[_i], start);
        for (int b = 0; b < batch; b++) {
            ck_assert_int_eq(cached[b * LEN], start);
            for (int t = 1; t < LEN; t++) {
                const int token = cached[b * LEN + t];
                ck_assert(token >= 0 && token < vocab);
                seen[token] = true;
                varies = varies || (t > 1 && token != cached[b * LEN + t - 1]);
            }
        }
        greedy_decode_cached(&f.model, &cache, again, f.src + f.src_len,
                             f.src_keep + f.src_len, 2, f.src_len, LEN, start);
        ck_assert_mem_eq(again, cached + LEN, sizeof again);
    }
    int distinct = 0;
    for (int w = 0; w < vocab; w++) distinct += seen[w];
    ck_assert_msg(distinct >= 4 && varies, "%s: %d distinct tokens, %s", golden_variants[_i],
                  distinct, varies ? "some row varies" : "every row constant");
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

/* Fed the decoded tokens, from every start symbol, every step's log-probabilities equal the
   rows of one model_forward over the whole prefix with the subsequent mask (greedy_decode's),
   and each decoded token is its step's argmax. */
START_TEST(cached_steps_equal_forward)
{
    Fixture f;
    golden_fixture_open(&f, golden_variants[_i], LEN);
    const int batch = f.batch, steps = LEN - 1, vocab = f.model.config.tgt_vocab;
    int out[3 * LEN], tokens[3 * (LEN - 1)];
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch, f.src_len, steps);
    float *stepped = malloc((size_t)batch * steps * vocab * sizeof *stepped);
    uint8_t *keep = malloc((size_t)batch * steps * steps);
    subsequent_mask(keep, steps);
    for (int b = 1; b < batch; b++) memcpy(keep + b * steps * steps, keep, steps * steps);
    for (int start = 1; start < vocab; start++) {
        greedy_decode_cached(&f.model, &cache, out, f.src, f.src_keep, batch, f.src_len, LEN,
                             start);
        for (int b = 0; b < batch; b++)
            memcpy(tokens + b * steps, out + b * LEN, steps * sizeof *tokens);
        cached_steps(&f, &cache, stepped, tokens, steps);
        const float *forward = test_forward(&f.model, f.src, tokens, f.src_keep, keep, batch,
                                            f.src_len, steps, NULL);
        for (int b = 0; b < batch; b++)
            for (int t = 0; t < steps; t++) {
                const float *row = stepped + ((size_t)b * steps + t) * vocab;
                for (int w = 0; w < vocab; w++) {
                    assert_close(row[w], forward[((size_t)b * steps + t) * vocab + w],
                                 golden_variants[_i], b, t, w);
                    ck_assert(row[w] <= row[out[b * LEN + t + 1]]);
                }
            }
    }
    free(keep);
    free(stepped);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

/* Fed the fixture's decoder input, the steps agree with PyTorch's log-probabilities at every
   position whose prefix holds no padding (PyTorch's target mask hides padded keys). */
START_TEST(cached_decoder_matches_pytorch)
{
    Fixture f;
    golden_fixture_open(&f, golden_variants[_i], LEN);
    const int batch = f.batch, steps = f.tgt_len, vocab = f.model.config.tgt_vocab;
    const SafetensorsEntry *expected = safetensors_find(&f.file, "expected.logprobs");
    ck_assert_msg(expected && expected->dtype == DTYPE_F32, "fixture lacks expected.logprobs");
    ck_assert_uint_eq(expected->size, (size_t)batch * steps * vocab);
    const float *want = (const float *)expected->data;
    KVCache cache;
    decoder_cache_init(&cache, &f.model, batch, f.src_len, steps);
    float *stepped = malloc((size_t)batch * steps * vocab * sizeof *stepped);
    cached_steps(&f, &cache, stepped, f.tgt, steps);
    int compared = 0;
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < steps && f.tgt[b * steps + t] != f.pad; t++, compared++)
            for (int w = 0; w < vocab; w++) {
                const size_t i = ((size_t)b * steps + t) * vocab + w;
                assert_close(stepped[i], want[i], golden_variants[_i], b, t, w);
            }
    ck_assert_int_eq(compared, 6 + 4 + 2);   /* the rows' real lengths */
    free(stepped);
    decoder_cache_free(&cache);
    golden_fixture_close(&f);
}
END_TEST

/* `transformer time-decode` on a small model: both decoders run and agree; a bad --decoder
   is a usage error. (Its times are printed, not tested.) */
START_TEST(time_decode_command_runs_both_decoders)
{
    const char *binary = getenv("TRANSFORMER") ? getenv("TRANSFORMER") : "./transformer";
    char command[512];
    snprintf(command, sizeof command,
             "%s time-decode --d-model 32 --d-ff 64 --heads 4 --batch 3 --len 12 2>&1",
             binary);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    char output[1024];
    size_t length = fread(output, 1, sizeof output - 1, pipe);
    output[length] = '\0';
    int status = pclose(pipe);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", output);
    ck_assert_msg(strstr(output, "decoder=recompute") && strstr(output, "decoder=cached")
                  && strstr(output, "outputs identical"), "%s", output);
    snprintf(command, sizeof command, "%s time-decode --decoder fast >/dev/null 2>&1",
             binary);
    status = system(command);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}
END_TEST

Suite *decode_suite(void)
{
    Suite *suite = suite_create("decode");
    TCase *cache = tcase_create("key-value cache");
    tcase_add_loop_test(cache, cached_decoder_equals_recomputing, 0, VARIANTS);
    tcase_add_loop_test(cache, cached_steps_equal_forward, 0, VARIANTS);
    tcase_add_loop_test(cache, cached_decoder_matches_pytorch, 0, VARIANTS);
    tcase_add_test(cache, time_decode_command_runs_both_decoders);
    tcase_set_timeout(cache, 60);
    suite_add_tcase(suite, cache);
    return suite;
}
