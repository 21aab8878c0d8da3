#line 329 "book/copy.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "trainer.h"
/* <<trainer.c includes>> */
#line 342 "book/copy.nw"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#line 405 "book/checkpoint.nw"
#include <signal.h>
#include <stdlib.h>
#include "checkpoint.h"
#line 533 "book/checkpoint.nw"
#include <fcntl.h>
/* <<trainer.c types>> */
#line 600 "book/copy.nw"
typedef struct {
    FILE *log;           /* the CSV log, or NULL */
    bool terminal;       /* standard output is a terminal */
    double start;        /* seconds_now() when the run started */
    long first_step;     /* the step it started from */
    long tokens_seen;    /* target tokens trained on since */
    int lock;            /* the checkpoint's lock (the checkpoint chapter), or -1 */
} TrainerClock;
/* <<trainer.c checkpoint helpers>> */
#line 414 "book/checkpoint.nw"
/* Save the trainer's state with the run's recipe and the best validation loss. */
static const char *save_checkpoint(Trainer *trainer, const TrainerSettings *settings)
{
    char best_text[32], epoch_text[16];
    snprintf(best_text, sizeof best_text, "%.17g", trainer->best_validation);
    snprintf(epoch_text, sizeof epoch_text, "%d", trainer->best_epoch);
    enum { MAX_RECIPE = 15 };
    const char *pairs[MAX_RECIPE + 2][2];
    const int count = settings->recipe_count < MAX_RECIPE ? settings->recipe_count : MAX_RECIPE;
    for (int i = 0; i < count; i++)
        pairs[i][0] = settings->recipe[i][0], pairs[i][1] = settings->recipe[i][1];
    pairs[count][0] = "best_validation", pairs[count][1] = best_text;
    pairs[count + 1][0] = "best_epoch", pairs[count + 1][1] = epoch_text;
    Safetensors scratch;
    const char *error = checkpoint_save(settings->checkpoint_path, trainer->model,
                                        trainer->adam, trainer->progress,
                                        (const char *const (*)[2])pairs, count + 2, &scratch);
    if (error) snprintf(trainer->message, sizeof trainer->message, "%s", error);
    return error ? trainer->message : NULL;
}
#line 507 "book/checkpoint.nw"
static volatile sig_atomic_t stop_signal = 0;

static void note_stop_signal(int signal_number)
{
    stop_signal = signal_number;
    signal(signal_number, SIG_DFL);
}

/* From now on SIGINT and SIGTERM only set stop_signal (the first time). */
static void catch_stop_signals(void)
{
    struct sigaction action = {.sa_handler = note_stop_signal, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}
#line 540 "book/checkpoint.nw"
/* Lock PATH.lock for this process: the descriptor, or -1 with a message. */
static int lock_checkpoint(const char *path, char *message, size_t size)
{
    char lock_path[4200];
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    const int fd = open(lock_path, O_RDWR | O_CREAT, 0666);
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0) return fd;
    const int failure = errno;
    if (fd >= 0) close(fd);
    if (fd >= 0 && (failure == EACCES || failure == EAGAIN))
        snprintf(message, size, "%.2000s is in use by another run (%.2000s is locked)", path,
                 lock_path);
    else
        snprintf(message, size, "%.4000s: cannot %s: %s", lock_path,
                 fd >= 0 ? "lock" : "create the lock file", strerror(failure));
    return -1;
}
/* <<trainer.c helpers>> */
#line 441 "book/copy.nw"
/* The rows [first, end) of whole, as a batch that shares its arrays. */
static Batch batch_rows(const Batch *whole, int first, int end)
{
    const size_t s = (size_t)whole->src_len, t = (size_t)whole->tgt_len;
    return (Batch){end - first, whole->src_len, whole->tgt_len,
                   whole->src + first * s, whole->tgt + first * t, whole->tgt_y + first * t,
                   whole->src_keep + first * s, whole->tgt_keep + first * t * t};
}
#line 460 "book/copy.nw"
/* Add the gradients of the rows [first, end) of the trainer's batch, trained in parts
   (at most that many, in order), each normalized by tokens, the batch's target tokens.
   Returns their summed loss. */
static double accumulate_rows(Trainer *trainer, int first, int end, int parts, int tokens)
{
    const Batch *whole = trainer->batch;
    Model *model = trainer->model;
    Rng *dropout_rng = &trainer->progress->dropout_rng;
    const Rng start = *dropout_rng;
    double loss = 0.0;
    for (int p = 0; p < parts; p++) {
        const int from = first + (int)((long)(end - first) * p / parts);
        const int to = first + (int)((long)(end - first) * (p + 1) / parts);
        if (to == from) continue;   /* more parts than rows */
        *dropout_rng = start;
        const Batch part = batch_rows(whole, from, to);
        model->dropout_rows_before = from, model->dropout_rows_after = whole->batch - to;
        loss += train_accumulate(model, &part, trainer->settings, trainer->d_logprobs,
                                 dropout_rng, tokens);
    }
    model->dropout_rows_before = model->dropout_rows_after = 0;
    return loss;
}
#line 489 "book/copy.nw"
static int batch_tokens(const Batch *batch, int pad)
{
    int tokens = 0;
    for (int i = 0; i < batch->batch * batch->tgt_len; i++) tokens += batch->tgt_y[i] != pad;
    return tokens;
}
#line 502 "book/copy.nw"
static double accumulated_step(Trainer *trainer, int parts, int tokens)
{
    const Batch *batch = trainer->batch;
    if (tokens == 0) return 0.0;   /* nothing to learn from: no step */
    model_zero_gradients(trainer->model);
    const double loss = accumulate_rows(trainer, 0, batch->batch, parts, tokens);
    train_update(trainer->model, trainer->adam, trainer->settings);
    return loss / tokens;
}
#line 640 "book/copy.nw"
/* The epoch the run ends with: the settings', unless a time budget brought it forward. */
static int last_epoch(const TrainingProgress *progress, const TrainerSettings *settings)
{
    return progress->last_epoch ? progress->last_epoch : settings->epochs;
}

static double current_rate(const Trainer *trainer)
{
    return scheduled_rate(trainer->adam->step - 1, trainer->model->config.d_model,
                          trainer->settings);
}

static void print_progress(const Trainer *trainer, const BatchSource *source,
                           const TrainerSettings *settings, const TrainerClock *clock)
{
    const TrainingProgress *progress = trainer->progress;
    const double elapsed = seconds_now() - clock->start;
    const long done = trainer->adam->step - clock->first_step;   /* by this process */
    const long left = (long)(last_epoch(progress, settings) - progress->epoch) * source->batches
                      + source->batches - progress->batch;
    double eta = elapsed / done * left;
    if (settings->max_minutes && 60.0 * settings->max_minutes - elapsed < eta)
        eta = 60.0 * settings->max_minutes - elapsed;   /* the time budget ends it first */
    printf("\repoch %d/%d  batch %d/%d  step %ld  loss %.4f  %.0f tokens/s  lr %.2e  "
           "ETA %.0f %s   ", progress->epoch, last_epoch(progress, settings), progress->batch,
           source->batches, trainer->adam->step, progress->loss_sum / progress->batch,
           clock->tokens_seen / elapsed, current_rate(trainer),
           eta < 120 ? eta : eta / 60, eta < 120 ? "s" : "min");
    fflush(stdout);
}
#line 701 "book/copy.nw"
/* Validate, write the epoch's row of the log and its line, keep the epoch's model if the
   task keeps them, save it if it is the best; false, with the trainer's message, when a
   save failed. */
static bool end_epoch(Trainer *trainer, const BatchSource *source, const TrainerClock *clock,
                      const TrainerSettings *settings)
{
    const TrainingProgress *progress = trainer->progress;
    const double validation = source->validate(source->task, trainer);
    const double elapsed = seconds_now() - clock->start;
    const double loss = progress->loss_sum / progress->batch;
    if (clock->log) {
        fprintf(clock->log, "%d,%ld,%.6f,%.6f,%.6e,%.3f,%.0f\n", progress->epoch,
                trainer->adam->step, loss, validation, current_rate(trainer), elapsed,
                clock->tokens_seen / elapsed);
        if (fflush(clock->log) != 0 || ferror(clock->log)) {   /* a full disk, say */
            snprintf(trainer->message, sizeof trainer->message, "%s: cannot write the log: %s",
                     settings->log_path, strerror(errno));
            return false;
        }
    }
    if (!clock->terminal) {   /* one line per epoch, flushed: a log file shows progress too */
        printf("epoch %d  step %ld  loss %.4f  validation %.4f  %.0f tokens/s  lr %.2e  "
               "%.1f s\n", progress->epoch, trainer->adam->step, loss, validation,
               clock->tokens_seen / elapsed, current_rate(trainer), elapsed);
        fflush(stdout);
    }
    const char *error = source->save_epoch
                        ? source->save_epoch(source->task, trainer->model, progress->epoch)
                        : NULL;
    if (!error && validation < trainer->best_validation) {
        trainer->best_validation = validation, trainer->best_epoch = progress->epoch;
        error = source->save_best ? source->save_best(source->task, trainer->model) : NULL;
    }
    if (error) snprintf(trainer->message, sizeof trainer->message, "%s", error);
    return error == NULL;
}
#line 100 "book/distributed.nw"
static double parallel_step(Trainer *trainer, DataParallel *parallel, int parts, int tokens)
{
    const Batch *whole = trainer->batch;
    const TrainSettings *settings = trainer->settings;
    Model *model = trainer->model;
    if (tokens == 0) return 0.0;   /* the same on every rank: nobody steps */
    const int first = (int)((long)whole->batch * parallel->rank / parallel->size);
    const int end = (int)((long)whole->batch * (parallel->rank + 1) / parallel->size);
    ENSURE(end > first, "a batch of %d sequences for %d processes", whole->batch,
           parallel->size);
    const double start = seconds_now();
    model_zero_gradients(model);
    double loss = accumulate_rows(trainer, first, end, parts, tokens);
    const double reduce = seconds_now();
    parallel->sum(parallel->context, model->gradients.data, model->gradients.total, &loss, 1);
    const double update = seconds_now();
    train_update(model, trainer->adam, settings);
    parallel->steps++;
    parallel->communication_seconds += update - reduce;
    parallel->compute_seconds += (reduce - start) + (seconds_now() - update);
    return loss / tokens;
}
#line 131 "book/distributed.nw"
/* One process: flag. Several: whether flag is true on any of them. */
static bool agree(DataParallel *parallel, bool flag)
{
    if (parallel == NULL) return flag;
    double count = flag;
    parallel->sum(parallel->context, NULL, 0, &count, 1);
    return count > 0;
}
/* <<trainer.c definitions>> */
#line 524 "book/copy.nw"
TrainerOutcome trainer_run(Trainer *trainer, const BatchSource *source,
                           const TrainerSettings *settings)
{
    Adam *adam = trainer->adam;
    TrainingProgress *progress = trainer->progress;
    TrainSettings *train = trainer->settings;
    TrainerOutcome outcome = TRAINER_FINISHED;
    /* <<Prepare the run: the log, the clock, the signals>> */
#line 615 "book/copy.nw"
    TrainerClock clock = {NULL, isatty(STDOUT_FILENO), seconds_now(), adam->step, 0, -1};
    /* <<Lock the checkpoint and catch SIGINT and SIGTERM, if checkpointing>> */
#line 569 "book/checkpoint.nw"
    if (settings->checkpoint_path) {
        clock.lock = lock_checkpoint(settings->checkpoint_path, trainer->message,
                                     sizeof trainer->message);
        if (clock.lock < 0) return TRAINER_FAILED;
        safetensors_remove_temporaries(settings->checkpoint_path);
        Safetensors probe;
        if (safetensors_can_write(settings->checkpoint_path, &probe)) {
            snprintf(trainer->message, sizeof trainer->message, "%s", probe.error);
            close(clock.lock);
            return TRAINER_FAILED;
        }
        catch_stop_signals();
    }
#line 617 "book/copy.nw"
    if (settings->log_path) {
        clock.log = fopen(settings->log_path, adam->step > 0 ? "a" : "w");
        if (clock.log == NULL) {
            snprintf(trainer->message, sizeof trainer->message, "%s: cannot create the log: %s",
                     settings->log_path, strerror(errno));
            if (clock.lock >= 0) close(clock.lock);
            return TRAINER_FAILED;
        }
        if (ftell(clock.log) == 0)
            fprintf(clock.log, "epoch,step,train_loss,validation_loss,learning_rate,seconds,"
                               "tokens_per_second\n");
    }
#line 532 "book/copy.nw"
    if (progress->batch >= source->batches) {   /* a checkpoint of another recipe */
        snprintf(trainer->message, sizeof trainer->message,
                 "the run is at batch %d of an epoch of %d batches", progress->batch,
                 source->batches);
        outcome = TRAINER_FAILED;
    } else if (source->start_epoch) {
        source->start_epoch(source->task, progress->epoch);
    }
    /* <<Apply a last epoch that a time budget brought forward>> */
#line 1188 "book/translate.nw"
    if (progress->last_epoch && train->cooldown > 0)
        train->cooldown_end = (long)progress->last_epoch * source->batches;
#line 541 "book/copy.nw"
    while (outcome == TRAINER_FINISHED && progress->epoch <= last_epoch(progress, settings)) {
        source->fill(source->task, trainer);
        const int parts = settings->accumulate > 1 ? settings->accumulate : 1;
        const int tokens = batch_tokens(trainer->batch, train->pad);
        const double loss = settings->parallel   /* several processes: many machines */
            ? parallel_step(trainer, settings->parallel, parts, tokens)
            : accumulated_step(trainer, parts, tokens);
        /* <<Stop if the loss is not finite>> */
#line 583 "book/copy.nw"
        if (!isfinite(loss)) {
            const bool kept = settings->checkpoint_path && access(settings->checkpoint_path, F_OK) == 0;
            snprintf(trainer->message, sizeof trainer->message, "step %ld: the loss is %s; stopping%s%s",
                     adam->step, isnan(loss) ? "NaN" : "infinite",
                     kept ? "; the last checkpoint is kept in "
                          : settings->checkpoint_path ? "; no checkpoint was saved yet" : "",
                     kept ? settings->checkpoint_path : "");
            outcome = TRAINER_FAILED;
            break;
        }
#line 549 "book/copy.nw"
        clock.tokens_seen += tokens;
        progress->loss_sum += loss, progress->batch++;
        if (clock.terminal) print_progress(trainer, source, settings, &clock);
        const bool epoch_done = progress->batch == source->batches;
        const bool out_of_time = settings->max_minutes
                                 && agree(settings->parallel, seconds_now() - clock.start
                                                              >= 60.0 * settings->max_minutes);
        /* a time budget ends with a validated model too */
        if ((epoch_done || out_of_time) && !end_epoch(trainer, source, &clock, settings)) {
            outcome = TRAINER_FAILED;
            break;
        }
        const bool impatient = epoch_done && settings->patience   /* early stopping */
                               && progress->epoch - trainer->best_epoch >= settings->patience;
        if (epoch_done) {
            progress->epoch++, progress->batch = 0, progress->loss_sum = 0.0;
            /* <<Fit the run's end to the time budget>> */
#line 1163 "book/translate.nw"
            if (settings->max_minutes && train->cooldown > 0
                && adam->step <= train->cooldown_end - train->cooldown) {   /* not cooling yet */
                double elapsed = seconds_now() - clock.start;
                if (settings->parallel) {
                    settings->parallel->sum(settings->parallel->context, NULL, 0, &elapsed, 1);
                    elapsed /= settings->parallel->size;
                }
                const int fits = budget_last_epoch(60.0 * settings->max_minutes, elapsed,
                                                   adam->step - clock.first_step, adam->step,
                                                   source->batches, settings->epochs,
                                                   (int)(train->cooldown / source->batches));
                if (fits != last_epoch(progress, settings)) {
                    progress->last_epoch = fits;
                    train->cooldown_end = (long)fits * source->batches;
                    printf("%sthe time budget holds %d epochs: the cool-down now ends with epoch %d\n",
                           clock.terminal ? "\n" : "", fits, fits);
                    fflush(stdout);
                }
            }
#line 566 "book/copy.nw"
            if (source->start_epoch && progress->epoch <= last_epoch(progress, settings))
                source->start_epoch(source->task, progress->epoch);
        }
        /* <<Decide whether to stop, saving a checkpoint when one is due>> */
#line 590 "book/checkpoint.nw"
        const bool stop = stop_signal || out_of_time || impatient
                          || (settings->stop_after && adam->step >= settings->stop_after);
        if (settings->checkpoint_path
            && (stop || epoch_done
                || (settings->checkpoint_every && adam->step % settings->checkpoint_every == 0))
            && save_checkpoint(trainer, settings)) {
            outcome = TRAINER_FAILED;
            break;
        }
        if (stop) {
            if (clock.terminal) putchar('\n');
            /* <<Say why the run stopped>> */
#line 613 "book/checkpoint.nw"
            const char *saved = settings->checkpoint_path ? settings->checkpoint_path : "nowhere";
            if (stop_signal) {
                snprintf(trainer->message, sizeof trainer->message,
                         "%s at step %ld; the checkpoint is %s",
                         stop_signal == SIGINT ? "interrupted" : "terminated", adam->step, saved);
                trainer->signal_number = stop_signal;
                outcome = TRAINER_SIGNALLED;
            } else {
                char patience_text[64];
                snprintf(patience_text, sizeof patience_text, "no better validation loss in %d epochs",
                         settings->patience);
                printf("stopped after step %ld (%s)%s%s\n", adam->step,
                       out_of_time ? "time budget" : impatient ? patience_text : "--stop-after",
                       settings->checkpoint_path ? "; saved to " : "", settings->checkpoint_path ? saved : "");
                if (!impatient && train->cooldown > 0 && adam->step < train->cooldown_end) {
                    printf("the cool-down was cut short at step %ld of %ld", adam->step, train->cooldown_end);
                    if (settings->checkpoint_path) printf(" (--resume %s finishes it)", saved);
                    putchar('\n');
                }
                outcome = TRAINER_STOPPED;
            }
#line 602 "book/checkpoint.nw"
            break;
        }
#line 570 "book/copy.nw"
    }
    /* <<Finish the run: close the log>> */
#line 742 "book/copy.nw"
    if (clock.terminal && (outcome == TRAINER_FINISHED || outcome == TRAINER_FAILED)) putchar('\n');
    if (clock.log && (ferror(clock.log) | fclose(clock.log)) && outcome != TRAINER_FAILED) {
        snprintf(trainer->message, sizeof trainer->message, "%s: cannot write the log: %s",
                 settings->log_path, strerror(errno));
        outcome = TRAINER_FAILED;
    }
    if (clock.lock >= 0) close(clock.lock);
#line 572 "book/copy.nw"
    return outcome;
}
#line 452 "book/checkpoint.nw"
const char *trainer_resume(Trainer *trainer, const char *path,
                           const char *const (*recipe)[2], int recipe_count)
{
    Safetensors file;
    const char *error = checkpoint_load(path, trainer->model, trainer->adam, trainer->progress,
                                        recipe, recipe_count, &file);
    char value[64];
    if (!error && safetensors_metadata(&file, "best_validation", value, sizeof value))
        trainer->best_validation = strtod(value, NULL);
    if (!error)
        trainer->best_epoch = safetensors_metadata(&file, "best_epoch", value, sizeof value)
                              ? (int)strtol(value, NULL, 10) : trainer->progress->epoch - 1;
    if (error) snprintf(trainer->message, sizeof trainer->message, "%s", error);
    safetensors_free(&file);
    return error ? trainer->message : NULL;
}
#line 1143 "book/translate.nw"
int budget_last_epoch(double budget, double elapsed, long steps_here, long step, int batches,
                      int epochs, int cooldown_epochs)
{
    if (steps_here <= 0 || batches <= 0) return epochs;   /* no pace measured yet */
    const double seconds_per_step = elapsed / (double)steps_here;
    const double steps_left = fmax(0.0, 0.98 * (budget - elapsed) / seconds_per_step);
    const double fits = floor(((double)step + steps_left) / batches);
    const long earliest = (step + batches - 1) / batches + cooldown_epochs;
    const double end = fmax(fits, (double)earliest);
    return end < epochs ? (int)end : epochs;
}
