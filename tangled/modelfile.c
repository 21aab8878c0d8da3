#line 245 "book/translate-files.nw"
/* Saving a translation model (weights, configuration, vocabularies) as one file, and
   loading it back with every field checked against the model it claims to be --
   generated from the book's chapters by notangle: edit the book, not this file. */
#include "modelfile.h"
#include <cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* <<modelfile.c definitions>> */
#line 278 "book/translate-files.nw"
static const char model_format[] = "annotated-transformer-c model";
enum { MODEL_FILE_VERSION = 2, MODEL_MAX_LEN = 10000, MODEL_MAX_NUMBER = 10000000 };
static const char *const number_keys[7] = {"src_vocab", "tgt_vocab", "layers", "d_model",
                                           "d_ff", "heads", "max_len"};

#line 287 "book/translate-files.nw"
static char *join_tokens(const Vocab *vocab)
{
    size_t bytes = 1;
    for (int i = 0; i < vocab->size; i++) bytes += strlen(vocab->token[i]) + 1;
    char *joined = xmalloc(bytes), *end = joined;
    for (int i = 0; i < vocab->size; i++) end += sprintf(end, "%s\n", vocab->token[i]);
    *end = '\0';
    return joined;
}

#line 302 "book/translate-files.nw"
const char *translation_model_save(const char *path, const Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, bool bf16_weights,
                                   Safetensors *scratch)
{
    const Config *c = &model->config;
    char numbers[8][32];
    const int values[8] = {c->src_vocab, c->tgt_vocab, c->layers, c->d_model, c->d_ff,
                           c->heads, c->max_len, MODEL_FILE_VERSION};
    for (int i = 0; i < 8; i++) snprintf(numbers[i], sizeof numbers[i], "%d", values[i]);
    char *vocabs[2] = {join_tokens(src_vocab), join_tokens(tgt_vocab)};
    char checksum[32];
    const char *metadata[16][2] = {
        {"format", model_format}, {"version", numbers[7]},
        {"src_vocab", numbers[0]}, {"tgt_vocab", numbers[1]}, {"layers", numbers[2]},
        {"d_model", numbers[3]}, {"d_ff", numbers[4]}, {"heads", numbers[5]},
        {"max_len", numbers[6]}, {"norm", c->norm == NORM_PRE ? "pre" : "post"},
        {"layernorm", c->layernorm == LAYERNORM_ANNOTATED ? "annotated" : "standard"},
        {"tied", c->tie_generator ? "1" : "0"},
        {"vocab.src", vocabs[0]}, {"vocab.tgt", vocabs[1]}, {"checksum", checksum},
        {"tied_source", "1"}};   /* written only for a shared source embedding */
    const int count = c->tie_source ? 16 : 15;
    const SafetensorsPart part = {"", &model->parameters, bf16_weights};
    snprintf(checksum, sizeof checksum, "%016" PRIx64,
             safetensors_checksum_parts(&part, 1, (const char *const (*)[2])metadata, count));
    const char *error = safetensors_write_parts(path, &part, 1,
                                                (const char *const (*)[2])metadata, count,
                                                scratch);
    free(vocabs[0]), free(vocabs[1]);
    return error;
}

#line 344 "book/translate-files.nw"
const char *translation_model_load(const char *path, Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, Safetensors *file)
{
    memset(model, 0, sizeof *model);
    memset(src_vocab, 0, sizeof *src_vocab), memset(tgt_vocab, 0, sizeof *tgt_vocab);
    const char *error = safetensors_read(file, path);
    if (error) return error;
    char value[64];
    /* <<Check the model file's format, version and checksum>> */
#line 368 "book/translate-files.nw"
    if (!safetensors_metadata(file, "format", value, sizeof value)
        || strcmp(value, model_format) != 0)
        return safetensors_metadata(file, "src_vocab", value, sizeof value)
               ? safetensors_fail(file, path,
                                  "a model file of an older version (vocabularies in separate "
                                  "files, no checksum); train it again")
               : safetensors_fail(file, path,
                                  "not a translation model of this program (no format '%s')",
                                  model_format);
    if (!safetensors_metadata(file, "version", value, sizeof value)
        || strtol(value, NULL, 10) != MODEL_FILE_VERSION)
        return safetensors_fail(file, path,
                                "model file version '%s'; this program reads version %d",
                                safetensors_printable(value, value, 24), MODEL_FILE_VERSION);
    char expected[32];
    snprintf(expected, sizeof expected, "%016" PRIx64, safetensors_checksum(file));
    if (!safetensors_metadata(file, "checksum", value, sizeof value)
        || strcmp(value, expected) != 0)
        return safetensors_fail(file, path, "checksum mismatch: the file is corrupt");
#line 353 "book/translate-files.nw"
    Config config;
    /* <<Read the configuration, each number within its bounds>> */
#line 393 "book/translate-files.nw"
    int numbers[7];
    for (int i = 0; i < 7; i++) {
        char *end;
        if (!safetensors_metadata(file, number_keys[i], value, sizeof value)) *value = '\0';
        const long number = strtol(value, &end, 10);
        const long most = i == 6 ? MODEL_MAX_LEN : MODEL_MAX_NUMBER;
        if (!*value || *end || number < 1 || number > most)
            return safetensors_fail(file, path,
                                    "'%s' must be a whole number from 1 to %ld, not '%s'",
                                    number_keys[i], most, safetensors_printable(value, value, 24));
        numbers[i] = (int)number;
    }
    config = config_default(numbers[0], numbers[1], numbers[2]);
    config.d_model = numbers[3], config.d_ff = numbers[4], config.heads = numbers[5];
    config.max_len = numbers[6];
#line 355 "book/translate-files.nw"
    /* <<Read the model's norm placement, layer-norm formula and tying, refusing other values>> */
#line 415 "book/translate-files.nw"
    static const char *const settings_keys[3] = {"norm", "layernorm", "tied"};
    static const char *const settings_words[3][2] = {{"pre", "post"}, {"standard", "annotated"},
                                                     {"0", "1"}};
    int chosen[3];
    for (int k = 0; k < 3; k++) {
        if (!safetensors_metadata(file, settings_keys[k], value, sizeof value)) *value = '\0';
        if (strcmp(value, settings_words[k][0]) != 0 && strcmp(value, settings_words[k][1]) != 0)
            return safetensors_fail(file, path,
                                    "'%s' must be '%s' or '%s', not '%s'", settings_keys[k],
                                    settings_words[k][0], settings_words[k][1],
                                    safetensors_printable(value, value, 44));
        chosen[k] = strcmp(value, settings_words[k][1]) == 0;
    }
    config.norm = chosen[0] ? NORM_POST : NORM_PRE;
    config.layernorm = chosen[1] ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD;
    config.tie_generator = chosen[2];
    /* <<Read whether the source embedding is shared, absent meaning not>> */
#line 439 "book/translate-files.nw"
    if (!safetensors_metadata(file, "tied_source", value, sizeof value)) strcpy(value, "0");
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
        return safetensors_fail(file, path, "'tied_source' must be '0' or '1', not '%s'",
                                safetensors_printable(value, value, 44));
    config.tie_source = value[0] == '1';
#line 356 "book/translate-files.nw"
    /* <<Check the configuration against itself and against the file's size>> */
#line 457 "book/translate-files.nw"
    if (config.max_len < 3)
        return safetensors_fail(file, path,
                                "max_len %d is too small (at least 3)", config.max_len);
    if (config.d_model % config.heads)
        return safetensors_fail(file, path,
                                "d_model %d is not a multiple of %d heads", config.d_model,
                                config.heads);
    if (config.src_vocab < VOCAB_SPECIALS || config.tgt_vocab < VOCAB_SPECIALS)
        return safetensors_fail(file, path, "a vocabulary of fewer than the %d special tokens",
                                VOCAB_SPECIALS);
    char problem[128];
    if (config_problem(&config, problem, sizeof problem))
        return safetensors_fail(file, path, "%s", problem);
    const double d = config.d_model;
    const double needed = (double)((config.tie_source ? 0 : config.src_vocab) + config.tgt_vocab) * d
                          + config.layers * (4 * d * d + 2 * d * config.d_ff);
    if (needed > (double)(file->data_size / 2))   /* 2 bytes: a bfloat16 number */
        return safetensors_fail(file, path,
                                "the configuration needs at least %.0f numbers but the file "
                                "holds at most %zu", needed, file->data_size / 2);
#line 357 "book/translate-files.nw"
    model_init(model, config);
    /* <<Check that the file holds exactly the model's tensors, and load them>> */
#line 484 "book/translate-files.nw"
    if (file->count != model->parameters.count)
        return safetensors_fail(file, path,
                                "%d tensors, but the model it describes has %d", file->count,
                                model->parameters.count);
    if ((error = safetensors_load(file, &model->parameters, path))) return error;
#line 359 "book/translate-files.nw"
    /* <<Read both vocabularies and check their sizes>> */
#line 498 "book/translate-files.nw"
    cJSON *meta = cJSON_Parse(file->metadata_json);
    Vocab *vocabs[2] = {src_vocab, tgt_vocab};
    const int sizes[2] = {config.src_vocab, config.tgt_vocab};
    for (int v = 0; v < 2 && error == NULL; v++) {
        const char *key = v ? "vocab.tgt" : "vocab.src";
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(meta, key);
        FILE *in = cJSON_IsString(item) && *item->valuestring
                   ? fmemopen(item->valuestring, strlen(item->valuestring), "r") : NULL;
        char name[64];
        snprintf(name, sizeof name, "%s", key);
        if (in == NULL) error = safetensors_fail(file, path, "no vocabulary '%s'", key);
        else if (vocab_read(vocabs[v], in, name))
            error = safetensors_fail(file, path, "%s", vocabs[v]->error);
        else if (vocabs[v]->size != sizes[v])
            error = safetensors_fail(file, path, "'%s' has %d tokens but the model %d", key,
                                     vocabs[v]->size, sizes[v]);
        if (in) fclose(in);
    }
    cJSON_Delete(meta);
    for (int v = 0; error == NULL && config.tie_source && v < src_vocab->size; v++)
        if (strcmp(src_vocab->token[v], tgt_vocab->token[v]) != 0)
            error = safetensors_fail(file, path, "a shared source embedding, but the "
                                     "vocabularies differ at token %d", v);
    if (error) return error;
#line 360 "book/translate-files.nw"
    return NULL;
}
