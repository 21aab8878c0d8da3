/* Translation data: token pairs and batches -- generated: edit the book. */
#include "data.h"
#include <stdlib.h>
#include <string.h>

/* <<data.c definitions>> */
void corpus_free(Corpus *corpus)
{
    free(corpus->src_offset), free(corpus->tgt_offset);
    free(corpus->src_ids), free(corpus->tgt_ids);
    memset(corpus, 0, sizeof *corpus);
}

/* What a pair is sorted by, next to its number: qsort's comparison sees only two items. */
typedef struct { int tgt_len, src_len, pair; } LengthKey;

static int by_length(const void *a, const void *b)
{
    const LengthKey *x = a, *y = b;
    if (x->tgt_len != y->tgt_len) return x->tgt_len - y->tgt_len;
    if (x->src_len != y->src_len) return x->src_len - y->src_len;
    return (x->pair > y->pair) - (x->pair < y->pair);
}

void batch_plan(BatchPlan *plan, const Corpus *corpus, int token_budget)
{
    memset(plan, 0, sizeof *plan);
    const int n = corpus->count;
    plan->order = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *plan->order);
    plan->spans = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *plan->spans);
    LengthKey *keys = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    for (int i = 0; i < n; i++)
        keys[i] = (LengthKey){corpus_tgt_len(corpus, i), corpus_src_len(corpus, i), i};
    qsort(keys, (size_t)n, sizeof *keys, by_length);
    for (int i = 0; i < n; i++) plan->order[i] = keys[i].pair;
    free(keys);
    /* <<Cut the sorted pairs into batches within the budget>> */
    for (int i = 0; i < n;) {
        BatchSpan span = {.first = i};
        while (i < n) {
            const int pair = plan->order[i];
            const int s = span.src_len > corpus_src_len(corpus, pair)
                              ? span.src_len : corpus_src_len(corpus, pair);
            const int t = span.tgt_len > corpus_tgt_len(corpus, pair)
                              ? span.tgt_len : corpus_tgt_len(corpus, pair);
            if (span.count > 0 && (long)(span.count + 1) * (s > t ? s : t) > token_budget) break;
            span.count++, span.src_len = s, span.tgt_len = t, i++;
        }
        plan->spans[plan->count++] = span;
        if (span.count > plan->max_pairs) plan->max_pairs = span.count;
        if (span.src_len > plan->max_src_len) plan->max_src_len = span.src_len;
        if (span.tgt_len > plan->max_tgt_len) plan->max_tgt_len = span.tgt_len;
    }
}

void batch_plan_free(BatchPlan *plan)
{
    free(plan->order), free(plan->spans);
    memset(plan, 0, sizeof *plan);
}

void batch_fill_span(Batch *batch, const Corpus *corpus, const BatchPlan *plan,
                     const BatchSpan *span, int pad)
{
    const int n = span->count, s = span->src_len, t = span->tgt_len - 1;
    batch->batch = n, batch->src_len = s, batch->tgt_len = t;
    for (int b = 0; b < n; b++) {
        const int pair = plan->order[span->first + b];
        const int *src = corpus_src(corpus, pair), *tgt = corpus_tgt(corpus, pair);
        const int src_len = corpus_src_len(corpus, pair), tgt_len = corpus_tgt_len(corpus, pair);
        for (int i = 0; i < s; i++) batch->src[(size_t)b * s + i] = i < src_len ? src[i] : pad;
        for (int i = 0; i < t; i++) {
            batch->tgt[(size_t)b * t + i] = i < tgt_len ? tgt[i] : pad;
            batch->tgt_y[(size_t)b * t + i] = i + 1 < tgt_len ? tgt[i + 1] : pad;
        }
    }
    padding_mask(batch->src_keep, batch->src, n, s, pad);
    target_mask(batch->tgt_keep, batch->tgt, n, t, pad);
}

void batch_order(int *order, int count, uint64_t seed, int epoch)
{
    Rng rng;
    rng_seed(&rng, seed * 1000003u + (uint64_t)epoch, 5);
    for (int i = 0; i < count; i++) order[i] = i;
    for (int i = count - 1; i > 0; i--) {   /* Fisher--Yates */
        const int j = (int)(rng_next(&rng) % (uint32_t)(i + 1));
        const int swap = order[i];
        order[i] = order[j], order[j] = swap;
    }
}

BatchBounds batch_plan_bounds(const BatchPlan *a, const BatchPlan *b)
{
    BatchBounds most = {0, 0, 0, 0, 0};
    const BatchPlan *plans[2] = {a, b};
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < plans[p]->count; i++) {
            const BatchSpan *span = &plans[p]->spans[i];
            if (span->count > most.pairs) most.pairs = span->count;
            if (span->src_len > most.src_len) most.src_len = span->src_len;
            if (span->tgt_len > most.tgt_len) most.tgt_len = span->tgt_len;
            if (span->count * span->src_len > most.src_tokens)
                most.src_tokens = span->count * span->src_len;
            if (span->count * (span->tgt_len - 1) > most.tgt_tokens)
                most.tgt_tokens = span->count * (span->tgt_len - 1);
        }
    return most;
}

static void number_side(int **offsets, int **ids, const TokenizedFile *file,
                        const Vocab *vocab, long lines, int max_tokens)
{
    *offsets = xmalloc((size_t)(lines + 1) * sizeof **offsets);
    size_t capacity = 0;
    *ids = xgrow(NULL, &capacity, (size_t)max_tokens, sizeof **ids);
    int n = 0;
    for (long l = 0; l < lines; l++) {
        *ids = xgrow(*ids, &capacity, (size_t)n + (size_t)max_tokens, sizeof **ids);
        (*offsets)[l] = n;
        (*ids)[n++] = VOCAB_START;
        for (long t = file->line_start[l]; t < file->line_start[l + 1]; t++)
            n += vocab_encode(vocab, file->token[t], *ids + n,
                              max_tokens - 1 - (n - (*offsets)[l]));
        (*ids)[n++] = VOCAB_END;
    }
    (*offsets)[lines] = n;
}

Corpus corpus_number(const TokenizedFile *src, const TokenizedFile *tgt,
                     const Vocab *src_vocab, const Vocab *tgt_vocab, long limit,
                     int max_tokens)
{
    ENSURE(src->lines == tgt->lines, "%ld source lines, %ld target lines", src->lines,
           tgt->lines);
    const long lines = limit > 0 && limit < src->lines ? limit : src->lines;
    Corpus corpus = {.count = (int)lines};
    number_side(&corpus.src_offset, &corpus.src_ids, src, src_vocab, lines, max_tokens);
    number_side(&corpus.tgt_offset, &corpus.tgt_ids, tgt, tgt_vocab, lines, max_tokens);
    return corpus;
}

const char *translation_data_load(TranslationData *data, const char *dir, long subset,
                                  bool joint, int subwords, Error *error)
{
    const TextOptions german = {TEXT_GERMAN, true}, english = {TEXT_ENGLISH, true};
    static const char *const names[4] = {"train.de", "train.en", "val.de", "val.en"};
    TokenizedFile files[4];
    int read = 0;
    for (; read < 4; read++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[read]);
        const char *problem = tokenize_file(path, read % 2 ? english : german, &files[read]);
        if (problem) {
            error_set(error, "%s", problem);
            break;
        }
    }
    for (int f = 0; read == 4 && f < 4; f += 2)
        if (files[f].lines != files[f + 1].lines) {
            error_set(error, "%s/%s has %ld lines but %s/%s has %ld", dir, names[f],
                      files[f].lines, dir, names[f + 1], files[f + 1].lines);
            read = 5;   /* all four to free */
        }
    if (read == 4) {
        const long lines = subset && subset < files[0].lines ? subset : files[0].lines;
        /* <<Build the source and target vocabularies, or one for both>> */
        const long n_de = files[0].line_start[lines], n_en = files[1].line_start[lines];
        if (joint || subwords > 0) {
            char **both = xmalloc((size_t)(n_de + n_en + 1) * sizeof *both);
            memcpy(both, files[0].token, (size_t)n_de * sizeof *both);
            memcpy(both + n_de, files[1].token, (size_t)n_en * sizeof *both);
            if (subwords > 0)
                vocab_learn_subwords(&data->src_vocab, both, n_de + n_en, subwords);
            else
                vocab_build(&data->src_vocab, both, n_de + n_en, 2);
            vocab_copy(&data->tgt_vocab, &data->src_vocab);
            free(both);
        } else {
            vocab_build(&data->src_vocab, files[0].token, n_de, 2);
            vocab_build(&data->tgt_vocab, files[1].token, n_en, 2);
        }
        data->train = corpus_number(&files[0], &files[1], &data->src_vocab, &data->tgt_vocab,
                                    subset, 128);
        data->validation = corpus_number(&files[2], &files[3], &data->src_vocab,
                                         &data->tgt_vocab, subset, 128);
        /* <<Learn how the English words are written>> */
        char cased_path[4200];
        snprintf(cased_path, sizeof cased_path, "%s/%s", dir, names[1]);
        TokenizedFile cased;
        const char *problem = tokenize_file(cased_path, (TextOptions){TEXT_ENGLISH, false}, &cased);
        if (problem) error_set(error, "%s", problem), read = 5;
        else recaser_learn(&data->tgt_vocab.cases, &cased, lines);
        tokenized_file_free(&cased);
    }
    for (int f = 0; f < (read < 4 ? read : 4); f++) tokenized_file_free(&files[f]);
    return read == 4 ? NULL : error->message;
}

void translation_data_free(TranslationData *data)
{
    vocab_free(&data->src_vocab), vocab_free(&data->tgt_vocab);
    corpus_free(&data->train), corpus_free(&data->validation);
}
