/* test_checkpoint.c -- checkpoints (book/checkpoint.nw): a round trip restores every bit of
   the training state; damaged or foreign files are refused with one line; resuming is bit
   exact; SIGTERM saves, kill -9 never leaves a torn file, a NaN loss keeps the last one. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "checkpoint.h"
#include "config.h"
#include "tests.h"

/* The configuration `transformer copy` builds from --d-model, --d-ff and --heads. */
static Config copy_config(int d_model, int d_ff, int heads)
{
    Config config = config_default(11, 11, 2);
    config.d_model = d_model, config.d_ff = d_ff, config.heads = heads;
    config.max_len = 10;
    return config;
}

typedef struct {
    Model model;
    Adam adam;
    TrainingProgress progress;
} State;

/* A model with random parameters and moments, and progress values that are not zero. */
static void state_init(State *s, Config config, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed, 9);
    model_init(&s->model, config);
    model_initialize_parameters(&s->model, &rng);
    adam_init(&s->adam, &s->model.parameters, 0.9, 0.98, 1e-9);
    for (size_t i = 0; i < s->adam.m.total; i++)
        s->adam.m.data[i] = rng_normal(&rng), s->adam.v.data[i] = rng_uniform(&rng);
    s->adam.step = 1234 + (long)seed;
    s->progress = (TrainingProgress){.epoch = 3, .batch = 17, .loss_sum = 0.1 + 1.0 / 3};
    rng_seed(&s->progress.data_rng, seed, 2), rng_seed(&s->progress.dropout_rng, seed, 3);
    rng_next(&s->progress.data_rng);
}

static void state_free(State *s)
{
    adam_free(&s->adam);
    model_free(&s->model);
}

static const char *const recipe[2][2] = {{"recipe.task", "test"}, {"recipe.batch_size", "8"}};

static void temporary_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "/tmp/transformer-test-%ld-%s", (long)getpid(), name);
}

static void save_or_fail(const char *path, const State *s)
{
    Error scratch;
    const char *error = checkpoint_save(path, &s->model, &s->adam, &s->progress, recipe, 2,
                                        &scratch);
    ck_assert_msg(error == NULL, "%s", error);
}

/* Load PATH into a state of the given configuration; the message (copied), or "" if none. */
static const char *load(const char *path, State *into, const char *const (*with)[2],
                        int n_with)
{
    static char message[512];
    Safetensors file;
    const char *error = checkpoint_load(path, &into->model, &into->adam, &into->progress,
                                        with, n_with, &file);
    snprintf(message, sizeof message, "%s", error ? error : "");
    safetensors_free(&file);
    return message;
}

START_TEST(checkpoint_round_trip_restores_everything)
{
    char path[256];
    temporary_path(path, sizeof path, "round-trip.safetensors");
    State saved, loaded;
    state_init(&saved, copy_config(16, 32, 2), 1);
    state_init(&loaded, copy_config(16, 32, 2), 2);   /* different everything */
    save_or_fail(path, &saved);
    ck_assert_str_eq(load(path, &loaded, recipe, 2), "");
    const FlatBuffer *a[3] = {&saved.model.parameters, &saved.adam.m, &saved.adam.v};
    const FlatBuffer *b[3] = {&loaded.model.parameters, &loaded.adam.m, &loaded.adam.v};
    for (int p = 0; p < 3; p++)
        ck_assert(memcmp(a[p]->data, b[p]->data, a[p]->total * sizeof(float)) == 0);
    ck_assert_int_eq(loaded.adam.step, saved.adam.step);
    ck_assert_int_eq(loaded.progress.epoch, 3);
    ck_assert_int_eq(loaded.progress.batch, 17);
    ck_assert(loaded.progress.loss_sum == saved.progress.loss_sum);   /* bit for bit */
    ck_assert_int_eq(loaded.progress.last_epoch, 0);   /* not moved: not written */
    saved.progress.last_epoch = 29;                     /* moved by a time budget */
    save_or_fail(path, &saved);
    ck_assert_str_eq(load(path, &loaded, recipe, 2), "");
    ck_assert_int_eq(loaded.progress.last_epoch, 29);
    ck_assert(memcmp(&loaded.progress.data_rng, &saved.progress.data_rng, sizeof(Rng)) == 0);
    ck_assert(memcmp(&loaded.progress.dropout_rng, &saved.progress.dropout_rng,
                     sizeof(Rng)) == 0);
    /* the weights are also a plain model file: safetensors_load reads them as they are */
    Safetensors file;
    ck_assert_ptr_null(safetensors_read(&file, path));
    ck_assert_ptr_null(safetensors_load(&file, &loaded.model.parameters, path));
    safetensors_free(&file);
    unlink(path);
    state_free(&saved);
    state_free(&loaded);
}
END_TEST

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    unsigned char *bytes = malloc(*size);
    ck_assert_uint_eq(fread(bytes, 1, *size, f), *size);
    fclose(f);
    return bytes;
}

static void spit(const char *path, const unsigned char *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

/* Replace the first occurrence of OLD in the header by NEW (same length). */
static void patch(unsigned char *bytes, size_t size, const char *old, const char *new)
{
    const size_t n = strlen(old);
    ck_assert_uint_eq(strlen(new), n);
    for (size_t i = 8; i + n <= size; i++)
        if (memcmp(bytes + i, old, n) == 0) {
            memcpy(bytes + i, new, n);
            return;
        }
    ck_abort_msg("'%s' not in the file", old);
}

/* The load of PATH fails with one line that names the file and contains SAYS. */
static void assert_refused(const char *path, State *into, const char *says)
{
    const char *message = load(path, into, recipe, 2);
    ck_assert_msg(*message, "%s was accepted (expected: %s)", path, says);
    ck_assert_msg(strncmp(message, path, strlen(path)) == 0, "no file name: %s", message);
    ck_assert_msg(strchr(message, '\n') == NULL, "not one line: %s", message);
    ck_assert_msg(strstr(message, says) != NULL, "'%s' not in: %s", says, message);
}

START_TEST(checkpoint_refuses_bad_files)
{
    char good[256], bad[256];
    temporary_path(good, sizeof good, "good.safetensors");
    temporary_path(bad, sizeof bad, "bad.safetensors");
    State s, into;
    state_init(&s, copy_config(16, 32, 2), 1);
    state_init(&into, copy_config(16, 32, 2), 2);
    save_or_fail(good, &s);
    size_t size;
    unsigned char *bytes = slurp(good, &size);

    assert_refused("/tmp/transformer-test-no-such-file", &into, "No such file");
    spit(bad, bytes, size - 1);                        /* truncated by one byte */
    assert_refused(bad, &into, "");
    spit(bad, bytes, size / 2);                        /* truncated in the middle */
    assert_refused(bad, &into, "");
    bytes[size - 5] ^= 0x10;                           /* one bit of the last moment */
    spit(bad, bytes, size);
    assert_refused(bad, &into, "checksum mismatch");
    bytes[size - 5] ^= 0x10;
    unsigned char *copy = malloc(size);
    const char *edits[][3] = {
        {"\"annotated-transformer-c", "\"annotated-transformer-x", "not a checkpoint"},
        {"\"version\":\"1\"", "\"version\":\"2\"", "version '2'"},
        {"\"progress.step\":\"1235\"", "\"progress.step\":\"1236\"", "checksum mismatch"},
        {"\"shape\":[11,16]", "\"shape\":[16,11]", "wrong dtype or shape"},
        {"\"recipe.batch_size\":\"8\"", "\"recipe.batch_size\":\"9\"", "checksum"}};
    for (int e = 0; e < 5; e++) {
        memcpy(copy, bytes, size);
        patch(copy, size, edits[e][0], edits[e][1]);
        spit(bad, copy, size);
        assert_refused(bad, &into, edits[e][2]);
    }
    /* a model file that is not a checkpoint */
    Error scratch;
    ck_assert_ptr_null(safetensors_write(bad, &s.model.parameters, NULL, 0, &scratch));
    assert_refused(bad, &into, "not a checkpoint");
    /* the right file for another run: another size, another recipe */
    State other;
    state_init(&other, copy_config(32, 32, 2), 3);
    assert_refused(good, &other, "config.d_model is 16 in the checkpoint but 32 in this run");
    const char *const other_recipe[1][2] = {{"recipe.batch_size", "80"}};
    const char *message = load(good, &into, other_recipe, 1);
    ck_assert_msg(strstr(message, "recipe.batch_size is 8 in the checkpoint but 80 in this run"),
                  "%s", message);
    free(copy);
    free(bytes);
    unlink(good);
    unlink(bad);
    state_free(&s);
    state_free(&into);
    state_free(&other);
}
END_TEST

/* The configuration's table (book/model.nw, The configuration in files) reads back what it
   writes in a checkpoint, setting for setting, and holds a resumed run to every setting,
   the optional ones too. */
START_TEST(checkpoint_configuration_reads_back)
{
    char path[256];
    temporary_path(path, sizeof path, "config.safetensors");
    Config configs[3] = {copy_config(16, 32, 2), copy_config(16, 32, 4), copy_config(8, 16, 2)};
    configs[1].norm = NORM_POST, configs[1].layernorm = LAYERNORM_ANNOTATED;
    configs[1].dropout = 0.0f, configs[1].layernorm_eps = 1e-5f;
    configs[1].unscaled_attention = configs[1].unscaled_embedding = true;
    configs[2].tie_generator = configs[2].tie_source = true, configs[2].dropout = 0.3f;
    for (int c = 0; c < 3; c++) {
        State s;
        state_init(&s, configs[c], 1);
        save_or_fail(path, &s);
        Safetensors file;
        Config back;
        ck_assert_ptr_null(safetensors_read(&file, path));
        const char *error = config_read(&back, CONFIG_CHECKPOINT, 1, &file, path);
        ck_assert_msg(error == NULL, "%s", error);
        for (int k = 0; k < config_key_count; k++)
            ck_assert_msg(config_get(&back, &config_keys[k]) == config_get(&configs[c],
                                                                          &config_keys[k]),
                          "config %d: %s", c, config_keys[k].name);
        safetensors_free(&file);
        state_free(&s);
    }
    State source_only;   /* the checkpoint of configs[2] for a run that shares no source */
    Config other = configs[2];
    other.tie_source = false;
    state_init(&source_only, other, 2);
    assert_refused(path, &source_only, "config.tie_source is 1 in the checkpoint but 0");
    state_free(&source_only);
    unlink(path);
}
END_TEST

/* Progress that no run writes is refused, although the file's checksum is right (issue 19,
   item 8): an epoch of 0, more batches than steps, a NaN or negative loss sum, an even
   generator increment, a last epoch below 1. */
START_TEST(checkpoint_refuses_impossible_progress)
{
    char path[256];
    temporary_path(path, sizeof path, "progress.safetensors");
    State into;
    state_init(&into, copy_config(16, 32, 2), 2);
    for (int c = 0; c < 6; c++) {
        State s;
        state_init(&s, copy_config(16, 32, 2), 1);
        const char *says = "do not fit together";
        if (c == 5) s.progress.last_epoch = -2, says = "bad 'progress.last_epoch'";
        if (c == 0) s.progress.epoch = 0;
        if (c == 1) s.progress.batch = (int)s.adam.step + 1;
        if (c == 2) s.progress.loss_sum = NAN, says = "bad 'progress.loss_sum'";
        if (c == 3) s.progress.loss_sum = -1.0, says = "bad 'progress.loss_sum'";
        if (c == 4) s.progress.dropout_rng.increment = 6, says = "'rng.dropout.increment'";
        save_or_fail(path, &s);
        assert_refused(path, &into, says);
        state_free(&s);
    }
    unlink(path);
    state_free(&into);
}
END_TEST

START_TEST(checkpoint_is_not_saved_over_with_non_finite_parameters)
{
    char path[256];
    temporary_path(path, sizeof path, "finite.safetensors");
    State s;
    state_init(&s, copy_config(16, 32, 2), 1);
    save_or_fail(path, &s);
    size_t before_size, after_size;
    unsigned char *before = slurp(path, &before_size);
    s.model.parameters.data[7] = NAN;
    s.adam.step++;
    Error scratch;
    const char *error = checkpoint_save(path, &s.model, &s.adam, &s.progress, recipe, 2,
                                        &scratch);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(strstr(error, "not finite") != NULL, "%s", error);
    unsigned char *after = slurp(path, &after_size);
    ck_assert_uint_eq(after_size, before_size);
    ck_assert(memcmp(before, after, before_size) == 0);
    free(before), free(after);
    unlink(path);
    state_free(&s);
}
END_TEST

/* ---- the copy command: resumption, signals, crashes, NaN ---- */

static const char *small = "copy --d-model 16 --d-ff 32 --heads 2 --batch-size 16 --batches 5";

START_TEST(cli_resume_is_bit_exact)
{
    char a[256], b[256], arguments[1024], decoded_a[8192];
    temporary_path(a, sizeof a, "a.safetensors");
    temporary_path(b, sizeof b, "b.safetensors");
    /* 10 steps at once, and 3 + 4 + 3 steps with two resumptions, one inside an epoch and one
       across the end of the first epoch */
    snprintf(arguments, sizeof arguments, "%s --epochs 2 --checkpoint %s", small, a);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "  source"));
    snprintf(decoded_a, sizeof decoded_a, "%s", strstr(r->out, "  source"));
    snprintf(arguments, sizeof arguments, "%s --epochs 2 --checkpoint %s --stop-after 3",
             small, b);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "stopped after step 3"));
    snprintf(arguments, sizeof arguments, "%s --epochs 2 --resume %s --stop-after 7", small, b);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "at step 3 (epoch 1, batch 3)"));
    snprintf(arguments, sizeof arguments, "%s --epochs 2 --resume %s", small, b);
    r = run("", arguments);
    ck_assert_ptr_nonnull(strstr(r->out, "at step 7 (epoch 2, batch 2)"));
    ck_assert_ptr_nonnull(strstr(r->out, "  source"));
    ck_assert_str_eq(strstr(r->out, "  source"), decoded_a);
    size_t size_a, size_b;
    unsigned char *bytes_a = slurp(a, &size_a), *bytes_b = slurp(b, &size_b);
    ck_assert_uint_eq(size_a, size_b);
    ck_assert_msg(memcmp(bytes_a, bytes_b, size_a) == 0, "the checkpoints differ");
    free(bytes_a), free(bytes_b);
    /* resuming with other sizes is refused, with one line */
    snprintf(arguments, sizeof arguments, "%s --d-model 32 --resume %s", small, b);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "config.d_model is 16 in the checkpoint but 32 in this run")
                  && strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
    snprintf(arguments, sizeof arguments, "%s --batch-size 8 --resume %s", small, b);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "recipe.batch_size is 16 in the checkpoint but 8"), "%s",
                  r->err);
    unlink(a), unlink(b);
}
END_TEST

/* A checkpoint notes its run's threads; resuming with another number warns on one line and
   goes on; resuming with the same number does not warn (the speed chapter). */
START_TEST(cli_resume_with_other_threads_warns)
{
    char path[256], arguments[1024];
    temporary_path(path, sizeof path, "threads.safetensors");
    snprintf(arguments, sizeof arguments, "%s --checkpoint %s --stop-after 2", small, path);
    Run *r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(arguments, sizeof arguments, "%s --resume %s --stop-after 3", small, path);
    r = run("OMP_NUM_THREADS=1", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "warning") == NULL, "%s", r->err);
    snprintf(arguments, sizeof arguments, "%s --resume %s --stop-after 4", small, path);
    r = run("OMP_NUM_THREADS=2", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "at step 3"));
    ck_assert_msg(strstr(r->err, "was written by a run with 1 thread and this one has 2: it "
                                 "continues, but not bit for bit\n") != NULL, "%s", r->err);
    unlink(path);
}
END_TEST

/* Start "$TRANSFORMER ARGUMENTS" in the background, its output into OUT and ERR. */
static pid_t start(const char *arguments, const char *out, const char *err)
{
    char command[2048];
    snprintf(command, sizeof command, "exec %s %s >%s 2>%s </dev/null", transformer_binary(),
             arguments, out, err);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void wait_for_file(const char *path, pid_t pid)
{
    struct stat info;
    for (int i = 0; i < 6000 && stat(path, &info) != 0; i++) {
        ck_assert_msg(waitpid(pid, NULL, WNOHANG) == 0, "the run ended before saving");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_assert_msg(stat(path, &info) == 0, "%s did not appear within a minute", path);
}

/* Wait until PATH is a file other than the inode OLD (0: until it exists): every save
   renames a new file into place, so a new inode means a new checkpoint. */
static void wait_for_new_file(const char *path, ino_t old, pid_t pid)
{
    struct stat info;
    for (int i = 0; i < 6000; i++) {
        if (stat(path, &info) == 0 && info.st_ino != old) return;
        ck_assert_msg(waitpid(pid, NULL, WNOHANG) == 0, "the run ended before saving");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_abort_msg("%s was not saved within a minute", path);
}

static long checkpoint_step(const char *path, Config config)
{
    State s;
    state_init(&s, config, 5);
    const char *message = load(path, &s, NULL, 0);
    ck_assert_msg(*message == '\0', "%s", message);
    for (size_t i = 0; i < s.model.parameters.total; i++)
        ck_assert(isfinite(s.model.parameters.data[i]));
    const long step = s.adam.step;
    state_free(&s);
    return step;
}

START_TEST(cli_sigterm_saves_and_exits)
{
    char path[256], out[256], err[256], arguments[1024], text[4096];
    temporary_path(path, sizeof path, "term.safetensors");
    temporary_path(out, sizeof out, "term.out");
    temporary_path(err, sizeof err, "term.err");
    unlink(path);
    snprintf(arguments, sizeof arguments,
             "copy --d-model 32 --d-ff 64 --heads 2 --epochs 10000 --checkpoint %s", path);
    pid_t pid = start(arguments, out, err);
    wait_for_file(path, pid);   /* the first epoch's checkpoint */
    kill(pid, SIGTERM);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 143, "status %d", status);
    read_text(err, text, sizeof text);
    long step = -1;
    const char *at = strstr(text, "terminated at step ");
    ck_assert_msg(at && sscanf(at, "terminated at step %ld", &step) == 1, "%s", text);
    ck_assert_msg(strchr(text, '\n') == text + strlen(text) - 1, "not one line: %s", text);
    ck_assert_int_eq(checkpoint_step(path, copy_config(32, 64, 2)), step);
    unlink(path), unlink(out), unlink(err);
}
END_TEST

START_TEST(cli_kill_9_leaves_a_loadable_checkpoint)
{
    char path[256], out[256], err[256], arguments[1024];
    temporary_path(path, sizeof path, "kill.safetensors");
    temporary_path(out, sizeof out, "kill.out");
    temporary_path(err, sizeof err, "kill.err");
    unlink(path);
    const Config config = copy_config(64, 256, 4);
    long last_step = 0;
    Rng rng;
    rng_seed(&rng, 7, 7);
    for (int round = 0; round < 6; round++) {
        /* the first round starts afresh; later ones resume what the kill left */
        snprintf(arguments, sizeof arguments,
                 "copy --d-model 64 --d-ff 256 --heads 4 --epochs 10000 --checkpoint-every 1 "
                 "%s %s", round == 0 ? "--checkpoint" : "--resume", path);
        struct stat before;
        const ino_t old = stat(path, &before) == 0 ? before.st_ino : 0;
        pid_t pid = start(arguments, out, err);
        wait_for_new_file(path, old, pid);   /* the run has saved at least once */
        /* then a moment anywhere within a few steps, saves included */
        nanosleep(&(struct timespec){0, (long)(rng_next(&rng) % 250000000)}, NULL);
        kill(pid, SIGKILL);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status), "the run was not killed: status %d", status);
        const long step = checkpoint_step(path, config);
        ck_assert_int_ge(step, last_step);   /* never an older one */
        last_step = step;
    }
    ck_assert_int_gt(last_step, 1);
    /* a save that a kill interrupted leaves PATH.XXXXXX; the next run removes it */
    char leftover[300], command[700];
    snprintf(leftover, sizeof leftover, "%s.ABC123", path);
    FILE *f = fopen(leftover, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(arguments, sizeof arguments,
             "copy --d-model 64 --d-ff 256 --heads 4 --epochs 10000 --resume %s --stop-after %ld",
             path, last_step + 1);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(command, sizeof command, "ls %s.?????? 2>/dev/null | grep -q .", path);
    ck_assert_msg(system(command) != 0, "an interrupted save was left behind");
    snprintf(command, sizeof command, "rm -f %s.lock", path);
    ck_assert_int_eq(system(command), 0);
    unlink(path), unlink(out), unlink(err);
}
END_TEST

/* A second run on a checkpoint in use is refused with one line before it writes anything
   (issue 19, item 6); the first goes on and saves as usual. */
START_TEST(cli_second_run_on_a_checkpoint_is_refused)
{
    char path[256], lock[300], log[256], out[256], err[256], arguments[1024];
    temporary_path(path, sizeof path, "busy.safetensors");
    temporary_path(log, sizeof log, "busy.csv");
    temporary_path(out, sizeof out, "busy.out");
    temporary_path(err, sizeof err, "busy.err");
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path), unlink(log);
    snprintf(arguments, sizeof arguments,
             "copy --d-model 16 --d-ff 16 --heads 2 --epochs 10000 --checkpoint %s", path);
    pid_t pid = start(arguments, out, err);
    wait_for_file(path, pid);
    snprintf(arguments, sizeof arguments, "%s --checkpoint %s --log %s", small, path, log);
    Run *r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    char expected[1024];
    snprintf(expected, sizeof expected,
             "transformer: %s is in use by another run (%s is locked)\n", path, lock);
    ck_assert_str_eq(r->err, expected);
    struct stat info;
    ck_assert_msg(stat(log, &info) != 0, "the refused run wrote its log");
    kill(pid, SIGTERM);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 143, "status %d", status);
    /* once the first has ended, the lock is free again */
    snprintf(arguments, sizeof arguments, "%s --resume %s --stop-after 1000000", small, path);
    r = run("", arguments);
    ck_assert_msg(r->status == 0 || r->status == 1, "%d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "in use") == NULL, "%s", r->err);
    unlink(path), unlink(lock), unlink(out), unlink(err);
}
END_TEST

/* Saving never replaces what is not a regular file: a symbolic link, a pipe, a directory
   (issue 19, item 7: --checkpoint /dev/null once replaced /dev/null with a file). */
START_TEST(saving_over_anything_but_a_regular_file_is_refused)
{
    char target[256], link_path[256], fifo[256], dir[256];
    temporary_path(target, sizeof target, "target.txt");
    temporary_path(link_path, sizeof link_path, "link.safetensors");
    temporary_path(fifo, sizeof fifo, "fifo.safetensors");
    temporary_path(dir, sizeof dir, "dir.safetensors");
    unlink(link_path), unlink(fifo), rmdir(dir);
    FILE *f = fopen(target, "w");
    ck_assert_ptr_nonnull(f);
    fputs("keep me\n", f);
    fclose(f);
    ck_assert_int_eq(symlink(target, link_path), 0);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    const char *const paths[3] = {link_path, fifo, dir};
    State s;
    state_init(&s, copy_config(16, 16, 2), 5);
    for (int p = 0; p < 3; p++) {
        Error scratch;
        const char *error = checkpoint_save(paths[p], &s.model, &s.adam, &s.progress, recipe, 2,
                                            &scratch);
        ck_assert_msg(error && strstr(error, "not a regular file; refusing to replace it"),
                      "%s: %s", paths[p], error ? error : "saved");
    }
    struct stat info;
    ck_assert_int_eq(lstat(link_path, &info), 0);
    ck_assert(S_ISLNK(info.st_mode));
    char text[64];
    read_text(target, text, sizeof text);
    ck_assert_str_eq(text, "keep me\n");
    ck_assert_int_eq(stat(fifo, &info), 0);
    ck_assert(S_ISFIFO(info.st_mode));
    state_free(&s);
    unlink(link_path), unlink(target), unlink(fifo), rmdir(dir);
}
END_TEST

START_TEST(cli_nan_loss_stops_and_keeps_the_checkpoint)
{
    char path[256], arguments[1024];
    temporary_path(path, sizeof path, "nan.safetensors");
    unlink(path);
    /* a factor of 1e30 makes the first update so large that the next loss is NaN */
    snprintf(arguments, sizeof arguments,
             "copy --d-model 32 --d-ff 64 --heads 2 --factor 1e30 --checkpoint-every 1 "
             "--checkpoint %s", path);
    Run *r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "transformer: step 2: the loss is NaN; stopping") == r->err,
                  "%s", r->err);
    ck_assert_msg(strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
    ck_assert_int_eq(checkpoint_step(path, copy_config(32, 64, 2)), 1);
    unlink(path);
}
END_TEST

Suite *checkpoint_suite(void)
{
    Suite *suite = suite_create("checkpoint");
    TCase *file = tcase_create("file");
    tcase_add_test(file, checkpoint_round_trip_restores_everything);
    tcase_add_test(file, checkpoint_refuses_bad_files);
    tcase_add_test(file, checkpoint_configuration_reads_back);
    tcase_add_test(file, checkpoint_refuses_impossible_progress);
    tcase_add_test(file, checkpoint_is_not_saved_over_with_non_finite_parameters);
    suite_add_tcase(suite, file);
    TCase *command = tcase_create("command");
    tcase_set_timeout(command, 120);
    tcase_add_test(command, cli_resume_is_bit_exact);
    tcase_add_test(command, cli_second_run_on_a_checkpoint_is_refused);
    tcase_add_test(command, saving_over_anything_but_a_regular_file_is_refused);
    tcase_add_test(command, cli_resume_with_other_threads_warns);
    tcase_add_test(command, cli_sigterm_saves_and_exits);
    tcase_add_test(command, cli_kill_9_leaves_a_loadable_checkpoint);
    tcase_add_test(command, cli_nan_loss_stops_and_keeps_the_checkpoint);
    suite_add_tcase(suite, command);
    return suite;
}
