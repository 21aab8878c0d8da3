/* Beam search: several candidate translations per source, kept in the key-value cache --
   generated from the book's chapters by notangle: edit the book, not this file. */
#include "beam.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* <<beam.c definitions>> */
double length_penalty(const DecodeSettings *settings, int n)
{
    if (settings->alpha == 0.0f || n < 1) return 1.0;
    const double x = settings->penalty == PENALTY_GNMT ? (5.0 + n) / 6.0 : (double)n;
    return pow(x, (double)settings->alpha);
}

void beam_init(Beam *beam, int max_batch, int size, int max_len, int vocab)
{
    ENSURE(max_batch > 0 && size > 0 && max_len > 0 && vocab > 0, "beam %d x %d, %d, %d",
           max_batch, size, max_len, vocab);
    memset(beam, 0, sizeof *beam);
    beam->max_batch = max_batch, beam->size = size;
    beam->max_len = max_len, beam->vocab = vocab;
    const size_t sources = (size_t)max_batch, rows = sources * size;
    const size_t tokens = rows * max_len * sizeof(int);
    beam->limit = xmalloc(sources * sizeof(int));
    beam->open = xmalloc(sources * sizeof(int));
    beam->alive = xmalloc(sources * sizeof(int));
    beam->count = xmalloc(sources * sizeof(int));
    beam->prefix = xmalloc(tokens), beam->next_prefix = xmalloc(tokens);
    beam->sum = xmalloc(rows * sizeof(double));
    beam->next_sum = xmalloc(rows * sizeof(double));
    beam->parent = xmalloc(rows * sizeof(int)), beam->feed = xmalloc(rows * sizeof(int));
    beam->index = xmalloc(rows * sizeof(int));
    beam->cache_parent = xmalloc(rows * sizeof(int));
    beam->top_slot = xmalloc((size_t)size * sizeof(int));
    beam->top_token = xmalloc((size_t)size * sizeof(int));
    beam->top_sum = xmalloc((size_t)size * sizeof(double));
    beam->hyp = xmalloc(tokens), beam->hyp_len = xmalloc(rows * sizeof(int));
    beam->hyp_sum = xmalloc(rows * sizeof(double));
    beam->hyp_score = xmalloc(rows * sizeof(double));
}

void beam_free(Beam *beam)
{
    free(beam->limit), free(beam->open), free(beam->alive), free(beam->count);
    free(beam->prefix), free(beam->next_prefix), free(beam->sum), free(beam->next_sum);
    free(beam->parent), free(beam->feed), free(beam->index), free(beam->cache_parent);
    free(beam->top_slot), free(beam->top_token), free(beam->top_sum);
    free(beam->hyp), free(beam->hyp_len), free(beam->hyp_sum), free(beam->hyp_score);
    memset(beam, 0, sizeof *beam);
}

/* <<Keep a finished output, in order of score>> */
/* Keep for source b the output tokens[0..n] (the start symbol and n more) of sum s. */
static void keep_finished(Beam *beam, int b, const int *tokens, int n, double s)
{
    const int k = beam->size, len = beam->max_len, first = b * k;
    ENSURE(beam->count[b] < k, "source %d has %d finished outputs", b, beam->count[b]);
    const double score = s / length_penalty(&beam->settings, n);
    int i = beam->count[b]++;
    while (i > 0 && beam->hyp_score[first + i - 1] < score) i--;
    const int r = first + i, after = beam->count[b] - 1 - i;   /* rows to move down */
    memmove(beam->hyp + (size_t)(r + 1) * len, beam->hyp + (size_t)r * len,
            (size_t)after * len * sizeof *beam->hyp);
    memmove(beam->hyp_len + r + 1, beam->hyp_len + r, (size_t)after * sizeof(int));
    memmove(beam->hyp_sum + r + 1, beam->hyp_sum + r, (size_t)after * sizeof(double));
    memmove(beam->hyp_score + r + 1, beam->hyp_score + r, (size_t)after * sizeof(double));
    int *row = beam->hyp + (size_t)r * len;
    memcpy(row, tokens, (size_t)(n + 1) * sizeof *row);
    for (int t = n + 1; t < len; t++) row[t] = beam->settings.pad;
    beam->hyp_len[r] = n + 1, beam->hyp_sum[r] = s, beam->hyp_score[r] = score;
}

void beam_begin(Beam *beam, int batch, const uint8_t *src_keep, int src_len,
                const DecodeSettings *settings)
{
    ENSURE(batch > 0 && batch <= beam->max_batch && settings->max_len >= 1
           && settings->max_len <= beam->max_len,
           "search of %d x %d in a beam for %d x %d", batch, settings->max_len,
           beam->max_batch, beam->max_len);
    const int k = beam->size, len = beam->max_len;
    beam->settings = *settings, beam->batch = batch, beam->step = 0;
    beam->done = true, beam->moved = false;
    for (int b = 0; b < batch; b++) {
        beam->limit[b] = decode_limit(settings, src_keep ? src_keep + (size_t)b * src_len
                                                         : NULL, src_len);
        beam->open[b] = k, beam->alive[b] = 1, beam->count[b] = 0;
        for (int r = b * k; r < (b + 1) * k; r++)
            beam->parent[r] = r, beam->feed[r] = settings->start, beam->index[r] = r;
        beam->prefix[(size_t)b * k * len] = settings->start, beam->sum[b * k] = 0.0;
        if (beam->limit[b] <= 0) {
            keep_finished(beam, b, beam->prefix + (size_t)b * k * len, 0, 0.0);
            beam->alive[b] = 0;
        }
        beam->done = beam->done && beam->alive[b] == 0;
    }
}

bool beam_advance(Beam *beam, const float *logprobs)
{
    const int k = beam->size, len = beam->max_len, vocab = beam->vocab;
    const int t = ++beam->step;   /* the position filled now */
    ENSURE(!beam->done && t < beam->settings.max_len, "step %d of a finished search", t);
    beam->done = true, beam->moved = false;
    for (int b = 0; b < beam->batch; b++) {
        if (beam->alive[b] == 0) continue;
        /* <<Find the best expansions of source b>> */
        const int width = beam->open[b];
        int n = 0;
        for (int j = 0; j < beam->alive[b]; j++) {
            const int row = b * k + j;
            const float *p = logprobs + (size_t)beam->index[row] * vocab;
            for (int w = 0; w < vocab; w++) {
                const double s = beam->sum[row] + p[w];
                if (n == width && !(s > beam->top_sum[n - 1])) continue;
                int i = n < width ? n++ : n - 1;
                for (; i > 0 && beam->top_sum[i - 1] < s; i--) {
                    beam->top_sum[i] = beam->top_sum[i - 1];
                    beam->top_slot[i] = beam->top_slot[i - 1];
                    beam->top_token[i] = beam->top_token[i - 1];
                }
                beam->top_sum[i] = s, beam->top_slot[i] = j, beam->top_token[i] = w;
            }
        }
        /* <<Set the finished expansions aside and make the others the next beam>> */
        int alive = 0;
        for (int i = 0; i < n; i++) {
            const int from = b * k + beam->top_slot[i], w = beam->top_token[i];
            const int row = b * k + alive;
            int *next = beam->next_prefix + (size_t)row * len;
            memcpy(next, beam->prefix + (size_t)from * len, (size_t)t * sizeof *next);
            next[t] = w;
            if (w == beam->settings.end) {
                keep_finished(beam, b, next, t, beam->top_sum[i]);
                beam->open[b]--;
                continue;
            }
            beam->next_sum[row] = beam->top_sum[i], beam->parent[row] = from, beam->feed[row] = w;
            beam->moved = beam->moved || from != row;
            alive++;
        }
        if (t >= beam->limit[b]) {
            for (int j = 0; j < alive; j++)
                keep_finished(beam, b, beam->next_prefix + (size_t)(b * k + j) * len, t,
                              beam->next_sum[b * k + j]);
            alive = 0;
        }
        beam->alive[b] = alive;
        for (int r = b * k + alive; r < (b + 1) * k; r++)
            beam->parent[r] = r, beam->feed[r] = beam->settings.start;
        beam->done = beam->done && beam->alive[b] == 0;
    }
    int *prefix = beam->prefix;
    beam->prefix = beam->next_prefix, beam->next_prefix = prefix;
    double *sum = beam->sum;
    beam->sum = beam->next_sum, beam->next_sum = sum;
    return beam->done;
}

void beam_finish(const Beam *beam, int *out, int *lengths, double *sums)
{
    const int k = beam->size, len = beam->max_len, width = beam->settings.max_len;
    ENSURE(beam->done, "finishing a search under way (step %d)", beam->step);
    for (int b = 0; b < beam->batch; b++) {
        ENSURE(beam->count[b] > 0, "source %d has no output", b);
        if (out) memcpy(out + (size_t)b * width, beam->hyp + (size_t)b * k * len,
                        (size_t)width * sizeof *out);
        if (lengths) lengths[b] = beam->hyp_len[b * k];
        if (sums) sums[b] = beam->hyp_sum[b * k];
    }
}

void beam_search(Model *model, KVCache *cache, Beam *beam, int *out, int *lengths,
                 double *sums, const SourceBatch *source, const DecodeSettings *settings)
{
    const int *src = source->tokens, batch = source->batch, src_len = source->len;
    const uint8_t *src_keep = source->keep;
    ENSURE(beam->vocab == model->config.tgt_vocab
           && batch * beam->size <= cache->max_batch
           && settings->max_len - 1 <= cache->max_len, "beam %d x %d, cache %d x %d",
           batch, beam->size, cache->max_batch, cache->max_len);
    beam_begin(beam, batch, src_keep, src_len, settings);
    if (!beam->done) {
        decoder_cache_start(model, cache, src, src_keep, batch, src_len);
        decoder_cache_share_sources(model, cache, beam->size);
        for (;;) {
            for (int i = 0; i < cache->batch; i++)
                cache->tokens[i] = beam->feed[cache->rows[i]];
            if (beam_advance(beam, decoder_cache_step(model, cache, cache->tokens))) break;
            /* <<Make the cache follow the beam: new parents, and no row that can hold no candidate>> */
            if (beam->moved) {   /* the parents, as rows of the cache */
                for (int i = 0; i < cache->batch; i++)
                    beam->cache_parent[i] = beam->index[beam->parent[cache->rows[i]]];
                decoder_cache_reorder(model, cache, beam->cache_parent);
            }
            int kept = 0;
            for (int i = 0; i < cache->batch; i++) {
                const int r = cache->rows[i], b = r / beam->size;
                cache->keep[i] = beam->alive[b] > 0 && r % beam->size < beam->open[b];
                kept += cache->keep[i];
            }
            if (kept < cache->batch) {
                decoder_cache_keep(cache, model, cache->keep);
                for (int r = 0; r < batch * beam->size; r++) beam->index[r] = -1;
                for (int i = 0; i < cache->batch; i++) beam->index[cache->rows[i]] = i;
            }
        }
    }
    beam_finish(beam, out, lengths, sums);
}
