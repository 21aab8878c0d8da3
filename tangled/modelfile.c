/* Saving a translation model (weights, configuration, vocabularies) as one file, and
   loading it back with every field checked against the model it claims to be --
   generated from the book's chapters by notangle: edit the book, not this file. */
#include "modelfile.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "decode.h"

/* <<modelfile.c definitions>> */
static const char model_format[] = "annotated-transformer-c model";
enum { MODEL_FILE_VERSION = 3, MODEL_OLDEST_VERSION = 2 };

enum { DESCRIPTION_MAX = 40 };
typedef struct {
    int count, first_text;     /* entries; the first that is compared as text */
    char key[DESCRIPTION_MAX][24];
    char value[DESCRIPTION_MAX][200];
} ModelDescription;

static void describe(ModelDescription *d, const char *key, const char *value)
{
    ENSURE(d->count < DESCRIPTION_MAX && strlen(key) < sizeof d->key[0]
           && strlen(value) < sizeof d->value[0], "model description: no room for '%s'", key);
    strcpy(d->key[d->count], key);
    strcpy(d->value[d->count++], value);
}

static void describe_setting(void *d, const char *key, const char *value, const char *absent)
{
    describe(d, key, value);
}

static void describe_configuration(ModelDescription *d, const Config *c)
{
    char number[32];
    describe(d, "format", model_format);
    snprintf(number, sizeof number, "%d", MODEL_FILE_VERSION);
    describe(d, "version", number);
    config_write(c, CONFIG_MODEL_FILE, describe_setting, d);
}

static void describe_model(ModelDescription *d, const Config *c)
{
    describe(d, "norm.formula", c->norm == NORM_PRE
             ? "x + dropout(sublayer(LayerNorm(x))) in every sublayer; a LayerNorm "
               "(encoder.norm, decoder.norm) after the last layer of each stack"
             : "LayerNorm(x + dropout(sublayer(x))) in every sublayer; no LayerNorm after "
               "the stacks");
    describe(d, "layernorm.formula", c->layernorm == LAYERNORM_ANNOTATED
             ? "a_2 * (x - mean) / (std + epsilon) + b_2, std = sqrt(sum((x - mean)^2) / "
               "(d_model - 1))"
             : "a_2 * (x - mean) / sqrt(var + epsilon) + b_2, var = sum((x - mean)^2) / "
               "d_model (torch.nn.LayerNorm)");
    describe(d, "embedding.formula", "lut.weight[token] * sqrt(d_model) + the sinusoidal "
             "positional encoding of position (max_len rows)");
    char tied[160] = "";
    if (c->tie_generator)
        strcat(tied, "generator.proj.weight=tgt_embed.0.lut.weight");
    if (c->tie_source)
        strcat(tied, ",src_embed.0.lut.weight=tgt_embed.0.lut.weight");
    describe(d, "tied.tensors", tied);
}

static void describe_pipeline(ModelDescription *d, const Config *c, bool subwords)
{
    static const char *const special_keys[VOCAB_SPECIALS] = {
        "special.start", "special.end", "special.pad", "special.unknown"};
    for (int k = 0; k < VOCAB_SPECIALS; k++) {
        describe(d, special_keys[k], vocab_specials[k]);
        char key[24], id[12];
        snprintf(key, sizeof key, "%s.id", special_keys[k]);
        snprintf(id, sizeof id, "%d", k);
        describe(d, key, id);
    }
    char text[200];
    describe(d, "source.form", "<s> pieces </s>, at most max_len numbers (the pieces cut "
             "short)");
    describe(d, "decode.start", vocab_specials[VOCAB_START]);
    const DecodeSettings limits = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK,
                                                  c->max_len);
    snprintf(text, sizeof text, "at most min(max_len - 1, source numbers + %d) tokens after "
             "the start symbol; greedy: the most probable (of equal ones the lowest number) "
             "until the end symbol", limits.max_extra);
    describe(d, "decode.limit", text);
    describe(d, "tokenizer", "annotated-transformer-c: the Moses-style rules of the book's "
             "chapter on text");
    describe(d, "tokenizer.source", "de");
    describe(d, "tokenizer.target", "en");
    describe(d, "tokenizer.lowercase", "1");
    describe(d, "subword.marker", subwords ? "@@" : "");
    describe(d, "subword.cut", subwords
             ? "greedy longest match from the left; a piece that does not end its word ends "
               "in the marker; a character with no piece is <unk>"
             : "none: a token is one number, <unk> when absent");
}

static void describe_model_file(ModelDescription *d, const Config *c, bool subwords)
{
    d->count = 0;
    describe_configuration(d, c);
    d->first_text = d->count;
    describe_model(d, c);
    describe_pipeline(d, c, subwords);
}

static char *join_tokens(const Vocab *vocab)
{
    size_t bytes = 1;
    for (int i = 0; i < vocab->size; i++) bytes += strlen(vocab->token[i]) + 1;
    char *joined = xmalloc(bytes), *end = joined;
    for (int i = 0; i < vocab->size; i++) end += sprintf(end, "%s\n", vocab->token[i]);
    *end = '\0';
    return joined;
}

const char *translation_model_save(const char *path, const Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, bool bf16_weights, Error *error)
{
    ModelDescription d;
    describe_model_file(&d, &model->config, src_vocab->subwords);
    char *vocabs[2] = {join_tokens(src_vocab), join_tokens(tgt_vocab)};
    const char *metadata[DESCRIPTION_MAX + 4][2];
    int n = 0;
    for (; n < d.count; n++) metadata[n][0] = d.key[n], metadata[n][1] = d.value[n];
    metadata[n][0] = "vocab.src", metadata[n++][1] = vocabs[0];
    metadata[n][0] = "vocab.tgt", metadata[n++][1] = vocabs[1];
    /* <<Add the recaser to the metadata>> */
    char *cases = tgt_vocab->cases.count ? recaser_text(&tgt_vocab->cases) : NULL;
    if (cases) metadata[n][0] = "recaser", metadata[n++][1] = cases;
    const SafetensorsPart part = {"", &model->parameters, bf16_weights};
    char checksum[32];
    snprintf(checksum, sizeof checksum, "%016" PRIx64,
             safetensors_content_checksum_parts(&part, 1, (const char *const (*)[2])metadata,
                                                n));
    metadata[n][0] = "checksum", metadata[n++][1] = checksum;
    const char *failed = safetensors_write_parts(path, &part, 1,
                                                 (const char *const (*)[2])metadata, n, error);
    free(vocabs[0]), free(vocabs[1]), free(cases);
    return failed;
}

/* <<modelfile.c loading steps>> */
/* Check the model file's format, version and checksum */
static const char *check_model_identity(Safetensors *file, const char *path, int *version)
{
    char value[64];
    /* <<Check the model file's format, version and checksum>> */
    if (!safetensors_metadata(file, "format", value, sizeof value)
        || strcmp(value, model_format) != 0)
        return safetensors_metadata(file, "src_vocab", value, sizeof value)
               ? safetensors_fail(&file->error, path,
                                  "a model file of an older version (vocabularies in separate "
                                  "files, no checksum); train it again")
               : safetensors_fail(&file->error, path,
                                  "not a translation model of this program (no format '%s')",
                                  model_format);
    char *end;
    if (!safetensors_metadata(file, "version", value, sizeof value)) *value = '\0';
    const long number = strtol(value, &end, 10);
    if (!*value || *end || number < MODEL_OLDEST_VERSION || number > MODEL_FILE_VERSION)
        return safetensors_fail(&file->error, path,
                                "model file version '%s'; this program reads versions %d to %d",
                                safetensors_printable(value, value, 24), MODEL_OLDEST_VERSION,
                                MODEL_FILE_VERSION);
    *version = (int)number;
    char expected[32];
    snprintf(expected, sizeof expected, "%016" PRIx64,
             *version >= 3 ? safetensors_content_checksum(file) : safetensors_checksum(file));
    if (!safetensors_metadata(file, "checksum", value, sizeof value)
        || strcmp(value, expected) != 0)
        return safetensors_fail(&file->error, path, "checksum mismatch: the file is corrupt");
    return NULL;
}

/* Check the configuration against itself and against the file's size */
static const char *check_configuration(Safetensors *file, const char *path,
                                       const Config *config)
{
    /* <<Check the configuration against itself and against the file's size>> */
    if (config->max_len < 3)
        return safetensors_fail(&file->error, path,
                                "max_len %d is too small (at least 3)", config->max_len);
    if (config->d_model % config->heads)
        return safetensors_fail(&file->error, path,
                                "d_model %d is not a multiple of %d heads", config->d_model,
                                config->heads);
    if (config->src_vocab < VOCAB_SPECIALS || config->tgt_vocab < VOCAB_SPECIALS)
        return safetensors_fail(&file->error, path,
                                "a vocabulary of fewer than the %d special tokens", VOCAB_SPECIALS);
    Error problem;
    if (config_problem(config, &problem))
        return safetensors_fail(&file->error, path, "%s", problem.message);
    const double d = config->d_model;
    const double needed = (double)((config->tie_source ? 0 : config->src_vocab)
                                   + config->tgt_vocab) * d
                          + config->layers * (4 * d * d + 2 * d * config->d_ff);
    if (needed > (double)(file->data_size / 2))   /* 2 bytes: a bfloat16 number */
        return safetensors_fail(&file->error, path,
                                "the configuration needs at least %.0f numbers but the file "
                                "holds at most %zu", needed, file->data_size / 2);
    return NULL;
}

/* Read both vocabularies and check their sizes */
static const char *read_vocabularies(Safetensors *file, const char *path,
                                     const Config *config, Vocab *src_vocab,
                                     Vocab *tgt_vocab)
{
    const char *error = NULL;
    /* <<Read both vocabularies and check their sizes>> */
    Vocab *vocabs[2] = {src_vocab, tgt_vocab};
    const int sizes[2] = {config->src_vocab, config->tgt_vocab};
    for (int v = 0; v < 2 && error == NULL; v++) {
        const char *key = v ? "vocab.tgt" : "vocab.src";
        const char *text = safetensors_metadata_text(file, key);
        FILE *in = text && *text ? fmemopen((void *)text, strlen(text), "r") : NULL;
        char name[64];
        snprintf(name, sizeof name, "%s", key);
        if (in == NULL) error = safetensors_fail(&file->error, path, "no vocabulary '%s'", key);
        else if (vocab_read(vocabs[v], in, name))
            error = safetensors_fail(&file->error, path, "%s", vocabs[v]->error.message);
        else if (vocabs[v]->size != sizes[v])
            error = safetensors_fail(&file->error, path, "'%s' has %d tokens but the model %d",
                                     key, vocabs[v]->size, sizes[v]);
        if (in) fclose(in);
    }
    /* <<Read the recaser, if the file has one>> */
    const char *cases = safetensors_metadata_text(file, "recaser");
    Error problem;
    if (error == NULL && cases && recaser_read(&tgt_vocab->cases, cases, &problem))
        error = safetensors_fail(&file->error, path, "%s", problem.message);
    for (int v = 0; error == NULL && config->tie_source && v < src_vocab->size; v++)
        if (strcmp(src_vocab->token[v], tgt_vocab->token[v]) != 0)
            error = safetensors_fail(&file->error, path, "a shared source embedding, but the "
                                     "vocabularies differ at token %d", v);
    return error;
}

/* Check that the file describes the model as this program computes it */
static const char *check_description(Safetensors *file, const char *path,
                                     const Config *config, bool subwords)
{
    ModelDescription d;
    describe_model_file(&d, config, subwords);
    char value[256], ours[40];
    for (int i = d.first_text; i < d.count; i++) {
        if (!safetensors_metadata(file, d.key[i], value, sizeof value)) strcpy(value, "?");
        if (strcmp(value, d.value[i]) != 0)
            return safetensors_fail(&file->error, path,
                                    "'%s' is '%s', but this program computes '%s'", d.key[i],
                                    safetensors_printable(value, value, 40),
                                    safetensors_printable(d.value[i], ours, sizeof ours));
    }
    return NULL;
}

/* <<modelfile.c loading>> */
static const char *load_model_file(const char *path, Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, Safetensors *file)
{
    int version = 0;
    Config config;
    const char *error = safetensors_read(file, path);
    if (error || (error = check_model_identity(file, path, &version))
        || (error = config_read(&config, CONFIG_MODEL_FILE, version, file, path))
        || (error = check_configuration(file, path, &config)))
        return error;
    model_init(model, config);
    /* <<Check that the file holds exactly the model's tensors, and load them>> */
    if (file->count != model->parameters.count)
        return safetensors_fail(&file->error, path,
                                "%d tensors, but the model it describes has %d", file->count,
                                model->parameters.count);
    if ((error = safetensors_load(file, &model->parameters, path))) return error;
    if ((error = read_vocabularies(file, path, &config, src_vocab, tgt_vocab))) return error;
    return version >= 3 ? check_description(file, path, &config, src_vocab->subwords) : NULL;
}

const char *translation_model_load(const char *path, Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, Safetensors *file)
{
    memset(model, 0, sizeof *model);
    memset(src_vocab, 0, sizeof *src_vocab), memset(tgt_vocab, 0, sizeof *tgt_vocab);
    const char *error = load_model_file(path, model, src_vocab, tgt_vocab, file);
    if (error) {   /* all but the message, which lives in the file */
        model_free(model), vocab_free(src_vocab), vocab_free(tgt_vocab);
        safetensors_free(file);
    }
    return error;
}
