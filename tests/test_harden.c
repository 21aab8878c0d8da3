/* test_harden.c -- what the program refuses (issue 19): model files saved as one unit and
   checked field by field, lines with NUL bytes or CR endings read one way everywhere, and
   the smaller failures of the issue, each named by its item. */
#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "beam.h"
#include "data.h"
#include "modelfile.h"
#include "text.h"
#include "tests.h"

/* The header of the safetensors file read into FILE, parsed. */
static cJSON *parsed_header(const Safetensors *file)
{
    uint64_t length = 0;
    for (int i = 7; i >= 0; i--) length = length << 8 | file->bytes[i];
    return cJSON_ParseWithLength((const char *)file->bytes + 8, (size_t)length);
}

/* Add to META the checksum that FUNCTION computes of FILE with META as its metadata. */
static void add_checksum(cJSON *meta, const Safetensors *file,
                         uint64_t (*function)(const Safetensors *))
{
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "checksum");
    Safetensors view = *file;   /* with META's text members as its metadata */
    view.metadata = malloc((size_t)(cJSON_GetArraySize(meta) + 1) * sizeof *view.metadata);
    view.n_metadata = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, meta)
        if (cJSON_IsString(item)) {
            view.metadata[view.n_metadata][0] = item->string;
            view.metadata[view.n_metadata++][1] = item->valuestring;
        }
    char checksum[32];
    snprintf(checksum, sizeof checksum, "%016" PRIx64, function(&view));
    free(view.metadata);
    cJSON_AddStringToObject(meta, "checksum", checksum);
}

/* Write HEADER (as JSON, formatted if pretty) and the data of FILE to PATH, and free both.
   0 on success. */
static int write_with_header(const char *path, cJSON *header, Safetensors *file, bool pretty)
{
    char *json = pretty ? cJSON_Print(header) : cJSON_PrintUnformatted(header);
    const size_t n = strlen(json);
    FILE *out = fopen(path, "wb");
    for (int i = 0; i < 8; i++) fputc((int)((uint64_t)n >> (8 * i) & 0xff), out);
    fwrite(json, 1, n, out);
    fwrite(file->data, 1, file->data_size, out);
    const int status = fclose(out);
    free(json);
    cJSON_Delete(header);
    safetensors_free(file);
    return status;
}

/* Rewrite the model file at PATH with metadata KEY set to VALUE (NULL: removed), the
   checksum recomputed so that the change is the only thing wrong. 0 on success. */
int model_file_rewrite(const char *path, const char *key, const char *value)
{
    Safetensors file;
    if (safetensors_read(&file, path)) return -1;
    cJSON *header = parsed_header(&file);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(header, "__metadata__");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
    if (value) cJSON_AddStringToObject(meta, key, value);
    add_checksum(meta, &file, safetensors_content_checksum);
    return write_with_header(path, header, &file, false);
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

/* The small model and its vocabularies, and the path of its file in the test directory. */
static void small_model_file(char *path, size_t size, Model *model, Vocab *src, Vocab *tgt)
{
    make_dir();
    small_model(model, src, tgt);
    snprintf(path, size, "%s/m.st", dir);
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
    Model model, back;
    Vocab src, tgt, src_back, tgt_back;
    char path[128];
    small_model_file(path, sizeof path, &model, &src, &tgt);
    Safetensors file;
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &file.error));
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
    Model model;
    Vocab src, tgt;
    char path[128];
    small_model_file(path, sizeof path, &model, &src, &tgt);
    Error scratch;
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
        {"version", "1", "model file version '1'; this program reads versions 2 to 3"},
        {"version", "4", "model file version '4'; this program reads versions 2 to 3"},
        {"layernorm.epsilon", "1e-5", NULL},   /* another epsilon is a model of its own */
        {"layernorm.epsilon", "0", "'layernorm.epsilon' must be a number between 0 and 1"},
        {"layernorm.epsilon", NULL, "'layernorm.epsilon' must be a number between 0 and 1"},
        {"tokenizer.lowercase", "0",
         "'tokenizer.lowercase' is '0', but this program computes '1'"},
        {"special.end.id", "2", "'special.end.id' is '2', but this program computes '1'"},
        {"layernorm.formula", "a_2 * (x - mean) / (std + epsilon) + b_2",
         "'layernorm.formula' is 'a_2 * (x - mean) / (std"},
        {"tied.tensors", NULL, "'tied.tensors' is '?', but this program computes ''"},
        {"format", NULL, "a model file of an older version"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
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
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    const long offsets[2] = {(long)st.st_size - 5, 100};
    for (int o = 0; o < 2; o++) {
        ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
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

/* True when r failed with status 1 and one line holding WANT. */
static bool one_line(const Run *r, const char *want)
{
    const size_t n = strlen(r->err);
    return r->status == 1 && strstr(r->err, want) && n > 0 && strchr(r->err, '\n') == r->err + n - 1;
}

/* A translation model trained for one epoch on 32 pairs, in dir/m.st (two seconds). */
static void train_small(void)
{
    char command[1024];
    tiny_corpus(dir, 32);
    snprintf(command, sizeof command,
             "train --data %s --layers 1 --d-model 16 --d-ff 32 --heads 2 --token-budget 200 "
             "--epochs 1 --model %s/m.st --checkpoint %s/c.st", dir, dir, dir);
    Run *r = run("", command);
    ck_assert_msg(r->status == 0, "%s", r->err);
}

/* Issue 19, item 10: a NUL byte gets the same one line from every command that reads lines
   (translate said "longer than 1000 bytes"; detokenize and attention cut the line). */
START_TEST(nul_bytes_one_way)
{
    make_dir();
    train_small();
    char arguments[512], command[256];
    snprintf(command, sizeof command, "printf 'ein\\000Hund\\n' > %s/nul.txt && "
             "printf 'a dog\\n' > %s/ref.txt", dir, dir);
    ck_assert_int_eq(system(command), 0);
    const char *commands[] = {"tokenize <", "tokenize --detokenize <", "translate --model %s/m.st <",
                              "attention --model %s/m.st <"};
    for (int c = 0; c < 4; c++) {
        char head[256];
        snprintf(head, sizeof head, commands[c], dir);
        snprintf(arguments, sizeof arguments, "%s %s/nul.txt", head, dir);
        Run *r = run("", arguments);
        ck_assert_msg(one_line(r, "standard input:1: a NUL byte at byte 4"), "%s: %d %s",
                      arguments, r->status, r->err);
    }
    snprintf(arguments, sizeof arguments, "vocab %s/nul.txt", dir);
    Run *r = run("", arguments);
    ck_assert_msg(one_line(r, "nul.txt:1: a NUL byte at byte 4"), "%s", r->err);
    snprintf(arguments, sizeof arguments, "bleu %s/nul.txt %s/ref.txt", dir, dir);
    r = run("", arguments);
    ck_assert_msg(one_line(r, "nul.txt:1: a NUL byte at byte 4"), "%s", r->err);
    remove_dir();
}
END_TEST

/* Issue 19, item 12: CR-only line endings (and CR LF) are line ends for every reader. */
START_TEST(carriage_returns_end_lines)
{
    make_dir();
    char arguments[512], command[512];
    snprintf(command, sizeof command, "printf 'a big dog runs\\rthe cat sat here\\rruns on grass now\\r' > %s/cr.txt && "
             "printf 'a big dog runs\\r\\nthe cat sat here\\r\\nruns on grass now' > %s/crlf.txt && "
             "printf 'a big dog runs\\nthe cat sat here\\nruns on grass now\\n' > %s/lf.txt", dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
    for (int f = 0; f < 2; f++) {
        snprintf(arguments, sizeof arguments, "tokenize < %s/%s", dir, f ? "crlf.txt" : "cr.txt");
        Run *r = run("", arguments);
        ck_assert_int_eq(r->status, 0);
        ck_assert_str_eq(r->out, "a big dog runs\nthe cat sat here\nruns on grass now\n");
        snprintf(arguments, sizeof arguments, "bleu %s/%s %s/lf.txt", dir,
                 f ? "crlf.txt" : "cr.txt", dir);
        r = run("", arguments);
        ck_assert_msg(r->status == 0 && strstr(r->out, "BLEU = 100.00"), "%s%s", r->out, r->err);
        snprintf(arguments, sizeof arguments, "vocab --min-freq 1 %s/%s", dir,
                 f ? "crlf.txt" : "cr.txt");
        r = run("", arguments);
        ck_assert_msg(strstr(r->out, "3 lines, 12 tokens"), "%s%s", r->out, r->err);
    }
    remove_dir();
}
END_TEST

/* Issue 19, item 12: standard input that is a directory is an error (translate exited 0);
   flags after the file arguments are flags; vocab on an empty file. */
START_TEST(smaller_failures)
{
    make_dir();
    train_small();
    char arguments[512];
    const char *readers[] = {"translate --model %s/m.st", "attention --model %s/m.st",
                             "tokenize", "tokenize --detokenize"};
    for (int c = 0; c < 4; c++) {
        char head[256];
        snprintf(head, sizeof head, readers[c], dir);
        snprintf(arguments, sizeof arguments, "%s < %s", head, dir);
        Run *r = run("", arguments);
        ck_assert_msg(one_line(r, "cannot read standard input: Is a directory"), "%s: %d %s",
                      arguments, r->status, r->err);
    }
    char command[256];
    snprintf(command, sizeof command, ": > %s/empty.txt", dir);
    ck_assert_int_eq(system(command), 0);
    snprintf(arguments, sizeof arguments, "vocab %s/empty.txt --min-freq 1 --save %s/v.txt",
             dir, dir);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0 && strstr(r->out, "0 lines, 0 tokens")
                  && strstr(r->out, "at least 1 time\n"), "%s%s", r->out, r->err);
    remove_dir();
}
END_TEST

/* Issue 19, item 11: a NaN loss before the first save names no checkpoint file (there is
   none); item 12: a checkpoint directory that cannot be written is reported at the start,
   before any step. */
START_TEST(nan_and_read_only_reported_at_once)
{
    make_dir();
    train_small();
    char arguments[1024], path[128];
    snprintf(path, sizeof path, "%s/fresh.st", dir);
    snprintf(arguments, sizeof arguments,
             "train --data %s --layers 1 --d-model 16 --d-ff 32 --heads 2 --token-budget 200 "
             "--warmup 20 --factor 1e30 --checkpoint-every 1000 --model %s/m2.st "
             "--checkpoint %s", dir, dir, path);
    Run *r = run("", arguments);
    ck_assert_msg(one_line(r, "the loss is NaN; stopping; no checkpoint was saved yet")
                  && !strstr(r->err, path), "%d %s", r->status, r->err);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* a directory this user cannot write (root is run as nobody through setpriv) */
    char ro[128], command[512];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    /* the binary is copied beside the data, so that nobody can run it wherever the
       repository lies (a clone under /root, say) */
    snprintf(command, sizeof command, "mkdir %s && cp %s %s/transformer && chmod 755 %s && "
             "chmod 555 %s", ro, transformer_binary(), dir, dir, ro);
    ck_assert_int_eq(system(command), 0);
    const char *as = geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
    for (int which = 0; which < 2; which++) {
        snprintf(arguments, sizeof arguments,
                 "%s %s/transformer train --data %s --layers 1 --d-model 16 --d-ff 32 "
                 "--heads 2 --token-budget 200 --epochs 1 --model %s/m.st --checkpoint %s/c.st",
                 as, dir, dir, which ? "/tmp" : ro, which ? ro : "/tmp");
        char shell[1200];
        snprintf(shell, sizeof shell, "%s 2>&1", arguments);
        FILE *p = popen(shell, "r");
        char out[4096] = "";
        const size_t got = fread(out, 1, sizeof out - 1, p);
        out[got] = '\0';
        const int status = pclose(p);
        ck_assert_msg(WEXITSTATUS(status) == 1 && strstr(out, "Permission denied")
                      && strstr(out, ro) && !strstr(out, "epoch 1"), "%s", out);
    }
    remove_dir();
}
END_TEST

/* Issue 19, item 4: the temporary file of a model save that a kill interrupted (mkstemp's
   name: the model's, a dot, six letters or digits) is removed by the next training run;
   a file of another name is left alone. */
START_TEST(interrupted_model_save_removed)
{
    make_dir();
    train_small();
    char command[512];
    snprintf(command, sizeof command, "cp %s/m.st %s/m.st.Ab3xY9 && touch %s/m.st.keep",
             dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
    snprintf(command, sizeof command,
             "train --data %s --layers 1 --d-model 16 --d-ff 32 --heads 2 --token-budget 200 "
             "--stop-after 1 --model %s/m.st --checkpoint %s/c2.st", dir, dir, dir);
    Run *r = run("", command);
    ck_assert_msg(r->status == 0, "%s", r->err);
    snprintf(command, sizeof command, "%s/m.st.Ab3xY9", dir);
    ck_assert_int_ne(access(command, F_OK), 0);
    snprintf(command, sizeof command, "%s/m.st.keep", dir);
    ck_assert_int_eq(access(command, F_OK), 0);
    remove_dir();
}
END_TEST

/* Crashes the fuzzers found (tests/fuzz/regressions/): tensor names holding a newline and
   binary bytes were quoted as they were, a message of several lines. A raw control character
   is not JSON, so the reader refuses such a name before the tensor is read; an escaped one
   reaches the tensor's message. Either way the message is one line. */
START_TEST(fuzz_regressions_one_line)
{
    static const char *const files[] = {"tests/fuzz/regressions/model-name-with-newline.st",
                                        "tests/fuzz/regressions/checkpoint-name-with-newline.st"};
    for (int f = 0; f < 2; f++) {
        Safetensors file;
        const char *error = safetensors_read(&file, files[f]);
        ck_assert_msg(error && (strstr(error, "tensor '") || strstr(error, "control character"))
                      && !strchr(error, '\n'), "%s", error ? error : "loaded");
        safetensors_free(&file);
        char arguments[256];
        snprintf(arguments, sizeof arguments, "translate --model %s < /dev/null", files[f]);
        Run *r = run("", arguments);
        ck_assert_msg(one_line(r, files[f]), "%s", r->err);
    }
    char out[8];
    ck_assert_str_eq(safetensors_printable("a\nb\033c", out, sizeof out), "a?b?c");
    ck_assert_str_eq(safetensors_printable("abcdefghij", out, sizeof out), "abcd...");
}
END_TEST

/* Issue 36, item 2: the model file's checksum covers its contents, not the header's layout.
   Rewrite the header of the model file at PATH as another program might: every object's
   members in reverse order, printed with spaces and newlines (a re-serialization, which must
   still load), or with the data offsets of two tensors of the same shape swapped (which must
   not). 0 on success. */
static void reverse_members(cJSON *object)
{
    cJSON *reversed = NULL;
    for (cJSON *item = object->child, *next; item; item = next) {
        next = item->next;
        item->next = reversed, item->prev = NULL;
        if (reversed) reversed->prev = item;
        reversed = item;
    }
    object->child = reversed;
    if (reversed) {   /* cJSON keeps the last member in the first one's prev */
        cJSON *last = reversed;
        while (last->next) last = last->next;
        reversed->prev = last;
    }
    for (cJSON *item = object->child; item; item = item->next)
        if (cJSON_IsObject(item)) reverse_members(item);
}

static int header_rewrite(const char *path, const char *swap_a, const char *swap_b)
{
    Safetensors file;
    if (safetensors_read(&file, path)) return -1;
    cJSON *header = parsed_header(&file);
    if (swap_a) {
        cJSON *a = cJSON_GetObjectItemCaseSensitive(header, swap_a);
        cJSON *b = cJSON_GetObjectItemCaseSensitive(header, swap_b);
        cJSON *offsets_a = cJSON_DetachItemFromObjectCaseSensitive(a, "data_offsets");
        cJSON *offsets_b = cJSON_DetachItemFromObjectCaseSensitive(b, "data_offsets");
        cJSON_AddItemToObject(a, "data_offsets", offsets_b);
        cJSON_AddItemToObject(b, "data_offsets", offsets_a);
    } else {
        reverse_members(header);
    }
    return write_with_header(path, header, &file, swap_a == NULL);
}

START_TEST(model_file_checksum_of_contents)
{
    Model model, back;
    Vocab src, tgt, src_back, tgt_back;
    char path[128];
    small_model_file(path, sizeof path, &model, &src, &tgt);
    Error scratch;
    /* another order of keys, other spaces: the same contents, and it loads exactly */
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
    ck_assert_int_eq(header_rewrite(path, NULL, NULL), 0);
    Safetensors file;
    ck_assert_ptr_null(safetensors_read(&file, path));
    ck_assert_int_eq(strncmp((const char *)file.bytes + 8, "{\n", 2), 0);   /* rewritten */
    safetensors_free(&file);
    const char *error = translation_model_load(path, &back, &src_back, &tgt_back, &file);
    ck_assert_msg(error == NULL, "%s", error);
    safetensors_free(&file);
    ck_assert(memcmp(back.parameters.data, model.parameters.data,
                     model.parameters.total * sizeof(float)) == 0);
    model_free(&back), vocab_free(&src_back), vocab_free(&tgt_back);
    /* two tensors of one shape that trade places in the table: caught */
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
    ck_assert_int_eq(header_rewrite(path, "encoder.layers.0.self_attn.linears.0.weight",
                                    "encoder.layers.0.self_attn.linears.1.weight"), 0);
    ck_assert_msg(strstr(load_error(path), "checksum mismatch"), "%s", load_error(path));
    model_free(&model), vocab_free(&src), vocab_free(&tgt);
    remove_dir();
}
END_TEST

/* Make the model file at PATH one of version 2, as the program wrote it before version 3:
   the keys that version 3 added removed, tied_source only when 1, and the checksum of the
   data section and of the metadata in the file's order. 0 on success. */
static int model_file_version_2(const char *path)
{
    Safetensors file;
    if (safetensors_read(&file, path)) return -1;
    cJSON *header = parsed_header(&file);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(header, "__metadata__");
    static const char *const kept[] = {"format", "src_vocab", "tgt_vocab", "layers", "d_model",
                                       "d_ff", "heads", "max_len", "norm", "layernorm", "tied",
                                       "vocab.src", "vocab.tgt", "tied_source"};
    cJSON *old = cJSON_CreateObject();
    for (size_t k = 0; k < sizeof kept / sizeof *kept; k++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(meta, kept[k]);
        if (k == 1) cJSON_AddStringToObject(old, "version", "2");
        if (strcmp(kept[k], "tied_source") != 0 || strcmp(item->valuestring, "1") == 0)
            cJSON_AddStringToObject(old, kept[k], item->valuestring);
    }
    add_checksum(old, &file, safetensors_checksum);
    cJSON_ReplaceItemInObjectCaseSensitive(header, "__metadata__", old);
    return write_with_header(path, header, &file, false);
}

/* Issue 36, item 1: the file written today says everything a reader in another language
   needs (the shipped model too), and a file of version 2 still loads, to the same model. */
START_TEST(model_file_says_everything)
{
    Model model;
    Vocab src, tgt;
    char path[128];
    small_model_file(path, sizeof path, &model, &src, &tgt);
    Error scratch;
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &scratch));
    Safetensors file;
    ck_assert_ptr_null(safetensors_read(&file, path));
    static const char *const keys[] = {
        "format", "version", "src_vocab", "tgt_vocab", "layers", "d_model", "d_ff", "heads",
        "max_len", "norm", "layernorm", "layernorm.epsilon", "tied", "tied_source",
        "norm.formula", "layernorm.formula", "embedding.formula", "tied.tensors",
        "special.start", "special.start.id", "special.end", "special.end.id", "special.pad",
        "special.pad.id", "special.unknown", "special.unknown.id", "source.form",
        "decode.start", "decode.limit", "tokenizer", "tokenizer.source", "tokenizer.target",
        "tokenizer.lowercase", "subword.marker", "subword.cut", "vocab.src", "vocab.tgt",
        "checksum"};
    char value[256];
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        ck_assert_msg(safetensors_metadata(&file, keys[k], value, sizeof value)
                      || strncmp(keys[k], "vocab.", 6) == 0, "no '%s'", keys[k]);
    ck_assert(safetensors_metadata(&file, "version", value, sizeof value));
    ck_assert_str_eq(value, "3");
    ck_assert(safetensors_metadata(&file, "layernorm.epsilon", value, sizeof value));
    ck_assert_str_eq(value, "1e-06");
    ck_assert_str_eq(file.metadata[file.n_metadata - 1][0], "checksum");   /* the last key */
    safetensors_free(&file);
    ck_assert_str_eq(load_error("data/multi30k-de-en.safetensors"), "");
    ck_assert_ptr_null(safetensors_read(&file, "data/multi30k-de-en.safetensors"));
    ck_assert(safetensors_metadata(&file, "subword.marker", value, sizeof value));
    ck_assert_str_eq(value, "@@");
    safetensors_free(&file);
    ck_assert_int_eq(model_file_version_2(path), 0);
    ck_assert_ptr_null(safetensors_read(&file, path));
    ck_assert(safetensors_metadata(&file, "version", value, sizeof value));
    ck_assert_str_eq(value, "2");
    ck_assert(!safetensors_metadata(&file, "layernorm.epsilon", value, sizeof value));
    safetensors_free(&file);
    Model back;
    Vocab src_back, tgt_back;
    const char *error = translation_model_load(path, &back, &src_back, &tgt_back, &file);
    ck_assert_msg(error == NULL, "%s", error);
    ck_assert(back.config.layernorm_eps == 1e-6f && back.config.norm == model.config.norm);
    ck_assert(memcmp(back.parameters.data, model.parameters.data,
                     model.parameters.total * sizeof(float)) == 0);
    safetensors_free(&file), model_free(&back), vocab_free(&src_back), vocab_free(&tgt_back);
    model_free(&model), vocab_free(&src), vocab_free(&tgt);
    remove_dir();
}
END_TEST

/* Issue 36, item 5: the shipped model read by tools/transformer_torch.py (plain PyTorch, the
   Annotated Transformer's modules) decodes the first sentence of test2016 greedily to the
   program's tokens, and the sum of the chosen tokens' log-probabilities agrees within 1e-4
   (float32 in both, over 12 tokens, the operations in other orders: they differ by 5e-6 on
   the machine where the test was written). Skipped, with a line on standard error, where
   /usr/bin/python3 has no torch; tests/interop.sh compares 100 sentences. */
START_TEST(model_file_read_by_pytorch)
{
    if (system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0) {
        fprintf(stderr, "model_file_read_by_pytorch: skipped (no python3-torch)\n");
        return;
    }
    Model model;
    Vocab src_vocab, tgt_vocab;
    Safetensors file;
    const char *path = "data/multi30k-de-en.safetensors";
    const char *error = translation_model_load(path, &model, &src_vocab, &tgt_vocab, &file);
    ck_assert_msg(error == NULL, "%s", error);
    safetensors_free(&file);
    static const char sentence[] = "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.";
    static TextLine tokens;
    ck_assert_ptr_null(tokenize_line((TextOptions){TEXT_GERMAN, true}, sentence,
                                     strlen(sentence), &tokens));
    char tokenized[sizeof tokens.text];
    snprintf(tokenized, sizeof tokenized, "%s", tokens.text);
    const int max_len = model.config.max_len;
    int src[512], out[512], out_len;
    const int src_len = vocab_number_sentence(src, tokens.text, &src_vocab, max_len);
    uint8_t keep[512];
    memset(keep, 1, sizeof keep);
    model_prepare(&model, 1, max_len, 1);
    KVCache cache;
    decoder_cache_init(&cache, &model, 1, max_len, max_len - 1);
    DecodeSettings settings = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK, max_len);
    double sum = 0.0;
    greedy_translate(&model, &cache, out, &out_len, &sum,
                     &(SourceBatch){src, keep, 1, src_len}, &settings);
    decoder_cache_free(&cache);
    char ours[1024] = "";
    for (int i = 1; i < out_len && out[i] != VOCAB_END; i++)
        snprintf(ours + strlen(ours), sizeof ours - strlen(ours), "%s%s", i > 1 ? " " : "",
                 vocab_token(&tgt_vocab, out[i]));
    vocab_join_subwords(ours, strlen(ours));
    char command[sizeof tokenized + 256];
    snprintf(command, sizeof command, "echo '%s' | /usr/bin/python3 tools/transformer_torch.py "
             "translate %s --logprobs", tokenized, path);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    double theirs_sum = 0.0;
    char theirs[1024] = "";
    ck_assert_int_eq(fscanf(pipe, "%lf\t%1023[^\n]", &theirs_sum, theirs), 2);
    ck_assert_int_eq(pclose(pipe), 0);
    ck_assert_str_eq(theirs, ours);
    ck_assert_msg(fabs(theirs_sum - sum) <= 1e-4, "log-probabilities %.9f (C) and %.9f (PyTorch)",
                  sum, theirs_sum);
    fprintf(stderr, "model_file_read_by_pytorch: '%s', log-probability %.6f here, %.6f in "
            "PyTorch\n", ours, sum, theirs_sum);
    model_free(&model), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
}
END_TEST

/* A path longer than a message holds is cut short with "...", never the reason after it,
   and the message stays one line. */
START_TEST(long_path_cut_before_the_reason)
{
    static char path[6001];
    memset(path, 'x', sizeof path - 1);
    path[0] = '/';
    Safetensors file;
    const char *error = safetensors_read(&file, path);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(strncmp(error, "/xxx", 4) == 0 && strstr(error, "...: ") != NULL, "%s", error);
    ck_assert(strchr(error, '\n') == NULL && strlen(error) < sizeof file.error.message);
    safetensors_free(&file);
}
END_TEST

Suite *harden_suite(void)
{
    Suite *suite = suite_create("harden");
    TCase *model_file = tcase_create("model file");
    tcase_add_test(model_file, model_file_is_one_unit);
    tcase_add_test(model_file, long_path_cut_before_the_reason);
    tcase_add_test(model_file, model_file_fields_checked);
    tcase_add_test(model_file, model_file_checksum_of_contents);
    tcase_add_test(model_file, model_file_says_everything);
    tcase_add_test(model_file, model_file_read_by_pytorch);
    tcase_add_test(model_file, safetensors_overlap_refused);
    tcase_add_test(model_file, fuzz_regressions_one_line);
    suite_add_tcase(suite, model_file);
    TCase *lines = tcase_create("lines and runs");
    tcase_add_test(lines, nul_bytes_one_way);
    tcase_add_test(lines, carriage_returns_end_lines);
    tcase_add_test(lines, smaller_failures);
    tcase_add_test(lines, nan_and_read_only_reported_at_once);
    tcase_add_test(lines, interrupted_model_save_removed);
    suite_add_tcase(suite, lines);
    return suite;
}
