#line 29 "book/translate.nw"
/* Translation data: token pairs, batches, model files -- generated: edit the book. */
#include "data.h"
#include <stdlib.h>
#include <string.h>
/* <<data.c definitions>> */
#line 73 "book/translate.nw"
void corpus_free(Corpus *corpus)
{
    free(corpus->src_offset), free(corpus->tgt_offset);
    free(corpus->src_ids), free(corpus->tgt_ids);
    memset(corpus, 0, sizeof *corpus);
}
#line 125 "book/translate.nw"
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
#line 159 "book/translate.nw"
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
#line 149 "book/translate.nw"
}

void batch_plan_free(BatchPlan *plan)
{
    free(plan->order), free(plan->spans);
    memset(plan, 0, sizeof *plan);
}
#line 190 "book/translate.nw"
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
#line 223 "book/translate.nw"
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
#line 386 "book/translate.nw"
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
#line 498 "book/translate.nw"
static void number_side(int **offsets, int **ids, const TokenizedFile *file,
                        const Vocab *vocab, long lines, int max_tokens)
{
    *offsets = xmalloc((size_t)(lines + 1) * sizeof **offsets);
    *ids = xmalloc((size_t)(file->line_start[lines] + 2 * lines + 1) * sizeof **ids);
    int n = 0;
    for (long l = 0; l < lines; l++) {
        (*offsets)[l] = n;
        (*ids)[n++] = VOCAB_START;
        for (long t = file->line_start[l]; t < file->line_start[l + 1]; t++)
            if (n - (*offsets)[l] < max_tokens - 1)
                (*ids)[n++] = vocab_lookup(vocab, file->token[t]);
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
#line 540 "book/translate.nw"
int number_sentence(int *ids, char *text, const Vocab *vocab, int max_tokens)
{
    int n = 0;
    ids[n++] = VOCAB_START;
    for (char *token = strtok(text, " "); token && n < max_tokens - 1;
         token = strtok(NULL, " "))
        ids[n++] = vocab_lookup(vocab, token);
    ids[n++] = VOCAB_END;
    return n;
}
#line 571 "book/translate.nw"
const char *translation_data_load(TranslationData *data, const char *dir, long subset,
                                  char *error, size_t size)
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
            snprintf(error, size, "%s", problem);
            break;
        }
    }
    for (int f = 0; read == 4 && f < 4; f += 2)
        if (files[f].lines != files[f + 1].lines) {
            snprintf(error, size, "%s/%s has %ld lines but %s/%s has %ld", dir, names[f],
                     files[f].lines, dir, names[f + 1], files[f + 1].lines);
            read = 5;   /* all four to free */
        }
    if (read == 4) {
        const long lines = subset && subset < files[0].lines ? subset : files[0].lines;
        vocab_build(&data->src_vocab, files[0].token, files[0].line_start[lines], 2);
        vocab_build(&data->tgt_vocab, files[1].token, files[1].line_start[lines], 2);
        data->train = corpus_number(&files[0], &files[1], &data->src_vocab, &data->tgt_vocab,
                                    subset, 128);
        data->validation = corpus_number(&files[2], &files[3], &data->src_vocab,
                                         &data->tgt_vocab, subset, 128);
    }
    for (int f = 0; f < (read < 4 ? read : 4); f++) tokenized_file_free(&files[f]);
    return read == 4 ? NULL : error;
}

void translation_data_free(TranslationData *data)
{
    vocab_free(&data->src_vocab), vocab_free(&data->tgt_vocab);
    corpus_free(&data->train), corpus_free(&data->validation);
}
#line 647 "book/translate.nw"
const char *translation_model_save(const char *path, const Model *model,
                                   Vocab *src_vocab, Vocab *tgt_vocab, Safetensors *scratch)
{
    memset(scratch, 0, sizeof *scratch);
    char vocab_path[2][4200];
    Vocab *vocabs[2] = {src_vocab, tgt_vocab};
    for (int v = 0; v < 2; v++) {
        snprintf(vocab_path[v], sizeof vocab_path[v], "%s.%s.vocab", path, v ? "tgt" : "src");
        const char *error = vocab_save(vocabs[v], vocab_path[v]);
        if (error) {
            snprintf(scratch->error, sizeof scratch->error, "%s", error);
            return scratch->error;
        }
    }
    const Config *c = &model->config;
    char numbers[7][32];
    const int values[7] = {c->src_vocab, c->tgt_vocab, c->layers, c->d_model, c->d_ff,
                           c->heads, c->max_len};
    for (int i = 0; i < 7; i++) snprintf(numbers[i], sizeof numbers[i], "%d", values[i]);
    const char *const metadata[10][2] = {
        {"src_vocab", numbers[0]}, {"tgt_vocab", numbers[1]}, {"layers", numbers[2]},
        {"d_model", numbers[3]}, {"d_ff", numbers[4]}, {"heads", numbers[5]},
        {"max_len", numbers[6]}, {"norm", c->norm == NORM_PRE ? "pre" : "post"},
        {"layernorm", c->layernorm == LAYERNORM_ANNOTATED ? "annotated" : "standard"},
        {"tied", c->tie_generator ? "1" : "0"}};
    return safetensors_write(path, &model->parameters, metadata, 10, scratch);
}

const char *translation_model_load(const char *path, Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, Safetensors *file)
{
    const char *error = safetensors_read(file, path);
    if (error) return error;
    static const char *const keys[7] = {"src_vocab", "tgt_vocab", "layers", "d_model",
                                        "d_ff", "heads", "max_len"};
    int numbers[7];
    char value[64];
    for (int i = 0; i < 7; i++) {
        char *end;
        if (!safetensors_metadata(file, keys[i], value, sizeof value)) *value = '\0';
        const long number = strtol(value, &end, 10);
        if (!*value || *end || number < 1 || number > 10000000) {
            snprintf(file->error, sizeof file->error,
                     "%s: not a translation model (bad or missing '%s')", path, keys[i]);
            return file->error;
        }
        numbers[i] = (int)number;
    }
    Config config = config_default(numbers[0], numbers[1], numbers[2]);
    config.d_model = numbers[3], config.d_ff = numbers[4], config.heads = numbers[5];
    config.max_len = numbers[6];
    /* <<Read the model's norm placement, layer-norm formula and tying, refusing other values>> */
#line 735 "book/translate.nw"
    static const char *const settings_keys[3] = {"norm", "layernorm", "tied"};
    static const char *const settings_words[3][2] = {{"pre", "post"}, {"standard", "annotated"},
                                                     {"0", "1"}};
    int chosen[3] = {0, 0, 0};   /* absent: pre-norm, the standard formula, not tied */
    for (int k = 0; k < 3; k++) {
        if (!safetensors_metadata(file, settings_keys[k], value, sizeof value)) continue;
        if (strcmp(value, settings_words[k][0]) != 0 && strcmp(value, settings_words[k][1]) != 0) {
            snprintf(file->error, sizeof file->error, "%s: '%s' must be '%s' or '%s', not '%.40s'",
                     path, settings_keys[k], settings_words[k][0], settings_words[k][1], value);
            return file->error;
        }
        chosen[k] = strcmp(value, settings_words[k][1]) == 0;
    }
    config.norm = chosen[0] ? NORM_POST : NORM_PRE;
    config.layernorm = chosen[1] ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD;
    config.tie_generator = chosen[2];
#line 699 "book/translate.nw"
    if (config.max_len < 3) {   /* <s>, a token and </s>: the shortest sentence */
        snprintf(file->error, sizeof file->error, "%s: max_len %d is too small (at least 3)",
                 path, config.max_len);
        return file->error;
    }
    if (config.d_model % config.heads) {
        snprintf(file->error, sizeof file->error, "%s: d_model %d is not a multiple of %d "
                 "heads", path, config.d_model, config.heads);
        return file->error;
    }
    model_init(model, config);
    if ((error = safetensors_load(file, &model->parameters, path))) return error;
    Vocab *vocabs[2] = {src_vocab, tgt_vocab};
    const int sizes[2] = {config.src_vocab, config.tgt_vocab};
    for (int v = 0; v < 2; v++) {
        char vocab_path[4200];
        snprintf(vocab_path, sizeof vocab_path, "%s.%s.vocab", path, v ? "tgt" : "src");
        if ((error = vocab_load(vocabs[v], vocab_path))) {
            snprintf(file->error, sizeof file->error, "%s", error);
            return file->error;
        }
        if (vocabs[v]->size != sizes[v]) {
            snprintf(file->error, sizeof file->error, "%.400s has %d tokens but the model %d",
                     vocab_path, vocabs[v]->size, sizes[v]);
            return file->error;
        }
    }
    return NULL;
}
