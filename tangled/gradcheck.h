/* Finite-difference checks of the backward functions. Generated from the book's chapters
   by notangle: edit the book, not this file. */
#ifndef GRADCHECK_H
#define GRADCHECK_H
#include <stdio.h>
#include "model.h"

/* <<gradcheck.h declarations>> */
#define GRADCHECK_LAYER_BOUND 1e-2   /* bounds on e for one layer and for the model */
#define GRADCHECK_MODEL_BOUND 5e-2

typedef struct {
    FlatBuffer *vars;                    /* what the loss depends on */
    FlatBuffer *grads;                   /* analytic gradients, same layout */
    double (*loss)(void *context);       /* L from vars */
    void (*gradient)(void *context);     /* grads = dL/dvars */
    void *context;
} GradcheckProblem;

/* Check `samples` random entries of every view of problem->vars with step h; print one
   line per view to out (if not NULL); return the worst error e over all views. */
double gradcheck(const GradcheckProblem *problem, int samples, float h, Rng *rng, FILE *out);

/* Run the check of one layer ("linear", "softmax", "attention", "attention-unscaled",
   "cross-attention", "layernorm", "layernorm-annotated", "feed-forward", "embedding",
   "log-softmax") with
   step h; returns the worst error, or -1 for an unknown name. */
double gradcheck_layer(const char *name, int samples, float h, FILE *out);
extern const char *const gradcheck_layer_names[];

typedef struct {
    Model *model;
    const Batch *batch;                    /* the sources, targets and masks */
    int pad;
    bool dropout;                          /* draw (the same) dropout patterns each time */
    float *d_logprobs;                     /* scratch [B][T_tgt][tgt_vocab] */
} ModelProblem;

double model_problem_loss(void *context);
void model_problem_gradient(void *context);

/* Check model_backward on a small random model of the given variant (tying: 0 none, 1 the
   generator, 2 the generator and the source embedding); returns the worst e. */
double gradcheck_model(NormPlacement norm, LayerNormFormula formula, int tying, int samples,
                       float h, FILE *out);
#endif
