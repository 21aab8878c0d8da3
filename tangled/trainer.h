/* The training loop of every task: steps, progress line, CSV log, validation, best model,
   checkpoints, signals. Generated from the book's chapters by notangle: edit the book, not
   this file. */
#ifndef TRAINER_H
#define TRAINER_H
#include "train.h"

/* <<trainer.h declarations>> */
typedef struct {
    Model model;
    Adam adam;
    TrainingProgress progress;
    StepSettings step;               /* the loss and the schedule; a time budget may move
                                        the cool-down's end (Getting to 41) */
    Batch batch;                     /* holds each step's batch */
    float *d_logprobs;               /* [batch tokens][tgt_vocab]: evaluate_batch's scratch */
    Error error;                     /* why trainer_run stopped early */
    int signal_number;               /* the signal that stopped it (the checkpoint chapter) */
} Trainer;

/* A trainer at the start of a run: a model of config with its weights drawn from seed, its
   optimizer, progress at epoch 1 with the data and dropout streams of seed, settings, and
   buffers for batches within most. Free it with trainer_free. */
void trainer_setup(Trainer *trainer, Config config, uint64_t seed, const BatchBounds *most,
                   const StepSettings *settings);
void trainer_free(Trainer *trainer);

typedef struct {
    double per_token;    /* the summed loss over the summed target tokens */
    double batch_mean;   /* the mean of the batches' losses per token */
    double bleu;         /* BLEU of the task's own translations, or NAN: not measured */
} ValidationLoss;

typedef struct {
    void *task;
    int batches;   /* per epoch */
    /* Begin epoch (counted from 1); NULL when there is nothing to do. */
    void (*start_epoch)(void *task, int epoch);
    /* Fill trainer->batch with the next training batch. */
    void (*fill)(void *task, Trainer *trainer);
    /* The loss on held-out data, without dropout. */
    ValidationLoss (*validate)(void *task, Trainer *trainer);
    /* Save the model, the best so far: NULL, or a one-line error. NULL: keep no model. */
    const char *(*save_best)(void *task, const Model *model);
    /* Keep the model of the epoch just validated, best or not (for averaging the last
       few): NULL, or a one-line error. NULL: keep none. */
    const char *(*save_epoch)(void *task, const Model *model, int epoch);
    bool logs_bleu;   /* validate measures BLEU too: a last column of the log */
} BatchSource;

/* The recipe of a run: what a resumed run must repeat, as keys and their values' text. */
typedef struct {
    char *(*pairs)[2];   /* [count]: key, value */
    int count;
    size_t capacity;     /* pairs allocated, for xgrow */
} Recipe;

/* Append key with the value that format makes of the rest, as printf would. */
void recipe_add(Recipe *recipe, const char *key, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void recipe_free(Recipe *recipe);

typedef struct {
    int epochs;                 /* train until the end of this epoch */
    long stop_after;            /* stop after this step; 0: no limit */
    int max_minutes;            /* stop after this much time; 0: no limit */
    int patience;               /* stop after this many epochs without a better
                                   validation loss; 0: never */
    int accumulate;             /* parts a batch is trained in, one update; 0 or 1: one */
    const char *log_path;       /* the CSV log; NULL: none */
    const char *checkpoint_path;             /* the checkpoint chapter */
    long checkpoint_every;
    Recipe recipe;                           /* freed by the command: recipe_free */
    struct DataParallel *parallel;           /* many machines; NULL: one process */
} RunSettings;

typedef enum {
    TRAINER_FINISHED,   /* every epoch done */
    TRAINER_STOPPED,    /* at stop_after, max_minutes or patience, as asked */
    TRAINER_SIGNALLED,  /* by SIGINT or SIGTERM: exit with 128 + stop_signal */
    TRAINER_FAILED      /* message says why */
} TrainerOutcome;

TrainerOutcome trainer_run(Trainer *trainer, const BatchSource *source,
                           const RunSettings *run);

/* Load the checkpoint at path (which must match recipe) into the trainer's model, optimizer
   and progress. NULL, or a one-line error. */
const char *trainer_resume(Trainer *trainer, const char *path, const Recipe *recipe);

/* The last epoch that fits a time budget of budget seconds, elapsed of them spent on
   steps_here updates, at the end of an epoch of batches updates (step of them done in
   all): at most epochs, and late enough for the cool-down's cooldown_epochs to start now
   or later. */
int budget_last_epoch(double budget, double elapsed, long steps_here, long step, int batches,
                      int epochs, int cooldown_epochs);

/* Several processes training one model (the chapter on many machines). */
typedef struct DataParallel {
    int rank, size;      /* this process, and how many there are */
    void *context;       /* the communication's own state */
    /* Replace floats[0..n) and doubles[0..m) by their sums over all processes; every
       process gets the same sums. */
    void (*sum)(void *context, float *floats, size_t n, double *doubles, int m);
    long steps;                           /* steps taken together */
    double compute_seconds;               /* in them: forward, backward and update */
    double communication_seconds;         /* in sum, waiting for the others included */
} DataParallel;
#endif
