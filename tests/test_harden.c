/* test_harden.c -- what the program refuses (issue 19): model files saved as one unit and
   checked field by field, lines with NUL bytes or CR endings read one way everywhere, and
   the smaller failures of the issue, each named by its item. */
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "modelfile.h"
#include "tests.h"

/* Rewrite the model file at PATH with metadata KEY set to VALUE (NULL: removed), the
   checksum recomputed so that the change is the only thing wrong. 0 on success. */
int model_file_rewrite(const char *path, const char *key, const char *value)
{
    Safetensors file;
    if (safetensors_read(&file, path)) return -1;
    uint64_t length = 0;
    for (int i = 7; i >= 0; i--) length = length << 8 | file.bytes[i];
    cJSON *header = cJSON_ParseWithLength((const char *)file.bytes + 8, (size_t)length);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(header, "__metadata__");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "checksum");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
    if (value) cJSON_AddStringToObject(meta, key, value);
    char *printed = cJSON_PrintUnformatted(meta);
    Safetensors view = file;
    view.metadata_json = printed;
    char checksum[32];
    snprintf(checksum, sizeof checksum, "%016" PRIx64, safetensors_checksum(&view));
    free(printed);
    cJSON_AddStringToObject(meta, "checksum", checksum);
    char *json = cJSON_PrintUnformatted(header);
    const size_t n = strlen(json);
    FILE *out = fopen(path, "wb");
    for (int i = 0; i < 8; i++) fputc((int)((uint64_t)n >> (8 * i) & 0xff), out);
    fwrite(json, 1, n, out);
    fwrite(file.data, 1, file.data_size, out);
    const int status = fclose(out);
    free(json);
    cJSON_Delete(header);
    safetensors_free(&file);
    return status;
}

/* A small translation model with random weights and vocabularies of 9 and 8 tokens. */
static void small_model(Model *model, Vocab *src, Vocab *tgt)
{
    static char words[][8] = {"ein", "hund", "und", "eine", "katze", "die", "der", "das",
                              "a", "dog", "and", "cat", "the", "is", "on", "in"};
    char *tokens[32];
    for (int i = 0; i < 16; i++) tokens[2 * i] = tokens[2 * i + 1] = words[i];
    vocab_build(src, tokens, 10, 2);    /* 5 German words twice: 4 specials + 5 */
    vocab_build(tgt, tokens + 16, 8, 2);  /* 4 English words twice */
    Config config = config_default(src->size, tgt->size, 1);
    config.d_model = 16, config.d_ff = 32, config.heads = 2, config.max_len = 40;
    model_init(model, config);
    Rng rng;
    rng_seed(&rng, 7, 1);
    model_initialize_parameters(model, &rng);
}

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/harden-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}

/* The error of loading PATH, or "" when it loads. */
static const char *load_error(const char *path)
{
    static char message[600];
    Model model;
    Vocab src, tgt;
    Safetensors file;
    const char *error = translation_model_load(path, &model, &src, &tgt, &file);
    snprintf(message, sizeof message, "%s", error ? error : "");
    safetensors_free(&file), model_free(&model), vocab_free(&src), vocab_free(&tgt);
    return message;
}

/* Issue 19, item 4: the weights and both vocabularies are one file; it loads back exactly. */
START_TEST(model_file_is_one_unit)
{
    make_dir();
    Model model, back;
    Vocab src, tgt, src_back, tgt_back;
    small_model(&model, &src, &tgt);
    char path[128];
    snprintf(path, sizeof path, "%s/m.st", dir);
    Safetensors file;
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, &file));
    struct stat st;
    char other[160];
    snprintf(other, sizeof other, "%s.src.vocab", path);
    ck_assert_int_ne(stat(other, &st), 0);   /* no file beside it */
    const char *error = translation_model_load(path, &back, &src_back, &tgt_back, &file);
    ck_assert_msg(error == NULL, "%s", error);
    safetensors_free(&file);
    ck_assert_int_eq(src_back.size, src.size);
    ck_assert_int_eq(tgt_back.size, tgt.size);
    for (int i = 0; i < src.size; i++) ck_assert_str_eq(src_back.token[i], src.token[i]);
    for (int i = 0; i < tgt.size; i++) ck_assert_str_eq(tgt_back.token[i], tgt.token[i]);
    ck_assert_int_eq(back.parameters.total, model.parameters.total);
    ck_assert(memcmp(back.parameters.data, model.parameters.data,
                     model.parameters.total * sizeof(float)) == 0);
    model_free(&model), model_free(&back);
    vocab_free(&src), vocab_free(&tgt), vocab_free(&src_back), vocab_free(&tgt_back);
    remove_dir();
}
END_TEST

/* Issue 19, item 9: every field is checked against the model the file claims to be. */
START_TEST(model_file_fields_checked)
{
    make_dir();
    Model model;
    Vocab src, tgt;
    small_model(&model, &src, &tgt);
    char path[128];
    snprintf(path, sizeof path, "%s/m.st", dir);
    Safetensors scratch;
    static const struct { const char *key, *value, *message; } cases[] = {
        {"heads", "3", "d_model 16 is not a multiple of 3 heads"},
        {"heads", "0", "'heads' must be a whole number from 1 to"},
        {"norm", "sideways", "'norm' must be 'pre' or 'post', not 'sideways'"},
        {"norm", NULL, "'norm' must be 'pre' or 'post', not ''"},
        {"layernorm", NULL, "'layernorm' must be 'standard' or 'annotated'"},
        {"max_len", "1", "max_len 1 is too small (at least 3)"},
        {"max_len", "20", NULL},   /* within bounds: a model may be asked for less */
        {"max_len", "99999999", "'max_len' must be a whole number from 1 to 10000"},
        {"layers", "2", "tensors, but the model it describes has"},
        {"d_ff", "16", "has the wrong dtype or shape"},
        {"src_vocab", "100000", "the configuration needs at least"},
        {"src_vocab", "8", "tensor 'src_embed.0.lut.weight' has the wrong dtype or shape"},
        {"vocab.src", "<s>\n</s>\n<blank>\n<unk>\nein\nhund\nund\neine\n",
         "'vocab.src' has 8 tokens but the model 9"},
        {"tgt_vocab", "3", "a vocabulary of fewer than the 4 special tokens"},
        {"vocab.src", "<s>\n</s>\n<blank>\n<unk>\nein\nhund\nund\neine\nein\n",
         "vocab.src:9: a token that is already listed"},
        {"vocab.tgt", NULL, "no vocabulary 'vocab.tgt'"},
        {"version", "1", "model file version '1'; this program reads version 2"},
        {"format", NULL, "a model file of an older version"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, &scratch));
        ck_assert_int_eq(model_file_rewrite(path, cases[c].key, cases[c].value), 0);
        const char *error = load_error(path);
        if (cases[c].message == NULL)
            ck_assert_msg(*error == '\0', "%s=%s: %s", cases[c].key, cases[c].value, error);
        else
            ck_assert_msg(strstr(error, cases[c].message) && strstr(error, path)
                          && !strchr(error, '\n'),
                          "%s=%s: '%s'", cases[c].key, cases[c].value, error);
    }
    /* a flipped byte of a weight, or of the metadata, fails the checksum */
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, &scratch));
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    const long offsets[2] = {(long)st.st_size - 5, 100};
    for (int o = 0; o < 2; o++) {
        ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, &scratch));
        FILE *f = fopen(path, "r+b");
        fseek(f, offsets[o], SEEK_SET);
        const int byte = fgetc(f);
        fseek(f, offsets[o], SEEK_SET);
        fputc(o ? (byte == '1' ? '2' : '1') : byte ^ 0x10, f);
        fclose(f);
        ck_assert_msg(strstr(load_error(path), "checksum mismatch"), "%s", load_error(path));
    }
    model_free(&model), vocab_free(&src), vocab_free(&tgt);
    remove_dir();
}
END_TEST

/* Issue 19, item 9: tensors whose data overlap, or leave bytes unused, are refused by the
   safetensors reader itself. */
static void write_raw(const char *path, const char *json, size_t data_bytes)
{
    FILE *out = fopen(path, "wb");
    const size_t n = strlen(json);
    for (int i = 0; i < 8; i++) fputc((int)((uint64_t)n >> (8 * i) & 0xff), out);
    fputs(json, out);
    for (size_t i = 0; i < data_bytes; i++) fputc(0, out);
    fclose(out);
}

START_TEST(safetensors_overlap_refused)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/o.st", dir);
    static const struct { const char *json; size_t bytes; const char *message; } cases[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
         "tensors overlap, or leave a gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         "tensors overlap, or leave a gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
         "tensors overlap, or leave a gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 12,
         "8 bytes after the last tensor"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        write_raw(path, cases[c].json, cases[c].bytes);
        Safetensors file;
        const char *error = safetensors_read(&file, path);
        if (cases[c].message == NULL) ck_assert_msg(error == NULL, "%zu: %s", c, error);
        else ck_assert_msg(error && strstr(error, cases[c].message), "%zu: %s", c,
                           error ? error : "loaded");
        safetensors_free(&file);
    }
    remove_dir();
}
END_TEST

Suite *harden_suite(void)
{
    Suite *suite = suite_create("harden");
    TCase *model_file = tcase_create("model file");
    tcase_add_test(model_file, model_file_is_one_unit);
    tcase_add_test(model_file, model_file_fields_checked);
    tcase_add_test(model_file, safetensors_overlap_refused);
    suite_add_tcase(suite, model_file);
    return suite;
}
