/* run_tests.c -- runs every suite; prints Check's summary line ("100%: Checks: N, ...").
   Exit status 0 only when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"

void read_text(const char *path, char *buffer, size_t size)
{
    FILE *file = fopen(path, "r");
    ck_assert_ptr_nonnull(file);
    size_t length = fread(buffer, 1, size - 1, file);
    buffer[length] = '\0';
    fclose(file);
}

const char *transformer_binary(void)
{
    return getenv("TRANSFORMER") ? getenv("TRANSFORMER") : "./transformer";
}

void tiny_corpus(const char *dir, int lines)
{
    char command[1024];
    snprintf(command, sizeof command,
             "head -%d data/multi30k/train.de > %s/train.de && cp %s/train.de %s/val.de && "
             "head -%d data/multi30k/train.en > %s/train.en && cp %s/train.en %s/val.en",
             lines, dir, dir, dir, lines, dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
}

Run *run(const char *environment, const char *arguments)
{
    static Run result;
    char out_path[] = "/tmp/transformer-test-out-XXXXXX";
    char err_path[] = "/tmp/transformer-test-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    ck_assert(out_fd >= 0 && err_fd >= 0);
    close(out_fd);
    close(err_fd);
    char command[2048];
    snprintf(command, sizeof command, "%s %s </dev/null %s >%s 2>%s",
             environment, transformer_binary(), arguments, out_path, err_path);
    int status = system(command);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    read_text(out_path, result.out, sizeof result.out);
    read_text(err_path, result.err, sizeof result.err);
    unlink(out_path);
    unlink(err_path);
    return &result;
}

char *figure_text(const char *name, const char *arguments)
{
    const FigureKind *kind = NULL;
    for (int k = 0; k < figure_kind_count; k++)
        if (strcmp(figure_kinds[k].name, name) == 0) kind = &figure_kinds[k];
    ck_assert_msg(kind != NULL, "no figure kind '%s'", name);
    FigureValue value[FIGURE_MAX_OPTIONS];
    bool given[FIGURE_MAX_OPTIONS] = {false};
    Error error;
    const char *problem = error.message;
    char copy[512], *save = NULL;
    ck_assert_msg(figure_defaults(kind, value, &error), "%s", problem);
    snprintf(copy, sizeof copy, "%s", arguments);
    for (char *flag = strtok_r(copy, " ", &save); flag; flag = strtok_r(NULL, " ", &save)) {
        const char *text = strtok_r(NULL, " ", &save);
        int o = 0;
        while (o < FIGURE_MAX_OPTIONS && kind->options[o].flag
               && strcmp(kind->options[o].flag, flag) != 0)
            o++;
        ck_assert_msg(o < FIGURE_MAX_OPTIONS && kind->options[o].flag, "no option %s", flag);
        ck_assert_msg(figure_option_read(&kind->options[o], text, !given[o], &value[o], &error), "%s", problem);
        given[o] = true;
    }
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    ck_assert_ptr_nonnull(out);
    const char *refused = figure_emit(out, kind, value);
    ck_assert_msg(refused == NULL, "%s", refused);
    fclose(out);
    return text;
}

double copy_task_step(Trainer *trainer, int *full, int vocab, bool padding)
{
    Batch *batch = &trainer->batch;
    const int len = batch->src_len;
    copy_task_batch(full, batch->batch, len, vocab, &trainer->progress.data_rng);
    if (padding) full[len - 1] = 0, full[len - 2] = 0;
    batch_fill(batch, full, full, 0);
    return train_step(&trainer->model, &trainer->adam, batch, &trainer->step,
                      &trainer->progress.dropout_rng);
}

int fixture_metadata_int(const Safetensors *file, const char *key, int fallback)
{
    char value[64];
    return safetensors_metadata(file, key, value, sizeof value) ? atoi(value) : fallback;
}

Config fixture_config(const Safetensors *file)
{
    char value[64];
    Config config = config_default(fixture_metadata_int(file, "src_vocab", 0),
                                   fixture_metadata_int(file, "tgt_vocab", 0),
                                   fixture_metadata_int(file, "layers", 0));
    config.d_model = fixture_metadata_int(file, "d_model", 0);
    config.d_ff = fixture_metadata_int(file, "d_ff", 0);
    config.heads = fixture_metadata_int(file, "heads", 0);
    config.max_len = 64;
    ck_assert(safetensors_metadata(file, "norm", value, sizeof value));
    config.norm = strcmp(value, "pre") == 0 ? NORM_PRE : NORM_POST;
    ck_assert(safetensors_metadata(file, "layernorm", value, sizeof value));
    config.layernorm = strcmp(value, "annotated") == 0 ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD;
    config.tie_generator = fixture_metadata_int(file, "tied", 0) == 1;
    return config;
}

const char *const golden_variants[GOLDEN_VARIANTS] = {
    "pre-standard", "pre-annotated", "post-standard", "post-annotated", "pre-standard-tied"};

static const SafetensorsEntry *golden_entry(const Safetensors *file, const char *name)
{
    const SafetensorsEntry *e = safetensors_find(file, name);
    ck_assert_msg(e != NULL && e->dtype == DTYPE_I32, "fixture lacks %s", name);
    return e;
}

void golden_fixture_open(GoldenFixture *f, const char *variant, int max_len)
{
    char path[256];
    snprintf(path, sizeof path, "tests/golden/model-%s.safetensors", variant);
    const char *error = safetensors_read(&f->file, path);
    ck_assert_msg(error == NULL, "%s", error);
    model_init(&f->model, fixture_config(&f->file));
    error = safetensors_load(&f->file, &f->model.parameters, path);
    ck_assert_msg(error == NULL, "%s", error);
    const SafetensorsEntry *src = golden_entry(&f->file, "input.src");
    const SafetensorsEntry *tgt = golden_entry(&f->file, "input.tgt");
    f->src = (const int *)src->data, f->tgt = (const int *)tgt->data;
    f->batch = src->shape[0], f->src_len = src->shape[1], f->tgt_len = tgt->shape[1];
    f->pad = fixture_metadata_int(&f->file, "pad", -1);
    f->vocab = f->model.config.tgt_vocab;
    f->src_keep = malloc((size_t)f->batch * f->src_len);
    padding_mask(f->src_keep, f->src, f->batch, f->src_len, f->pad);
    model_prepare(&f->model, f->batch, f->src_len, max_len);
}

void golden_fixture_close(GoldenFixture *f)
{
    free(f->src_keep);
    safetensors_free(&f->file);
    model_free(&f->model);
}

int main(void)
{
    set_threads(2);   /* as the program does on two cores: the threaded paths are tested */
    SRunner *runner = srunner_create(tensor_suite());
    srunner_add_suite(runner, masks_suite());
    srunner_add_suite(runner, model_suite());
    srunner_add_suite(runner, gradients_suite());
    srunner_add_suite(runner, training_suite());
    srunner_add_suite(runner, checkpoint_suite());
    srunner_add_suite(runner, trainer_suite());
    srunner_add_suite(runner, decode_suite());
    srunner_add_suite(runner, text_suite());
    srunner_add_suite(runner, recase_suite());
    srunner_add_suite(runner, beam_suite());
    srunner_add_suite(runner, bleu_suite());
    srunner_add_suite(runner, translate_suite());
    srunner_add_suite(runner, fast_suite());
    srunner_add_suite(runner, distributed_suite());
    srunner_add_suite(runner, bf16_suite());
    srunner_add_suite(runner, figure_suite());
    srunner_add_suite(runner, architecture_suite());
    srunner_add_suite(runner, experiments_suite());
    srunner_add_suite(runner, cli_suite());
    srunner_add_suite(runner, harden_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
