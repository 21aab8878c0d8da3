#line 22 "book/training.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "train.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#line 73 "book/training.nw"
void label_smoothing_distribution(float *dist, const int *targets, int rows, int vocab,
                                  int pad, float smoothing)
{
    ENSURE(vocab > 2 && smoothing >= 0.0f && smoothing < 1.0f, "smoothing %g over %d words",
           smoothing, vocab);
    const float spread = smoothing / (float)(vocab - 2);
    for (int r = 0; r < rows; r++) {
        float *t = dist + (size_t)r * vocab;
        if (targets[r] == pad) { memset(t, 0, (size_t)vocab * sizeof *t); continue; }
        for (int w = 0; w < vocab; w++) t[w] = spread;
        t[pad] = 0.0f;
        t[targets[r]] = 1.0f - smoothing;
    }
}
#line 93 "book/training.nw"
double label_smoothing_loss(float *d_logprobs, const float *logprobs, const int *targets,
                            int rows, int vocab, int pad, float smoothing, int *tokens)
{
    label_smoothing_distribution(d_logprobs, targets, rows, vocab, pad, smoothing);
    int n = 0;
    for (int r = 0; r < rows; r++) n += targets[r] != pad;
    *tokens = n;
    double sum = 0.0;
    for (size_t i = 0; i < (size_t)rows * vocab; i++) {
        const double t = d_logprobs[i];
        if (t > 0.0) sum += t * (log(t) - logprobs[i]);
        d_logprobs[i] = n > 0 ? (float)(-t / n) : 0.0f;
    }
    return n > 0 ? sum / n : 0.0;
}
#line 205 "book/training.nw"
double learning_rate(long step, int d_model, double factor, long warmup)
{
    const double s = step < 1 ? 1.0 : (double)step;
    return factor * pow(d_model, -0.5) * fmin(pow(s, -0.5), s * pow((double)warmup, -1.5));
}
#line 276 "book/training.nw"
void adam_init(Adam *adam, const FlatBuffer *parameters, double beta1, double beta2,
               double eps)
{
    memset(adam, 0, sizeof *adam);
    adam->beta1 = beta1, adam->beta2 = beta2, adam->eps = eps;
    flat_allocate_like(&adam->m, parameters);
    flat_allocate_like(&adam->v, parameters);
}

void adam_step(Adam *adam, FlatBuffer *parameters, const FlatBuffer *gradients, double lr)
{
    adam->step++;
    /* 1 - beta is taken in double, then rounded, as PyTorch does: 1.0f - 0.98f is not the
       float nearest to 0.02 */
    const float b1 = (float)adam->beta1, b2 = (float)adam->beta2;
    const float one_minus_b1 = (float)(1.0 - adam->beta1);
    const float one_minus_b2 = (float)(1.0 - adam->beta2);
    const double correction1 = 1.0 - pow(adam->beta1, (double)adam->step);
    const double correction2 = 1.0 - pow(adam->beta2, (double)adam->step);
    const float step_size = (float)(lr / correction1);
    const float root2 = (float)sqrt(correction2), eps = (float)adam->eps;
    float *theta = parameters->data, *m = adam->m.data, *v = adam->v.data;
    const float *g = gradients->data;
    for (size_t i = 0; i < parameters->total; i++) {
        m[i] = b1 * m[i] + one_minus_b1 * g[i];
        v[i] = b2 * v[i] + one_minus_b2 * g[i] * g[i];
        theta[i] -= step_size * m[i] / (sqrtf(v[i]) / root2 + eps);
    }
}

void adam_free(Adam *adam)
{
    flat_free(&adam->m);
    flat_free(&adam->v);
}
