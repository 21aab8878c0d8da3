#line 11 "book/training.nw"
/* Loss, optimizer and schedule. Generated from the book's chapters by notangle: edit the
   book, not this file. */
#ifndef TRAIN_H
#define TRAIN_H
#include <stdio.h>
#include "model.h"
#line 62 "book/training.nw"
/* dist[r] = the smoothed target distribution of targets[r] (all zero for a padding target);
   dist: [rows][vocab]. */
void label_smoothing_distribution(float *dist, const int *targets, int rows, int vocab,
                                  int pad, float smoothing);
/* KL(t || p) summed over rows, divided by the number of non-padding targets (returned in
   *tokens); writes d_logprobs = dL/dlogprobs. logprobs, d_logprobs: [rows][vocab]. */
double label_smoothing_loss(float *d_logprobs, const float *logprobs, const int *targets,
                            int rows, int vocab, int pad, float smoothing, int *tokens);
#line 201 "book/training.nw"
double learning_rate(long step, int d_model, double factor, long warmup);
#line 263 "book/training.nw"
typedef struct {
    double beta1, beta2, eps;
    long step;                  /* steps taken */
    FlatBuffer m, v;            /* first and second moments, laid out like the parameters */
} Adam;

void adam_init(Adam *adam, const FlatBuffer *parameters, double beta1, double beta2,
               double eps);
void adam_step(Adam *adam, FlatBuffer *parameters, const FlatBuffer *gradients, double lr);
void adam_free(Adam *adam);
#line 18 "book/training.nw"
#endif
