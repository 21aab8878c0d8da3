/* test_trainer.c -- the trainer of book/copy.nw (one loop for every task): it calls a batch
   source in the right order, stops where asked, keeps the best model, reports failures; and
   through the translation task (`transformer train`), as test_checkpoint.c does through the
   copy task: resumption is bit-exact, SIGTERM saves and exits 143, a NaN loss stops. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "trainer.h"
#include "tests.h"

/* ---- the loop, with a source that records what it is asked ---- */

enum { BATCH = 8, LEN = 6, EPOCHS = 3, BATCHES = 4 };

typedef struct {
    int data[BATCH * LEN];
    int epochs_started[8], starts, fills, validations, saves;
    int epochs_kept[8], kept;   /* the epochs save_epoch was called for, in order */
    const double *validation;   /* the losses validate returns, in turn */
    bool fail_to_save;
} RecordingTask;

static void recording_start(void *task, int epoch)
{
    RecordingTask *t = task;
    t->epochs_started[t->starts++] = epoch;
}

static void recording_fill(void *task, Trainer *trainer)
{
    RecordingTask *t = task;
    t->fills++;
    copy_task_batch(t->data, BATCH, LEN, 11, &trainer->progress.data_rng);
    batch_fill(&trainer->batch, t->data, t->data, 0);
}

static ValidationLoss recording_validate(void *task, Trainer *trainer)
{
    RecordingTask *t = task;
    const double loss = t->validation[t->validations++];
    return (ValidationLoss){loss, loss, NAN};
}

static const char *recording_save(void *task, const Model *model)
{
    RecordingTask *t = task;
    t->saves++;
    return t->fail_to_save ? "cannot save: a test" : NULL;
}

static const char *recording_save_epoch(void *task, const Model *model, int epoch)
{
    RecordingTask *t = task;
    t->epochs_kept[t->kept++] = epoch;
    return NULL;
}

/* The losses validate returns in most tests (the best at epoch 2), and a source that
   records what it is asked. */
static const double losses_2_1_15[EPOCHS] = {2.0, 1.0, 1.5};

static BatchSource recording_source(RecordingTask *task)
{
    return (BatchSource){task, BATCHES, recording_start, recording_fill, recording_validate,
                         NULL, NULL, false};
}

/* A small model, set up as every run is. */
static void setup(Trainer *trainer)
{
    Config config = config_default(11, 11, 1);
    config.d_model = 16, config.d_ff = 32, config.heads = 2, config.max_len = LEN;
    const StepSettings settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0};
    const BatchBounds bounds = fixed_bounds(BATCH, LEN);
    trainer_setup(trainer, config, 1, &bounds, &settings);
}

START_TEST(trainer_calls_the_source_in_order_and_keeps_the_best)
{
    static Trainer r;
    setup(&r);
    const double losses[EPOCHS] = {2.0, 1.0, 1.5};   /* the second epoch is the best */
    RecordingTask task = {.validation = losses};
    const BatchSource source = {&task, BATCHES, recording_start, recording_fill,
                                recording_validate, recording_save, NULL, false};
    char log_path[] = "/tmp/transformer-test-trainer-XXXXXX";
    close(mkstemp(log_path));
    const RunSettings run = {.epochs = EPOCHS, .log_path = log_path};
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_FINISHED);
    ck_assert_int_eq(task.starts, EPOCHS);
    for (int e = 0; e < EPOCHS; e++) ck_assert_int_eq(task.epochs_started[e], e + 1);
    ck_assert_int_eq(task.fills, EPOCHS * BATCHES);
    ck_assert_int_eq(task.validations, EPOCHS);
    ck_assert_int_eq(task.saves, 2);                  /* epochs 1 and 2 improved */
    ck_assert_double_eq(r.progress.best_validation, 1.0);
    ck_assert_int_eq(r.adam.step, EPOCHS * BATCHES);
    ck_assert_int_eq(r.progress.epoch, EPOCHS + 1);
    ck_assert_int_eq(r.progress.batch, 0);
    /* the log: a header of 8 columns, then one row per epoch with the validation loss, the
       source's two means (equal here) */
    char text[4096];
    read_text(log_path, text, sizeof text);
    static const char header[] = "epoch,step,train_loss,validation_loss,learning_rate,seconds,"
                                 "tokens_per_second,validation_batch_mean\n";
    ck_assert_msg(strncmp(text, header, strlen(header)) == 0, "%s", text);
    const char *row = strchr(text, '\n') + 1;
    for (int e = 1; e <= EPOCHS; e++) {
        int epoch;
        long step;
        double train, validation, rate, seconds, speed, batch_mean;
        ck_assert_int_eq(sscanf(row, "%d,%ld,%lf,%lf,%lf,%lf,%lf,%lf", &epoch, &step, &train,
                                &validation, &rate, &seconds, &speed, &batch_mean), 8);
        ck_assert_double_eq(batch_mean, validation);
        ck_assert_int_eq(epoch, e);
        ck_assert_int_eq(step, e * BATCHES);
        ck_assert_double_eq(validation, losses[e - 1]);
        ck_assert(train > 0 && rate > 0 && speed > 0);
        row = strchr(row, '\n') + 1;
    }
    ck_assert_str_eq(row, "");
    unlink(log_path);
    trainer_free(&r);
}
END_TEST

START_TEST(trainer_stops_after_the_step_asked_for)
{
    static Trainer r;
    setup(&r);
    const double losses[EPOCHS] = {2.0, 1.0, 1.5};
    RecordingTask task = {.validation = losses};
    const BatchSource source = {&task, BATCHES, recording_start, recording_fill,
                                recording_validate, NULL, NULL, false};
    const RunSettings run = {.epochs = EPOCHS, .stop_after = BATCHES + 1};
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_STOPPED);
    ck_assert_int_eq(r.adam.step, BATCHES + 1);
    ck_assert_int_eq(r.progress.epoch, 2);
    ck_assert_int_eq(r.progress.batch, 1);
    ck_assert_int_eq(task.validations, 1);
    ck_assert_double_eq(r.progress.best_validation, 2.0);   /* kept without a save_best */
    trainer_free(&r);
}
END_TEST

/* A time budget that cannot hold the epochs brings the run's end forward, keeping the
   cool-down whole (Getting to 41): the decision, at the speeds of two machines. */
START_TEST(trainer_budget_brings_the_cooldown_forward)
{
    /* 260 updates an epoch, 38 planned, 10 cooling; 60 minutes */
    /* 126 s an epoch (the slower machine): 1 + floor(0.98 * 3474 / 126) = 28 */
    ck_assert_int_eq(budget_last_epoch(3600, 126, 260, 260, 260, 38, 10), 28);
    /* 77 s an epoch (the faster): 45 would fit, the 38 planned stay */
    ck_assert_int_eq(budget_last_epoch(3600, 77, 260, 260, 260, 38, 10), 38);
    /* the budget spent at epoch 18: the cool-down still gets its 10 epochs */
    ck_assert_int_eq(budget_last_epoch(3600, 3590, 4680, 4680, 260, 38, 10), 28);
    /* a resumed run measures its own pace: 100 s for 130 updates, from step 2600 */
    ck_assert_int_eq(budget_last_epoch(600, 100, 130, 2730, 260, 38, 10), 21);
    /* the run of make multi30k on that machine: after epoch 2, 31 epochs; after epoch 21,
       at the steadier pace of the later epochs, 32 */
    ck_assert_int_eq(budget_last_epoch(3600, 221.5, 520, 520, 260, 38, 10), 31);
    ck_assert_int_eq(budget_last_epoch(3600, 2290.1, 5460, 5460, 260, 38, 10), 32);
    /* no update done yet: no pace, no change */
    ck_assert_int_eq(budget_last_epoch(3600, 5, 0, 0, 260, 38, 10), 38);
    /* just fits, with the 2% margin: 10 epochs of 100 s in 1000 s of budget do not */
    ck_assert_int_eq(budget_last_epoch(1000, 100, 10, 10, 10, 10, 2), 9);
}
END_TEST

/* A last epoch brought forward (here, as a checkpoint would carry it) ends the run there
   and moves the cool-down's end with it. */
START_TEST(trainer_ends_with_a_last_epoch_brought_forward)
{
    static Trainer r;
    setup(&r);
    r.step.cooldown = BATCHES, r.step.cooldown_end = (long)EPOCHS * BATCHES;
    r.progress.last_epoch = EPOCHS - 1;   /* as a checkpoint would carry it */
    RecordingTask task = {.validation = losses_2_1_15};
    const BatchSource source = recording_source(&task);
    const RunSettings run = {.epochs = EPOCHS};
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_FINISHED);
    ck_assert_int_eq(task.validations, EPOCHS - 1);
    ck_assert_int_eq(r.adam.step, (EPOCHS - 1) * BATCHES);
    ck_assert_int_eq(r.step.cooldown_end, (EPOCHS - 1) * BATCHES);
    /* the last update had the cool-down's smallest factor, 1/BATCHES of the rate */
    const double rate = learning_rate(r.adam.step - 1, 16, 0.5, 400);
    ck_assert_double_eq_tol(scheduled_rate(r.adam.step - 1, 16, &r.step), rate / BATCHES,
                            1e-15);
    trainer_free(&r);
}
END_TEST

START_TEST(trainer_reports_a_failed_save_and_an_unwritable_log)
{
    static Trainer r;
    setup(&r);
    const double losses[EPOCHS] = {2.0, 1.0, 1.5};
    RecordingTask task = {.validation = losses, .fail_to_save = true};
    const BatchSource source = {&task, BATCHES, recording_start, recording_fill,
                                recording_validate, recording_save, NULL, false};
    const RunSettings run = {.epochs = EPOCHS};
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_FAILED);
    ck_assert_str_eq(r.error.message, "cannot save: a test");
    ck_assert_int_eq(r.adam.step, BATCHES);   /* it stopped at the first epoch's end */
    const RunSettings no_log = {.epochs = EPOCHS, .log_path = "/nonexistent/dir/log.csv"};
    ck_assert_int_eq(trainer_run(&r, &source, &no_log), TRAINER_FAILED);
    ck_assert_msg(strstr(r.error.message, "/nonexistent/dir/log.csv: cannot create the log")
                  == r.error.message, "%s", r.error.message);
    trainer_free(&r);
}
END_TEST

/* Early stopping: with patience 2, the run stops after two epochs that do not beat the best
   (epochs 3 and 4 after epoch 2), although epoch 5 would have; every validated epoch's model
   is offered to save_epoch, and the best epoch is remembered. */
START_TEST(trainer_stops_when_out_of_patience)
{
    static Trainer r;
    setup(&r);
    const double losses[6] = {2.0, 1.0, 1.5, 1.0, 0.5, 0.4};   /* a tie is not better */
    RecordingTask task = {.validation = losses};
    const BatchSource source = {&task, BATCHES, recording_start, recording_fill,
                                recording_validate, recording_save, recording_save_epoch,
                                false};
    const RunSettings run = {.epochs = 6, .patience = 2};
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_STOPPED);
    ck_assert_int_eq(task.validations, 4);
    ck_assert_int_eq(r.progress.best_epoch, 2);
    ck_assert_double_eq(r.progress.best_validation, 1.0);
    ck_assert_int_eq(task.saves, 2);
    ck_assert_int_eq(task.kept, 4);
    for (int e = 0; e < 4; e++) ck_assert_int_eq(task.epochs_kept[e], e + 1);
    ck_assert_int_eq(r.progress.epoch, 5);   /* at the start of the epoch it did not run */
    ck_assert_int_eq(r.progress.batch, 0);
    trainer_free(&r);
    /* without patience the same losses run all six epochs */
    setup(&r);
    RecordingTask patient = {.validation = losses};
    const BatchSource all = {&patient, BATCHES, recording_start, recording_fill,
                             recording_validate, NULL, NULL, false};
    const RunSettings no_limit = {.epochs = 6};
    ck_assert_int_eq(trainer_run(&r, &all, &no_limit), TRAINER_FINISHED);
    ck_assert_int_eq(patient.validations, 6);
    ck_assert_int_eq(r.progress.best_epoch, 6);
    trainer_free(&r);
}
END_TEST

/* A position past the end of an epoch (a checkpoint of another recipe) is refused before
   any step (issue 19, item 8: it once trained forever). */
START_TEST(trainer_refuses_a_batch_past_the_epoch)
{
    static Trainer r;
    setup(&r);
    RecordingTask task = {.validation = losses_2_1_15};
    const BatchSource source = recording_source(&task);
    const RunSettings run = {.epochs = EPOCHS};
    r.progress.batch = BATCHES;
    ck_assert_int_eq(trainer_run(&r, &source, &run), TRAINER_FAILED);
    ck_assert_str_eq(r.error.message, "the run is at batch 4 of an epoch of 4 batches");
    ck_assert_int_eq(task.fills, 0);
    ck_assert_int_eq(r.adam.step, 0);
    trainer_free(&r);
}
END_TEST

/* ---- the translation task: resumption, SIGTERM, NaN ---- */

/* A directory with 32 pairs as training and validation set; the train flags of a tiny run. */
static void make_data(char *dir)
{
    char command[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(command, sizeof command,
             "head -32 data/multi30k/train.de > %s/train.de && cp %s/train.de %s/val.de && "
             "head -32 data/multi30k/train.en > %s/train.en && cp %s/train.en %s/val.en",
             dir, dir, dir, dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
}

static void train_arguments(char *arguments, size_t size, const char *dir, const char *more)
{
    snprintf(arguments, size,
             "train --data %s --layers 1 --d-model 16 --d-ff 32 --heads 2 --token-budget 200 "
             "--warmup 20 --model %s/m.st --log %s/log.csv --checkpoint %s/last.st %s", dir,
             dir, dir, dir, more);   /* a later --checkpoint in more wins */
}

static unsigned char *read_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    unsigned char *bytes = malloc(*size ? *size : 1);
    ck_assert_uint_eq(fread(bytes, 1, *size, f), *size);
    fclose(f);
    return bytes;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t size_a, size_b;
    unsigned char *bytes_a = read_bytes(a, &size_a), *bytes_b = read_bytes(b, &size_b);
    ck_assert_uint_eq(size_a, size_b);
    ck_assert_msg(memcmp(bytes_a, bytes_b, size_a) == 0, "%s and %s differ", a, b);
    free(bytes_a), free(bytes_b);
}

START_TEST(train_resume_is_bit_exact)
{
    char dir[] = "/tmp/transformer-test-trainer-XXXXXX", arguments[2048], more[1024];
    char path_a[128], path_b[128], command[256];
    make_data(dir);
    snprintf(path_a, sizeof path_a, "%s/a.st", dir);
    snprintf(path_b, sizeof path_b, "%s/b.st", dir);
    /* 3 epochs at once, and the same with two stops: inside the first epoch and later */
    snprintf(more, sizeof more, "--epochs 3 --checkpoint %s", path_a);
    train_arguments(arguments, sizeof arguments, dir, more);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "best validation loss"));
    snprintf(command, sizeof command, "mv %s/m.st %s/m-a.st", dir, dir);
    ck_assert_int_eq(system(command), 0);
    snprintf(more, sizeof more, "--epochs 3 --checkpoint %s --stop-after 2", path_b);
    train_arguments(arguments, sizeof arguments, dir, more);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->out, "stopped after step 2 (--stop-after); saved to "), "%s", r->out);
    snprintf(more, sizeof more, "--epochs 3 --resume %s --checkpoint %s --stop-after 5",
             path_b, path_b);
    train_arguments(arguments, sizeof arguments, dir, more);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->out, "at step 2 (epoch 1, batch 2)"), "%s", r->out);
    snprintf(more, sizeof more, "--epochs 3 --resume %s --checkpoint %s", path_b, path_b);
    train_arguments(arguments, sizeof arguments, dir, more);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    assert_same_file(path_a, path_b);
    snprintf(command, sizeof command, "%s/m-a.st", dir);
    snprintf(path_a, sizeof path_a, "%s/m.st", dir);
    assert_same_file(command, path_a);   /* the best model too */
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* --keep-epochs 2 keeps the models of the last two epochs beside the best one, removing
   older ones, and each is a model file that translate reads. */
START_TEST(train_keeps_the_last_epochs_models)
{
    char dir[] = "/tmp/transformer-test-trainer-XXXXXX", arguments[2048], path[256];
    make_data(dir);
    train_arguments(arguments, sizeof arguments, dir, "--epochs 3 --keep-epochs 2");
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    for (int epoch = 1; epoch <= 3; epoch++) {
        snprintf(path, sizeof path, "%s/m.st-epoch-%d.safetensors", dir, epoch);
        ck_assert_msg((access(path, F_OK) == 0) == (epoch >= 2), "%s", path);
    }
    snprintf(arguments, sizeof arguments, "translate --beam 1 --model %s < %s/val.de", path,
             dir);
    r = run("", arguments);
    ck_assert_msg(r->status == 0 && strlen(r->out) > 1, "status %d: %s", r->status, r->err);
    /* average: the mean of a model with itself is that model, bit for bit; the mean of two
       epochs is a model translate reads; a model of another run is refused by name */
    snprintf(arguments, sizeof arguments, "average %s %s %s --output %s/same.st", path, path,
             path, dir);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    char same[256];
    snprintf(same, sizeof same, "%s/same.st", dir);
    assert_same_file(path, same);
    snprintf(arguments, sizeof arguments,
             "average %s/m.st-epoch-2.safetensors %s --output %s/mean.st", dir, path, dir);
    r = run("", arguments);
    ck_assert_msg(r->status == 0 && strstr(r->out, "the mean of 2 models"), "status %d: %s",
                  r->status, r->err);
    snprintf(arguments, sizeof arguments, "translate --beam 1 --model %s/mean.st < %s/val.de",
             dir, dir);
    r = run("", arguments);
    ck_assert_msg(r->status == 0 && strlen(r->out) > 1, "status %d: %s", r->status, r->err);
    char other[2048];   /* another run: the same data, a narrower feed-forward layer */
    train_arguments(other, sizeof other, dir, "--epochs 1 --d-ff 16");
    r = run("", other);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(arguments, sizeof arguments, "average %s %s/m.st --output %s/bad.st", path, dir,
             dir);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "m.st: not a model of the same run as "), "%s", r->err);
    r = run("", "average x.st");
    ck_assert_int_eq(r->status, 2);
    ck_assert_msg(strstr(r->err, "expects --output FILE"), "%s", r->err);
    snprintf(arguments, sizeof arguments, "rm -rf %s", dir);
    ck_assert_int_eq(system(arguments), 0);
}
END_TEST

START_TEST(train_sigterm_saves_and_exits)
{
    char dir[] = "/tmp/transformer-test-trainer-XXXXXX", arguments[2048], more[1024];
    char path[128], out[128], err[128], command[2600], text[4096];
    make_data(dir);
    snprintf(path, sizeof path, "%s/c.st", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(more, sizeof more, "--epochs 100000 --checkpoint %s", path);
    train_arguments(arguments, sizeof arguments, dir, more);
    snprintf(command, sizeof command, "exec %s %s >%s 2>%s </dev/null", transformer_binary(),
             arguments, out, err);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    struct stat info;
    for (int i = 0; i < 12000 && stat(path, &info) != 0; i++) {   /* the first checkpoint */
        ck_assert_msg(waitpid(pid, NULL, WNOHANG) == 0, "the run ended before saving");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_assert_msg(stat(path, &info) == 0, "no checkpoint within two minutes");
    kill(pid, SIGTERM);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 143, "status %d", status);
    read_text(err, text, sizeof text);
    long step = -1;
    ck_assert_msg(sscanf(text, "transformer: terminated at step %ld; the checkpoint is ", &step)
                  == 1 && step > 0, "%s", text);
    ck_assert_msg(strchr(text, '\n') == text + strlen(text) - 1, "not one line: %s", text);
    /* the checkpoint holds that step: resuming starts there */
    snprintf(more, sizeof more, "--epochs 100000 --resume %s --stop-after %ld", path, step + 1);
    train_arguments(arguments, sizeof arguments, dir, more);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    char expected[64];
    snprintf(expected, sizeof expected, "at step %ld (epoch ", step);
    ck_assert_msg(strstr(r->out, expected), "%s", r->out);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

START_TEST(train_nan_loss_stops_and_keeps_the_checkpoint)
{
    char dir[] = "/tmp/transformer-test-trainer-XXXXXX", arguments[2048], more[1024];
    char path[128], command[256];
    make_data(dir);
    snprintf(path, sizeof path, "%s/c.st", dir);
    /* a factor of 1e30 makes the first update so large that the next loss is NaN */
    snprintf(more, sizeof more, "--factor 1e30 --checkpoint-every 1 --checkpoint %s", path);
    train_arguments(arguments, sizeof arguments, dir, more);
    Run *r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    char expected[256];
    snprintf(expected, sizeof expected,
             "transformer: step 2: the loss is NaN; stopping; the last checkpoint is kept in %s\n",
             path);
    ck_assert_str_eq(r->err, expected);
    snprintf(more, sizeof more, "--factor 1e30 --resume %s --stop-after 1", path);
    train_arguments(arguments, sizeof arguments, dir, more);
    r = run("", arguments);   /* the checkpoint is the one of step 1, before the damage */
    ck_assert_msg(strstr(r->out, "at step 1 (epoch 1, batch 1)"), "%d: %s%s", r->status,
                  r->out, r->err);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* A log on a full disk stops the run at the first row with one line and status 1, for both
   tasks (issue 19, item 5: train --log on a full disk once lost the log silently). */
START_TEST(full_disk_log_stops_the_run)
{
    char dir[] = "/tmp/transformer-test-trainer-XXXXXX", arguments[2048], command[256];
    make_data(dir);
    Run *r = run("", "copy --d-model 16 --d-ff 16 --heads 2 --epochs 3 --batches 2 "
                     "--log /dev/full");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->err, "transformer: /dev/full: cannot write the log: "
                             "No space left on device\n");
    ck_assert_msg(strstr(r->out, "epoch 2") == NULL, "it went on: %s", r->out);
    train_arguments(arguments, sizeof arguments, dir, "--epochs 3");
    strcat(arguments, " --log /dev/full");   /* the last --log wins */
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->err, "transformer: /dev/full: cannot write the log: "
                             "No space left on device\n");
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

Suite *trainer_suite(void)
{
    Suite *suite = suite_create("trainer");
    TCase *loop = tcase_create("loop");
    tcase_add_test(loop, trainer_calls_the_source_in_order_and_keeps_the_best);
    tcase_add_test(loop, trainer_stops_after_the_step_asked_for);
    tcase_add_test(loop, trainer_budget_brings_the_cooldown_forward);
    tcase_add_test(loop, trainer_ends_with_a_last_epoch_brought_forward);
    tcase_add_test(loop, trainer_reports_a_failed_save_and_an_unwritable_log);
    tcase_add_test(loop, trainer_refuses_a_batch_past_the_epoch);
    tcase_add_test(loop, trainer_stops_when_out_of_patience);
    suite_add_tcase(suite, loop);
    TCase *train = tcase_create("train command");
    tcase_set_timeout(train, 300);
    tcase_add_test(train, train_resume_is_bit_exact);
    tcase_add_test(train, train_keeps_the_last_epochs_models);
    tcase_add_test(train, train_sigterm_saves_and_exits);
    tcase_add_test(train, train_nan_loss_stops_and_keeps_the_checkpoint);
    tcase_add_test(train, full_disk_log_stops_the_run);
    suite_add_tcase(suite, train);
    return suite;
}
