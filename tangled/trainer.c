/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "trainer.h"
/* <<trainer.c includes>> */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include "checkpoint.h"
#include <fcntl.h>

/* <<trainer.c types>> */
typedef struct {
    FILE *log;           /* the CSV log, or NULL */
    bool terminal;       /* standard output is a terminal */
    double start;        /* seconds_now() when the run started */
    long first_step;     /* the step it started from */
    long tokens_seen;    /* target tokens trained on since */
    int lock;            /* the checkpoint's lock (the checkpoint chapter), or -1 */
} RunState;

/* <<trainer.c checkpoint helpers>> */
/* Save the trainer's state with the run's recipe. */
static const char *save_checkpoint(Trainer *trainer, const RunSettings *run)
{
    Error scratch;
    const char *error = checkpoint_save(run->checkpoint_path, &trainer->model, &trainer->adam,
                                        &trainer->progress,
                                        (const char *const (*)[2])run->recipe.pairs,
                                        run->recipe.count, &scratch);
    return error ? error_set(&trainer->error, "%s", error) : NULL;
}

#ifndef TRANSFORMER_BROWSER
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
#else
static int stop_signal = 0;

static void catch_stop_signals(void)
{
}
#endif

#ifndef TRANSFORMER_BROWSER
/* Lock PATH.lock for this process: the descriptor, or -1 with a message in error. */
static int lock_checkpoint(const char *path, Error *error)
{
    char lock_path[4200];
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    const int fd = open(lock_path, O_RDWR | O_CREAT, 0666);
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0) return fd;
    const int failure = errno;
    if (fd >= 0) close(fd);
    if (fd >= 0 && (failure == EACCES || failure == EAGAIN))
        error_set(error, "%.2000s is in use by another run (%.2000s is locked)", path,
                  lock_path);
    else
        error_set(error, "%.4000s: cannot %s: %s", lock_path,
                  fd >= 0 ? "lock" : "create the lock file", strerror(failure));
    return -1;
}
#else
static int lock_checkpoint(const char *path, Error *error)
{
    error_set(error, "%.4000s: the browser's build writes no checkpoints", path);
    return -1;
}
#endif

/* Say why the run stopped: its outcome, with the trainer's error for a signal. */
static TrainerOutcome say_why_the_run_stopped(Trainer *trainer, const RunSettings *run,
                                              bool out_of_time, bool impatient)
{
    const long step = trainer->adam.step;
    const StepSettings *settings = &trainer->step;
    const char *saved = run->checkpoint_path ? run->checkpoint_path : "nowhere";
    if (stop_signal) {
        error_set(&trainer->error, "%s at step %ld; the checkpoint is %s",
                  stop_signal == SIGINT ? "interrupted" : "terminated", step, saved);
        trainer->signal_number = stop_signal;
        return TRAINER_SIGNALLED;
    }
    char patience_text[64];
    snprintf(patience_text, sizeof patience_text, "no better validation loss in %d epochs",
             run->patience);
    printf("stopped after step %ld (%s)%s%s\n", step,
           out_of_time ? "time budget" : impatient ? patience_text : "--stop-after",
           run->checkpoint_path ? "; saved to " : "", run->checkpoint_path ? saved : "");
    if (!impatient && settings->cooldown > 0 && step < settings->cooldown_end) {
        printf("the cool-down was cut short at step %ld of %ld", step, settings->cooldown_end);
        if (run->checkpoint_path) printf(" (--resume %s finishes it)", saved);
        putchar('\n');
    }
    return TRAINER_STOPPED;
}

/* <<trainer.c helpers>> */
/* Add the gradients of the rows [first, end) of the trainer's batch, trained in parts
   (at most that many, in order), each normalized by tokens, the batch's target tokens.
   Returns their summed loss. */
static double accumulate_rows(Trainer *trainer, int first, int end, int parts, int tokens)
{
    const Batch *whole = &trainer->batch;
    Model *model = &trainer->model;
    Rng *dropout_rng = &trainer->progress.dropout_rng;
    const Rng start = *dropout_rng;
    double loss = 0.0;
    for (int p = 0; p < parts; p++) {
        const int from = first + (int)((long)(end - first) * p / parts);
        const int to = first + (int)((long)(end - first) * (p + 1) / parts);
        if (to == from) continue;   /* more parts than rows */
        *dropout_rng = start;
        const Batch part = batch_rows(whole, from, to);
        const Dropout dropout = {dropout_rng, from, whole->batch - to};
        loss += train_accumulate(model, &part, &trainer->step, &dropout, tokens);
    }
    return loss;
}

static double accumulated_step(Trainer *trainer, int parts, int tokens)
{
    if (tokens == 0) return 0.0;   /* nothing to learn from: no step */
    model_zero_gradients(&trainer->model);
    const double loss = accumulate_rows(trainer, 0, trainer->batch.batch, parts, tokens);
    train_update(&trainer->model, &trainer->adam, &trainer->step);
    return loss / tokens;
}

/* Stop if the loss is not finite: a failure, with the message. */
static TrainerOutcome stop_at_bad_loss(Trainer *trainer, const RunSettings *run, double loss)
{
    const char *path = run->checkpoint_path;
    const bool kept = path && access(path, F_OK) == 0;
    error_set(&trainer->error, "step %ld: the loss is %s; stopping%s%s",
              trainer->adam.step, isnan(loss) ? "NaN" : "infinite",
              kept ? "; the last checkpoint is kept in "
                   : path ? "; no checkpoint was saved yet" : "",
              kept ? path : "");
    return TRAINER_FAILED;
}

/* Prepare the run: the log, the clock, the signals. False, with the trainer's error, when
   one of them fails. */
static bool prepare_run(Trainer *trainer, const BatchSource *source, const RunSettings *run,
                        RunState *state)
{
    *state = (RunState){NULL, isatty(STDOUT_FILENO), seconds_now(), trainer->adam.step, 0,
                            -1};
    /* <<Lock the checkpoint and catch SIGINT and SIGTERM, if checkpointing>> */
    if (run->checkpoint_path) {
        state->lock = lock_checkpoint(run->checkpoint_path, &trainer->error);
        if (state->lock < 0) return false;
        safetensors_remove_temporaries(run->checkpoint_path);
        Error probe;
        if (safetensors_can_write(run->checkpoint_path, &probe)) {
            error_set(&trainer->error, "%s", probe.message);
            close(state->lock);
            return false;
        }
        catch_stop_signals();
    }
    if (run->log_path) {
        state->log = fopen(run->log_path, trainer->adam.step > 0 ? "a" : "w");
        if (state->log == NULL) {
            error_set(&trainer->error, "%s: cannot create the log: %s",
                      run->log_path, strerror(errno));
            if (state->lock >= 0) close(state->lock);
            return false;
        }
        if (ftell(state->log) == 0)
            fprintf(state->log, "epoch,step,train_loss,validation_loss,learning_rate,seconds,"
                                "tokens_per_second,validation_batch_mean%s\n",
                    source->logs_bleu ? ",validation_bleu" : "");
    }
    return true;
}

/* The epoch the run ends with: the settings', unless a time budget brought it forward. */
static int last_epoch(const TrainingProgress *progress, const RunSettings *run)
{
    return progress->last_epoch ? progress->last_epoch : run->epochs;
}

static double current_rate(const Trainer *trainer)
{
    return scheduled_rate(trainer->adam.step - 1, trainer->model.config.d_model,
                          &trainer->step);
}

static void print_progress(const Trainer *trainer, const BatchSource *source,
                           const RunSettings *run, const RunState *state)
{
    const TrainingProgress *progress = &trainer->progress;
    const double elapsed = seconds_now() - state->start;
    const long done = trainer->adam.step - state->first_step;   /* by this process */
    const long left = (long)(last_epoch(progress, run) - progress->epoch) * source->batches
                      + source->batches - progress->batch;
    double eta = elapsed / done * left;
    if (run->max_minutes && 60.0 * run->max_minutes - elapsed < eta)
        eta = 60.0 * run->max_minutes - elapsed;   /* the time budget ends it first */
    printf("\repoch %d/%d  batch %d/%d  step %ld  loss %.4f  %.0f tokens/s  lr %.2e  "
           "ETA %.0f %s   ", progress->epoch, last_epoch(progress, run), progress->batch,
           source->batches, trainer->adam.step, progress->loss_sum / progress->batch,
           state->tokens_seen / elapsed, current_rate(trainer),
           eta < 120 ? eta : eta / 60, eta < 120 ? "s" : "min");
    fflush(stdout);
}

/* Validate, write the epoch's row of the log and its line, keep the epoch's model if the
   task keeps them, save it if it is the best; false, with the trainer's error, when a
   save failed. */
static bool end_epoch(Trainer *trainer, const BatchSource *source, const RunState *state,
                      const RunSettings *run)
{
    TrainingProgress *progress = &trainer->progress;
    const ValidationLoss held_out = source->validate(source->task, trainer);
    const double validation = held_out.per_token;
    const double elapsed = seconds_now() - state->start;
    const double loss = progress->loss_sum / progress->batch;
    if (state->log) {
        fprintf(state->log, "%d,%ld,%.6f,%.6f,%.6e,%.3f,%.0f,%.6f", progress->epoch,
                trainer->adam.step, loss, validation, current_rate(trainer), elapsed,
                state->tokens_seen / elapsed, held_out.batch_mean);
        if (source->logs_bleu) fprintf(state->log, ",%.2f", held_out.bleu);
        fputc('\n', state->log);
        if (fflush(state->log) != 0 || ferror(state->log)) {   /* a full disk, say */
            error_set(&trainer->error, "%s: cannot write the log: %s",
                      run->log_path, strerror(errno));
            return false;
        }
    }
    if (!state->terminal) {   /* one line per epoch, flushed: a log file shows progress too */
        printf("epoch %d  step %ld  loss %.4f  validation %.4f", progress->epoch,
               trainer->adam.step, loss, validation);
        if (source->logs_bleu) printf("  BLEU %.2f", held_out.bleu);
        printf("  %.0f tokens/s  lr %.2e  %.1f s\n", state->tokens_seen / elapsed,
               current_rate(trainer), elapsed);
        fflush(stdout);
    }
    const char *error = source->save_epoch
                        ? source->save_epoch(source->task, &trainer->model, progress->epoch)
                        : NULL;
    if (!error && validation < progress->best_validation) {
        progress->best_validation = validation, progress->best_epoch = progress->epoch;
        error = source->save_best ? source->save_best(source->task, &trainer->model) : NULL;
    }
    if (error) error_set(&trainer->error, "%s", error);
    return error == NULL;
}

/* Fit the run's end to the time budget (Getting to 41). */
static void fit_end_to_time_budget(Trainer *trainer, const BatchSource *source,
                                   const RunSettings *run, const RunState *state)
{
    /* <<Fit the run's end to the time budget>> */
    StepSettings *settings = &trainer->step;
    const long step = trainer->adam.step;
    if (!run->max_minutes || settings->cooldown <= 0
        || step > settings->cooldown_end - settings->cooldown)   /* no budget, or cooling already */
        return;
    double elapsed = seconds_now() - state->start;
    if (run->parallel) {
        run->parallel->sum(run->parallel->context, NULL, 0, &elapsed, 1);
        elapsed /= run->parallel->size;
    }
    const int cooldown_epochs = (int)(settings->cooldown / source->batches);
    const int fits = budget_last_epoch(60.0 * run->max_minutes, elapsed,
                                       step - state->first_step, step, source->batches,
                                       run->epochs, cooldown_epochs);
    if (fits != last_epoch(&trainer->progress, run)) {
        trainer->progress.last_epoch = fits;
        settings->cooldown_end = (long)fits * source->batches;
        printf("%sthe time budget holds %d epochs: the cool-down now ends with epoch %d\n",
               state->terminal ? "\n" : "", fits, fits);
        fflush(stdout);
    }
}

/* Begin the next epoch: its counts from zero, the run's end fitted to a time budget, and
   the source's start of it, if the run goes on. */
static void begin_next_epoch(Trainer *trainer, const BatchSource *source,
                             const RunSettings *run, const RunState *state)
{
    TrainingProgress *progress = &trainer->progress;
    progress->epoch++, progress->batch = 0, progress->loss_sum = 0.0;
    fit_end_to_time_budget(trainer, source, run, state);
    if (source->start_epoch && progress->epoch <= last_epoch(progress, run))
        source->start_epoch(source->task, progress->epoch);
}

/* Decide whether to stop, saving a checkpoint when one is due: TRAINER_FINISHED to go on,
   else the run's outcome (the checkpoint chapter). */
static TrainerOutcome decide_whether_to_stop(Trainer *trainer, const RunSettings *run,
                                             const RunState *state, bool epoch_done,
                                             bool out_of_time, bool impatient)
{
    /* <<Decide whether to stop, saving a checkpoint when one is due>> */
    const long step = trainer->adam.step;
    const bool stop = stop_signal || out_of_time || impatient
                      || (run->stop_after && step >= run->stop_after);
    if (run->checkpoint_path
        && (stop || epoch_done || (run->checkpoint_every && step % run->checkpoint_every == 0))
        && save_checkpoint(trainer, run))
        return TRAINER_FAILED;
    if (!stop) return TRAINER_FINISHED;
    if (state->terminal) putchar('\n');
    return say_why_the_run_stopped(trainer, run, out_of_time, impatient);
}

/* Finish the run: close the log and the checkpoint's lock. The outcome, a failure if the log
   could not be written. */
static TrainerOutcome finish_run(Trainer *trainer, const RunSettings *run,
                                 const RunState *state, TrainerOutcome outcome)
{
    if (state->terminal && (outcome == TRAINER_FINISHED || outcome == TRAINER_FAILED))
        putchar('\n');
    if (state->log && (ferror(state->log) | fclose(state->log)) && outcome != TRAINER_FAILED) {
        error_set(&trainer->error, "%s: cannot write the log: %s",
                  run->log_path, strerror(errno));
        outcome = TRAINER_FAILED;
    }
    if (state->lock >= 0) close(state->lock);
    return outcome;
}

static double parallel_step(Trainer *trainer, DataParallel *parallel, int parts, int tokens)
{
    const Batch *whole = &trainer->batch;
    Model *model = &trainer->model;
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
    train_update(model, &trainer->adam, &trainer->step);
    parallel->steps++;
    parallel->communication_seconds += update - reduce;
    parallel->compute_seconds += (reduce - start) + (seconds_now() - update);
    return loss / tokens;
}

/* One process: flag. Several: whether flag is true on any of them. */
static bool agree(DataParallel *parallel, bool flag)
{
    if (parallel == NULL) return flag;
    double count = flag;
    parallel->sum(parallel->context, NULL, 0, &count, 1);
    return count > 0;
}

/* <<trainer.c definitions>> */
void trainer_setup(Trainer *trainer, Config config, uint64_t seed, const BatchBounds *most,
                   const StepSettings *settings)
{
    *trainer = (Trainer){.progress = {.epoch = 1, .best_validation = INFINITY},
                         .step = *settings};
    model_init(&trainer->model, config);
    Rng init_rng;
    rng_seed(&init_rng, seed, 1);
    model_initialize_parameters(&trainer->model, &init_rng);
    model_prepare_tokens(&trainer->model, most->pairs, most->src_len, most->tgt_len - 1,
                         most->src_tokens, most->tgt_tokens);
    adam_init(&trainer->adam, &trainer->model.parameters, 0.9, 0.98, 1e-9);
    rng_seed(&trainer->progress.data_rng, seed, 2);
    rng_seed(&trainer->progress.dropout_rng, seed, 3);
    batch_init(&trainer->batch, most->pairs, most->src_len, most->tgt_len - 1);
    trainer->d_logprobs = xmalloc((size_t)most->tgt_tokens * config.tgt_vocab * sizeof(float));
}

void trainer_free(Trainer *trainer)
{
    free(trainer->d_logprobs);
    batch_free(&trainer->batch);
    adam_free(&trainer->adam);
    model_free(&trainer->model);
}

void recipe_add(Recipe *recipe, const char *key, const char *format, ...)
{
    va_list args, again;
    va_start(args, format);
    va_copy(again, args);
    const size_t size = (size_t)vsnprintf(NULL, 0, format, args) + 1;
    char *value = xmalloc(size);
    vsnprintf(value, size, format, again);
    va_end(again);
    va_end(args);
    recipe->pairs = xgrow(recipe->pairs, &recipe->capacity, (size_t)recipe->count + 1,
                          sizeof *recipe->pairs);
    recipe->pairs[recipe->count][0] = strcpy(xmalloc(strlen(key) + 1), key);
    recipe->pairs[recipe->count][1] = value;
    recipe->count++;
}

void recipe_free(Recipe *recipe)
{
    for (int i = 0; i < recipe->count; i++) free(recipe->pairs[i][0]), free(recipe->pairs[i][1]);
    free(recipe->pairs);
    *recipe = (Recipe){NULL, 0, 0};
}

TrainerOutcome trainer_run(Trainer *trainer, const BatchSource *source, const RunSettings *run)
{
    TrainingProgress *progress = &trainer->progress;
    RunState state;
    if (!prepare_run(trainer, source, run, &state)) return TRAINER_FAILED;
    TrainerOutcome outcome = TRAINER_FINISHED;
    if (progress->batch >= source->batches) {   /* a checkpoint of another recipe */
        error_set(&trainer->error, "the run is at batch %d of an epoch of %d batches",
                  progress->batch, source->batches);
        outcome = TRAINER_FAILED;
    } else if (source->start_epoch) {
        source->start_epoch(source->task, progress->epoch);
    }
    /* <<Apply a last epoch that a time budget brought forward>> */
    if (progress->last_epoch && trainer->step.cooldown > 0)
        trainer->step.cooldown_end = (long)progress->last_epoch * source->batches;
    const int parts = run->accumulate > 1 ? run->accumulate : 1;
    while (outcome == TRAINER_FINISHED && progress->epoch <= last_epoch(progress, run)) {
        source->fill(source->task, trainer);
        const int tokens = batch_target_tokens(&trainer->batch, trainer->step.pad);
        const double loss = run->parallel   /* several processes: many machines */
            ? parallel_step(trainer, run->parallel, parts, tokens)
            : accumulated_step(trainer, parts, tokens);
        if (!isfinite(loss)) {
            outcome = stop_at_bad_loss(trainer, run, loss);
            break;
        }
        state.tokens_seen += tokens;
        progress->loss_sum += loss, progress->batch++;
        if (state.terminal) print_progress(trainer, source, run, &state);
        const bool epoch_done = progress->batch == source->batches;
        const bool out_of_time = run->max_minutes
                                 && agree(run->parallel, seconds_now() - state.start
                                                         >= 60.0 * run->max_minutes);
        /* a time budget ends with a validated model too */
        if ((epoch_done || out_of_time) && !end_epoch(trainer, source, &state, run)) {
            outcome = TRAINER_FAILED;
            break;
        }
        const bool impatient = epoch_done && run->patience   /* early stopping */
                               && progress->epoch - progress->best_epoch >= run->patience;
        if (epoch_done) begin_next_epoch(trainer, source, run, &state);
        outcome = decide_whether_to_stop(trainer, run, &state, epoch_done, out_of_time,
                                         impatient);
    }
    return finish_run(trainer, run, &state, outcome);
}

const char *trainer_resume(Trainer *trainer, const char *path, const Recipe *recipe)
{
    Safetensors file;
    const char *error = checkpoint_load(path, &trainer->model, &trainer->adam,
                                        &trainer->progress,
                                        (const char *const (*)[2])recipe->pairs, recipe->count,
                                        &file);
    if (error) error_set(&trainer->error, "%s", error);
    safetensors_free(&file);
    return error ? trainer->error.message : NULL;
}

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
