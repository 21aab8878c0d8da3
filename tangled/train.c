/* Training: loss, schedule, Adam, batches -- generated from the book: edit the book. */
#include "train.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* <<train.c definitions>> */
void label_smoothing_distribution(float *dist, const int *targets, int rows, int vocab,
                                  int pad, float smoothing)
{
    ENSURE((vocab > 2 || smoothing == 0.0f) && smoothing >= 0.0f && smoothing < 1.0f,
           "smoothing %g over %d words", smoothing, vocab);
    ENSURE(pad >= 0 && pad < vocab, "padding token %d of %d", pad, vocab);
    const float spread = smoothing > 0.0f ? smoothing / (float)(vocab - 2) : 0.0f;
    for (int r = 0; r < rows; r++) {
        float *t = dist + (size_t)r * vocab;
        if (targets[r] == pad) { memset(t, 0, (size_t)vocab * sizeof *t); continue; }
        ENSURE(targets[r] >= 0 && targets[r] < vocab, "target %d of %d", targets[r], vocab);
        for (int w = 0; w < vocab; w++) t[w] = spread;
        t[pad] = 0.0f;
        t[targets[r]] = 1.0f - smoothing;
    }
}

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

double learning_rate(long step, int d_model, double factor, long warmup)
{
    const double s = step < 1 ? 1.0 : (double)step;
    return factor * pow(d_model, -0.5) * fmin(pow(s, -0.5), s * pow((double)warmup, -1.5));
}

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
    bf16_weights_forget();   /* the bfloat16 copy of the speed chapter is stale */
    PARALLEL_FOR(parameters->total)
    for (size_t i = 0; i < parameters->total; i++) {
        m[i] = b1 * m[i] + one_minus_b1 * g[i];
        v[i] = b2 * v[i] + one_minus_b2 * g[i] * g[i];
        theta[i] -= step_size * (m[i] / (sqrtf(v[i]) / root2 + eps));
    }
}

void adam_free(Adam *adam)
{
    flat_free(&adam->m);
    flat_free(&adam->v);
}

void copy_task_batch(int *data, int batch, int len, int vocab, Rng *rng)
{
    for (int b = 0; b < batch; b++) {
        data[(size_t)b * len] = 1;
        for (int t = 1; t < len; t++)
            data[(size_t)b * len + t] = 1 + (int)(rng_next(rng) % (uint32_t)(vocab - 1));
    }
}

double train_step(Model *model, Adam *adam, const Batch *batch,
                  const StepSettings *settings, Rng *dropout_rng)
{
    const int tokens = batch_target_tokens(batch, settings->pad);
    if (tokens == 0) return 0.0;   /* nothing to learn from: no step, no momentum */
    model_zero_gradients(model);
    const Dropout dropout = {dropout_rng, 0, 0};
    const double loss = train_accumulate(model, batch, settings, &dropout, tokens);
    train_update(model, adam, settings);
    return loss / tokens;
}

double evaluate_batch(Model *model, const Batch *batch, const StepSettings *settings,
                      float *d_logprobs)
{
    const float *logprobs = model_forward(model, batch, NULL);
    int tokens, rows = batch->batch * batch->tgt_len;
    return loss_kernels[compute.kernel_set].smoothed_loss(d_logprobs, logprobs, batch->tgt_y,
                                                          rows, model->config.tgt_vocab,
                                                          settings->pad, settings->smoothing,
                                                          &tokens);
}

double train_accumulate(Model *model, const Batch *part, const StepSettings *settings,
                        const Dropout *dropout, double norm)
{
    const Config *c = &model->config;
    const int rows = part->batch * part->tgt_len;
    const float *logprobs = model_forward(model, part, dropout);
    int tokens;
    const double loss = loss_kernels[compute.kernel_set].smoothed_logits_gradient(
        model_logits_gradient(model), logprobs, part->tgt_y, rows, c->tgt_vocab, settings->pad,
        settings->smoothing, norm, &tokens);
    if (tokens == 0) return 0.0;
    model_backward_from_logits(model, part, dropout != NULL);
    return loss * tokens;
}

void train_update(Model *model, Adam *adam, const StepSettings *settings)
{
    adam_step(adam, &model->parameters, &model->gradients,
              scheduled_rate(adam->step, model->config.d_model, settings));
}

double label_smoothing_logits_gradient(float *d_logits, const float *logprobs,
                                       const int *targets, int rows, int vocab, int pad,
                                       float smoothing, double norm, int *tokens)
{
    const double loss = label_smoothing_loss(d_logits, logprobs, targets, rows, vocab, pad,
                                             smoothing, tokens);
    const float rescale = (float)(*tokens / norm);
    for (size_t i = 0; i < (size_t)rows * vocab; i++) d_logits[i] *= rescale;
    log_softmax_backward(d_logits, d_logits, logprobs, rows, vocab);
    return loss;
}

double scheduled_rate(long step, int d_model, const StepSettings *settings)
{
    double rate = 0.0;
    switch (settings->schedule) {
    case SCHEDULE_WARMUP:
        rate = learning_rate(step, d_model, settings->factor, settings->warmup);
        break;
    case SCHEDULE_CONSTANT:
        rate = settings->rate;
        break;
    }
    if (settings->cooldown <= 0) return rate;
    const double left = (double)(settings->cooldown_end - step) / (double)settings->cooldown;
    return rate * fmax(0.0, fmin(1.0, left));
}

Calibration calibration_start(int bins)
{
    return (Calibration){.bins = bins};
}

void calibration_add(Calibration *c, const float *logprobs, const int *target, int rows,
                     int vocab, int pad)
{
    for (int r = 0; r < rows; r++) {
        if (target[r] == pad) continue;
        const float *row = logprobs + (size_t)r * vocab;
        int best = 0;
        for (int k = 1; k < vocab; k++)
            if (row[k] > row[best]) best = k;
        const double confidence = exp(row[best]);
        int bin = (int)(confidence * c->bins);
        if (bin >= c->bins) bin = c->bins - 1;
        c->count[bin]++, c->confidence[bin] += confidence;
        c->correct[bin] += best == target[r];
        c->log_likelihood += row[target[r]];
    }
}

long calibration_predictions(const Calibration *c)
{
    long n = 0;
    for (int b = 0; b < c->bins; b++) n += c->count[b];
    return n;
}

double calibration_error(const Calibration *c)
{
    const double n = (double)calibration_predictions(c);
    double error = 0.0;
    for (int b = 0; b < c->bins; b++)
        if (c->count[b])   /* n_b/N |acc_b - conf_b| = |correct_b - confidence_b| / N */
            error += fabs((double)c->correct[b] - c->confidence[b]) / n;
    return error;
}

const LossKernels loss_kernels[KERNEL_SETS] = {
    [KERNELS_FAST] = {
        .smoothed_loss = label_smoothing_loss_fast,
        .smoothed_logits_gradient = label_smoothing_logits_gradient_fast,
    },
    [KERNELS_REFERENCE] = {
        .smoothed_loss = label_smoothing_loss,
        .smoothed_logits_gradient = label_smoothing_logits_gradient,
    },
};

static double sum_of_floats(const float *x, int n)
{
    double partial[4] = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int lane = 0; lane < 4; lane++) partial[lane] += x[i + lane];
    for (; i < n; i++) partial[0] += x[i];
    return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

typedef enum { OF_LOGPROBS, OF_LOGITS } GradientOf;   /* the gradient a loss writes */

static double smoothed_loss(float *gradient, GradientOf of, const float *logprobs,
                            const int *targets, int rows, int vocab, int pad,
                            float smoothing, double norm, int *tokens)
{
    ENSURE((vocab > 2 || smoothing == 0.0f) && smoothing >= 0.0f && smoothing < 1.0f,
           "smoothing %g over %d words", smoothing, vocab);
    ENSURE(pad >= 0 && pad < vocab, "padding token %d of %d", pad, vocab);
    int n = 0;
    for (int r = 0; r < rows; r++) n += targets[r] != pad;
    *tokens = n;
    const double spread = smoothing > 0.0f ? smoothing / (float)(vocab - 2) : 0.0f;
    const double confidence = 1.0f - smoothing;
    /* <<Set the per-row constants of the closed form>> */
    const double divisor = of == OF_LOGITS ? norm : n;
    const float per_token = n > 0 ? (float)(1.0 / divisor) : 0.0f;
    const float spread_share = n > 0 ? (float)(spread / divisor) : 0.0f;
    const float confidence_share = n > 0 ? (float)(confidence / divisor) : 0.0f;
    const double row_constant = confidence * log(confidence)
                              + (spread > 0.0 ? spread * (vocab - 2) * log(spread) : 0.0);
    double block_loss[PARALLEL_BLOCKS];
    PARALLEL_FOR((size_t)rows * vocab)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        block_loss[block] = 0.0;
        for (int r = block_start(block, rows); r < block_start(block + 1, rows); r++) {
            float *g = gradient + (size_t)r * vocab;
            /* <<Add row r's loss to its block's; for padding, clear its gradient g and go on>> */
            const float *y = logprobs + (size_t)r * vocab;
            const int target = targets[r];
            if (target == pad) { memset(g, 0, (size_t)vocab * sizeof *g); continue; }
            ENSURE(target >= 0 && target < vocab, "target %d of %d", target, vocab);
            double loss = row_constant - confidence * y[target];
            if (spread > 0.0) {   /* words with t = 0 are left out: their y may be -infinity */
                const int low = pad < target ? pad : target, high = pad < target ? target : pad;
                loss -= spread * (sum_of_floats(y, low) + sum_of_floats(y + low + 1, high - low - 1)
                                  + sum_of_floats(y + high + 1, vocab - high - 1));
            }
            block_loss[block] += loss;
            if (of == OF_LOGITS) {
                /* <<Write row r's probabilities minus its smoothed target, over norm>> */
                #pragma omp simd
                for (int w = 0; w < vocab; w++) g[w] = vector_expf(y[w]) * per_token - spread_share;
                g[pad] = vector_expf(y[pad]) * per_token;
                g[target] = vector_expf(y[target]) * per_token - confidence_share;
            } else {
                /* <<Write row r's smoothed target, negated and over its tokens>> */
                for (int w = 0; w < vocab; w++) g[w] = -spread_share;
                g[pad] = 0.0f;
                g[target] = -confidence_share;
            }
        }
    }
    double sum = 0.0;
    for (int block = 0; block < PARALLEL_BLOCKS; block++) sum += block_loss[block];
    return n > 0 ? sum / n : 0.0;
}

double label_smoothing_loss_fast(float *d_logprobs, const float *logprobs,
                                 const int *targets, int rows, int vocab, int pad,
                                 float smoothing, int *tokens)
{
    return smoothed_loss(d_logprobs, OF_LOGPROBS, logprobs, targets, rows, vocab, pad,
                         smoothing, 0.0, tokens);
}

double label_smoothing_logits_gradient_fast(float *d_logits, const float *logprobs,
                                            const int *targets, int rows, int vocab, int pad,
                                            float smoothing, double norm, int *tokens)
{
    ENSURE(norm > 0.0, "normalizer %g", norm);
    return smoothed_loss(d_logits, OF_LOGITS, logprobs, targets, rows, vocab, pad, smoothing,
                         norm, tokens);
}
