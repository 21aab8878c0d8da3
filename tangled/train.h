/* Loss, optimizer and schedule. Generated from the book's chapters by notangle: edit the
   book, not this file. */
#ifndef TRAIN_H
#define TRAIN_H
#include <stdio.h>
#include "model.h"

/* <<train.h declarations>> */
/* dist[r] = the smoothed target distribution of targets[r] (all zero for a padding target);
   dist: [rows][vocab]. */
void label_smoothing_distribution(float *dist, const int *targets, int rows, int vocab,
                                  int pad, float smoothing);
/* KL(t || p) summed over rows, divided by the number of non-padding targets (returned in
   *tokens); writes d_logprobs = dL/dlogprobs. logprobs, d_logprobs: [rows][vocab]. */
double label_smoothing_loss(float *d_logprobs, const float *logprobs, const int *targets,
                            int rows, int vocab, int pad, float smoothing, int *tokens);

double learning_rate(long step, int d_model, double factor, long warmup);

typedef struct {
    double beta1, beta2, eps;
    long step;                  /* steps taken */
    FlatBuffer m, v;            /* first and second moments, laid out like the parameters */
} Adam;

void adam_init(Adam *adam, const FlatBuffer *parameters, double beta1, double beta2,
               double eps);
void adam_step(Adam *adam, FlatBuffer *parameters, const FlatBuffer *gradients, double lr);
void adam_free(Adam *adam);

/* data[b][0] = 1 (the start symbol), data[b][t] uniform in 1..vocab-1 for t > 0;
   data: [batch][len]. */
void copy_task_batch(int *data, int batch, int len, int vocab, Rng *rng);

typedef enum {
    SCHEDULE_WARMUP,         /* rate(s) of the schedule chapter: warm-up, then 1/sqrt(s) */
    SCHEDULE_CONSTANT        /* the same rate for every update */
} Schedule;

typedef struct {
    float smoothing;         /* label smoothing epsilon */
    Schedule schedule;
    double factor;           /* SCHEDULE_WARMUP's f, times the optimizer's base rate */
    long warmup;             /* ... and its warm-up steps */
    double rate;             /* SCHEDULE_CONSTANT's rate (0 with the other) */
    int pad;
    long cooldown_end, cooldown;   /* if cooldown > 0, the rate falls linearly to 0 over the
                                      cooldown steps before step cooldown_end (Getting to 41) */
} StepSettings;

/* One update on the batch; returns the loss per target token. */
double train_step(Model *model, Adam *adam, const Batch *batch,
                  const StepSettings *settings, Rng *dropout_rng);
/* The loss per target token without dropout or update. */
double evaluate_batch(Model *model, const Batch *batch, const StepSettings *settings,
                      float *d_logprobs);

/* Add the gradients of one part of a batch, its loss normalized by norm target tokens;
   returns the part's summed loss (per-token loss times its tokens). Gradients are not
   zeroed: call model_zero_gradients before the first part. */
double train_accumulate(Model *model, const Batch *part, const StepSettings *settings,
                        const Dropout *dropout, double norm);
/* One Adam update with the scheduled rate, from the accumulated gradients. */
void train_update(Model *model, Adam *adam, const StepSettings *settings);

/* The loss of label_smoothing_loss (returned: per token; *tokens: the rows that are not
   padding) and, in d_logits [rows][vocab], the gradient of (its sum over the tokens) / norm
   with respect to the logits whose log-softmax is logprobs [rows][vocab]. */
double label_smoothing_logits_gradient(float *d_logits, const float *logprobs,
                                       const int *targets, int rows, int vocab, int pad,
                                       float smoothing, double norm, int *tokens);

typedef struct {
    int epoch;          /* the epoch under way, counted from 1 */
    int batch;          /* batches of it already trained */
    double loss_sum;    /* their summed losses per token */
    Rng data_rng;       /* draws (or shuffles) the training data */
    Rng dropout_rng;    /* draws the dropout masks */
    int last_epoch;     /* the run's last epoch if a time budget brought it forward
                           (Getting to 41); 0: the settings' */
    double best_validation;   /* lowest validation loss so far; INFINITY at first */
    int best_epoch;           /* the epoch of best_validation; 0 before the first */
} TrainingProgress;

/* The rate of update step by the settings' schedule (learning_rate or their constant
   rate), times the cool-down's factor if the settings have one. */
double scheduled_rate(long step, int d_model, const StepSettings *settings);

enum { CALIBRATION_MAX_BINS = 100 };

typedef struct {
    int bins;                                  /* B, of width 1/B */
    long count[CALIBRATION_MAX_BINS];          /* n_b: predictions of confidence in bin b */
    double confidence[CALIBRATION_MAX_BINS];   /* their summed confidences */
    long correct[CALIBRATION_MAX_BINS];        /* those whose most probable word is right */
    double log_likelihood;                     /* summed log-probabilities of the right words */
} Calibration;

/* An empty table of BINS bins, 1 <= BINS <= CALIBRATION_MAX_BINS. */
Calibration calibration_start(int bins);
/* Add the predictions of ROWS positions: logprobs [rows][vocab], target [rows]; a position
   whose target is pad is not a prediction. */
void calibration_add(Calibration *c, const float *logprobs, const int *target, int rows,
                     int vocab, int pad);
long calibration_predictions(const Calibration *c);
double calibration_error(const Calibration *c);   /* the expected calibration error */

/* The kernels of the loss, in two versions (loss_kernels[compute.kernel_set]). */
typedef struct {
    double (*smoothed_loss)(float *d_logprobs, const float *logprobs, const int *targets,
                            int rows, int vocab, int pad, float smoothing, int *tokens);
    double (*smoothed_logits_gradient)(float *d_logits, const float *logprobs,
                                       const int *targets, int rows, int vocab, int pad,
                                       float smoothing, double norm, int *tokens);
} LossKernels;
extern const LossKernels loss_kernels[KERNEL_SETS];

/* label_smoothing_loss, computed in closed form per row. */
double label_smoothing_loss_fast(float *d_logprobs, const float *logprobs,
                                 const int *targets, int rows, int vocab, int pad,
                                 float smoothing, int *tokens);

/* label_smoothing_logits_gradient with the loss of label_smoothing_loss_fast, in one pass. */
double label_smoothing_logits_gradient_fast(float *d_logits, const float *logprobs,
                                            const int *targets, int rows, int vocab, int pad,
                                            float smoothing, double norm, int *tokens);
#endif
