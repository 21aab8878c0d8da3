/* Finite-difference checks of every backward function, layer by layer and for the whole
   model -- generated from the book's chapters by notangle: edit the book, not this file. */
#include "gradcheck.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* <<gradcheck.c definitions>> */
double gradcheck(const GradcheckProblem *problem, int samples, float h, Rng *rng, FILE *out)
{
    memset(problem->grads->data, 0, problem->grads->total * sizeof(float));
    problem->gradient(problem->context);
    const double at = problem->loss(problem->context);
    double worst = 0.0;
    for (int v = 0; v < problem->vars->count; v++) {
        const TensorView *view = &problem->vars->views[v];
        float *x = flat_view(problem->vars, v);
        const float *g = flat_view(problem->grads, v);
        double scale = 0.0, error = 0.0;
        for (size_t j = 0; j < view->size; j++) scale = fmax(scale, fabs(g[j]));
        scale = fmax(scale, 1e-2);   /* below this, compare in absolute terms */
        for (int s = 0; s < samples; s++) {
            /* <<Compare one random entry's central difference with its gradient>> */
            const size_t j = rng_next(rng) % view->size;
            const float saved = x[j];
            x[j] = saved + h;
            const double plus = problem->loss(problem->context);
            x[j] = saved - h;
            const double minus = problem->loss(problem->context);
            x[j] = saved;
            const double central = (plus - minus) / (2.0 * h);
            const double forward = (plus - at) / h, backward = (at - minus) / h;
            double miss = fabs(central - g[j]);
            miss = fmin(miss, fmin(fabs(forward - g[j]), fabs(backward - g[j])));   /* at a kink */
            error = fmax(error, miss / scale);
        }
        if (out)
            fprintf(out, "  %-44s e = %.2e  (max |grad| %.3g)\n", view->name, error, scale);
        worst = fmax(worst, error);
    }
    return worst;
}

typedef struct {
    const char *layer;
    FlatBuffer vars, grads;
    float *w;                     /* output weights = dL/dy, [outputs] */
    float *out, *scratch;         /* forward output and saved values */
    int n, d, d2, len_q, len_k, heads;
    int tokens[16];
    uint8_t keep[64];
} LayerProblem;

/* The problem's variable i, and its gradient. */
static float *xs(LayerProblem *p, int i) { return flat_view(&p->vars, i); }
static float *gs(LayerProblem *p, int i) { return flat_view(&p->grads, i); }

static double weighted_sum(const float *w, const float *y, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)w[i] * y[i];
    return sum;
}

/* <<Run a linear layer>> */
/* vars: in [n][d], weight [d2][d], bias [d2] */
static double run_linear_layer(LayerProblem *p, bool backward)
{
    linear_forward(p->out, xs(p, 0), xs(p, 1), xs(p, 2), p->n, p->d, p->d2);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d2);
    linear_backward(gs(p, 0), gs(p, 1), gs(p, 2), p->w, xs(p, 0), xs(p, 1), p->n,
                    p->d, p->d2);
    return 0;
}

/* <<Run a softmax>> */
/* vars: scores [n][d] */
static double run_softmax(LayerProblem *p, bool backward)
{
    memcpy(p->scratch, xs(p, 0), (size_t)p->n * p->d * sizeof(float));
    mask_scores(p->scratch, p->keep, (size_t)p->d, p->n, p->d);
    softmax_rows(p->out, p->scratch, p->n, p->d);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d);
    softmax_rows_backward(gs(p, 0), p->w, p->out, p->n, p->d);
    return 0;
}

/* <<Run an attention layer>> */
/* attention, attention-unscaled, cross-attention; vars: query_in, memory_in, the weights */
static double run_attention_layer(LayerProblem *p, bool backward)
{
    const char *name = p->layer;
    const bool cross = name[0] == 'c';
    const int d = p->d, rows_q = p->n * p->len_q, rows_k = p->n * p->len_k;
    const AttentionWeights w = {xs(p, 2), xs(p, 3), xs(p, 4), xs(p, 5),
                                xs(p, 6), xs(p, 7), xs(p, 8), xs(p, 9)};
    const AttentionWeights d_w = {gs(p, 2), gs(p, 3), gs(p, 4), gs(p, 5),
                                  gs(p, 6), gs(p, 7), gs(p, 8), gs(p, 9)};
    float *q = p->scratch, *k = q + (size_t)rows_q * d, *v = k + (size_t)rows_k * d;
    float *probs = v + (size_t)rows_k * d;
    float *dropped = probs + (size_t)p->n * p->heads * p->len_q * p->len_k;
    float *context = dropped + (size_t)p->n * p->heads * p->len_q * p->len_k;
    float *keep_scale = context + (size_t)rows_q * d;
    const AttentionSaved saved = {q, k, v, probs, dropped, context, cross ? keep_scale : NULL};
    const Mask mask = {p->keep, cross ? (size_t)p->len_k : (size_t)p->len_q * p->len_k,
                       cross ? 0 : (size_t)p->len_k};
    const AttentionShape shape = {p->n, p->len_q, p->len_k, d, p->heads,
                                  strstr(name, "unscaled") != NULL};
    const float *memory = cross ? xs(p, 1) : xs(p, 0);
    attention_forward(p->out, &w, &saved, xs(p, 0), memory, &mask, &shape);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)rows_q * d);
    float *s = keep_scale + (size_t)p->n * p->heads * p->len_q * p->len_k;
    const AttentionScratch scratch = {s, s + (size_t)rows_q * d, s + 2 * (size_t)rows_q * d,
                                      s + 2 * (size_t)rows_q * d + (size_t)rows_k * d,
                                      s + 2 * (size_t)rows_q * d + 2 * (size_t)rows_k * d};
    attention_backward(gs(p, 0), cross ? gs(p, 1) : gs(p, 0), &d_w, &scratch, p->w, &w,
                       &saved, xs(p, 0), memory, &shape);
    return 0;
}

/* <<Run a layer norm>> */
/* layernorm, layernorm-annotated; vars: in [n][d], gain [d], bias [d] */
static double run_layer_norm(LayerProblem *p, bool backward)
{
    LayerNormFormula formula = p->layer[9] ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD;
    const LayerNormWeights w = {xs(p, 1), xs(p, 2)}, d_w = {gs(p, 1), gs(p, 2)};
    const LayerNormSaved saved = {p->scratch, p->scratch + p->n};   /* mean, rstd */
    layernorm_forward(p->out, &w, &saved, xs(p, 0), p->n, p->d, formula, 1e-6f);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d);
    layernorm_backward(gs(p, 0), &d_w, p->w, &w, &saved, xs(p, 0), p->n, p->d, formula,
                       1e-6f);
    return 0;
}

/* <<Run a feed-forward network>> */
/* vars: in, w_1, b_1, w_2, b_2 */
static double run_feed_forward_network(LayerProblem *p, bool backward)
{
    float *hidden = p->scratch, *keep_scale = hidden + (size_t)p->n * p->d2;
    float *d_hidden = keep_scale + (size_t)p->n * p->d2;
    const FeedForwardWeights w = {xs(p, 1), xs(p, 2), xs(p, 3), xs(p, 4)};
    const FeedForwardWeights d_w = {gs(p, 1), gs(p, 2), gs(p, 3), gs(p, 4)};
    const FeedForwardSaved saved = {hidden, keep_scale};
    feed_forward_forward(p->out, &w, &saved, xs(p, 0), p->n, p->d, p->d2);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d);
    feed_forward_backward(gs(p, 0), &d_w, d_hidden, p->w, &w, &saved, xs(p, 0), p->n, p->d,
                          p->d2);
    return 0;
}

/* <<Run an embedding>> */
/* vars: table [d2][d]; tokens repeat */
static double run_embedding(LayerProblem *p, bool backward)
{
    const float scale = sqrtf((float)p->d);
    embedding_forward(p->out, p->tokens, xs(p, 0), p->n, p->d, p->d2, scale);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d);
    embedding_backward(gs(p, 0), p->w, p->tokens, p->n, p->d, scale);
    return 0;
}

/* <<Run a log-softmax>> */
/* vars: logits [n][d] */
static double run_log_softmax(LayerProblem *p, bool backward)
{
    memcpy(p->out, xs(p, 0), (size_t)p->n * p->d * sizeof(float));
    layer_kernels[compute.kernel_set].log_softmax(p->out, p->n, p->d);
    if (!backward) return weighted_sum(p->w, p->out, (size_t)p->n * p->d);
    layer_kernels[compute.kernel_set].log_softmax_backward(gs(p, 0), p->w, p->out, p->n, p->d);
    return 0;
}

static double layer_run(LayerProblem *p, bool backward)
{
    const char *name = p->layer;
    if (strcmp(name, "linear") == 0) return run_linear_layer(p, backward);
    if (strcmp(name, "softmax") == 0) return run_softmax(p, backward);
    if (strstr(name, "attention")) return run_attention_layer(p, backward);
    if (strncmp(name, "layernorm", 9) == 0) return run_layer_norm(p, backward);
    if (strcmp(name, "feed-forward") == 0) return run_feed_forward_network(p, backward);
    if (strcmp(name, "embedding") == 0) return run_embedding(p, backward);
    if (strcmp(name, "log-softmax") == 0) return run_log_softmax(p, backward);
    ENSURE(false, "no layer %s", name);
    return 0.0;
}

static double layer_loss(void *context) { return layer_run(context, false); }
static void layer_gradient(void *context) { layer_run(context, true); }

const char *const gradcheck_layer_names[] = {
    "linear", "softmax", "attention", "attention-unscaled", "cross-attention", "layernorm",
    "layernorm-annotated", "feed-forward", "embedding", "log-softmax", NULL};

static void add_var(LayerProblem *p, const char *name, int rows, int cols)
{
    flat_add(&p->vars, name, 2, (int[]){rows, cols});
}

static void setup_layer(LayerProblem *p, const char *name, Rng *rng)
{
    memset(p, 0, sizeof *p);
    p->layer = name;
    p->n = 2, p->d = 8, p->d2 = 5, p->heads = 2, p->len_q = 3, p->len_k = 3;
    size_t outputs = (size_t)p->n * p->d;
    /* <<Lay out the variables of the layer>> */
    if (strcmp(name, "linear") == 0) {
        add_var(p, "in", p->n, p->d), add_var(p, "weight", p->d2, p->d);
        add_var(p, "bias", 1, p->d2);
        outputs = (size_t)p->n * p->d2;
    } else if (strstr(name, "attention")) {
        if (name[0] == 'c') p->len_k = 4;
        add_var(p, "query_in", p->n * p->len_q, p->d);
        add_var(p, "memory_in", p->n * p->len_k, p->d);   /* unused by self-attention */
        for (int i = 0; i < 4; i++) {
            char w[32], b[32];
            snprintf(w, sizeof w, "linears.%d.weight", i);
            snprintf(b, sizeof b, "linears.%d.bias", i);
            add_var(p, w, p->d, p->d), add_var(p, b, 1, p->d);
        }
        outputs = (size_t)p->n * p->len_q * p->d;
    } else if (strcmp(name, "feed-forward") == 0) {
        p->d2 = 12;
        add_var(p, "in", p->n, p->d), add_var(p, "w_1", p->d2, p->d);
        add_var(p, "b_1", 1, p->d2);
        add_var(p, "w_2", p->d, p->d2), add_var(p, "b_2", 1, p->d);
    } else if (strncmp(name, "layernorm", 9) == 0) {
        add_var(p, "in", p->n, p->d), add_var(p, "gain", 1, p->d), add_var(p, "bias", 1, p->d);
    } else if (strcmp(name, "embedding") == 0) {
        p->n = 6;
        add_var(p, "table", p->d2, p->d);
        outputs = (size_t)p->n * p->d;
    } else {   /* softmax, log-softmax */
        add_var(p, "scores", p->n, p->d);
    }
    flat_allocate(&p->vars);
    flat_allocate_like(&p->grads, &p->vars);
    for (size_t i = 0; i < p->vars.total; i++)
        p->vars.data[i] = rng_uniform_between(rng, -1, 1);
    /* <<Adjust the variables that need it>> */
    for (int i = 0; i < 64; i++) p->keep[i] = 1;
    if (strcmp(name, "softmax") == 0)
        p->keep[1] = p->keep[10] = p->keep[11] = 0;
    if (strncmp(name, "attention", 9) == 0)   /* with the scale and without */
        for (int b = 0; b < p->n; b++)
            subsequent_mask(p->keep + b * p->len_q * p->len_k, p->len_q);
    if (strcmp(name, "cross-attention") == 0) p->keep[3] = 0;   /* sequence 0's last key */
    if (strcmp(name, "embedding") == 0)
        for (int t = 0; t < p->n; t++) p->tokens[t] = (t * 3) % p->d2;   /* 0 3 1 4 2 0 */
    p->w = xmalloc(outputs * sizeof *p->w);
    p->out = xmalloc(outputs * sizeof *p->out);
    p->scratch = xmalloc(65536 * sizeof *p->scratch);
    for (size_t i = 0; i < outputs; i++) p->w[i] = rng_uniform_between(rng, -1, 1);
}

double gradcheck_layer(const char *name, int samples, float h, FILE *out)
{
    bool known = false;
    for (int i = 0; gradcheck_layer_names[i]; i++)
        known |= strcmp(gradcheck_layer_names[i], name) == 0;
    if (!known) return -1.0;
    Rng rng;
    rng_seed(&rng, 2718, 7);
    LayerProblem p;
    setup_layer(&p, name, &rng);
    if (strcmp(name, "feed-forward") == 0)
        dropout_mask(p.scratch + (size_t)p.n * p.d2, (size_t)p.n * p.d2, 0.25f, &rng);
    if (strcmp(name, "cross-attention") == 0) {
        /* <<Draw the cross-attention's dropout pattern into its place in the scratch>> */
        const size_t rows_q = (size_t)p.n * p.len_q, rows_k = (size_t)p.n * p.len_k;
        const size_t weights = (size_t)p.n * p.heads * p.len_q * p.len_k;
        float *keep_scale = p.scratch + (rows_q + 2 * rows_k) * p.d + 2 * weights + rows_q * p.d;
        dropout_mask(keep_scale, weights, 0.25f, &rng);
    }
    GradcheckProblem problem = {&p.vars, &p.grads, layer_loss, layer_gradient, &p};
    double worst = gradcheck(&problem, samples, h, &rng, out);
    flat_free(&p.vars), flat_free(&p.grads);
    free(p.w), free(p.out), free(p.scratch);
    return worst;
}

static const float *model_problem_forward(ModelProblem *m)
{
    Rng rng;
    rng_seed(&rng, 31337, 2);
    const Dropout dropout = {&rng, 0, 0};
    return model_forward(m->model, m->batch, m->dropout ? &dropout : NULL);
}

double model_problem_loss(void *context)
{
    ModelProblem *m = context;
    const float *logprobs = model_problem_forward(m);
    const Batch *b = m->batch;
    return nll_loss(m->d_logprobs, logprobs, b->tgt_y, b->batch * b->tgt_len,
                    m->model->config.tgt_vocab, m->pad);
}

void model_problem_gradient(void *context)
{
    ModelProblem *m = context;
    model_problem_loss(m);
    model_backward(m->model, m->d_logprobs, m->batch, m->dropout);
}

double gradcheck_model(NormPlacement norm, LayerNormFormula formula, int tying, int samples,
                       float h, FILE *out)
{
    Config config = config_default(tying == 2 ? 9 : 7, 9, 2);
    config.d_model = 16, config.d_ff = 24, config.heads = 2, config.max_len = 8;
    config.norm = norm, config.layernorm = formula;
    config.tie_generator = tying >= 1, config.tie_source = tying == 2;
    config.dropout = 0.2f;
    Model model;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 1618, 3);
    model_initialize_parameters(&model, &rng);
    for (size_t i = 0; i < model.parameters.total; i++)   /* disturb norms and biases too */
        model.parameters.data[i] += 0.1f * rng_uniform_between(&rng, -1, 1);
    enum { B = 2, S = 5, T = 4 };
    int src[B * S] = {3, 4, 5, 6, 2, 5, 6, 2, 0, 0};
    int tgt[B * T] = {1, 3, 4, 5, 1, 7, 0, 0};
    int tgt_y[B * T] = {3, 4, 5, 2, 7, 2, 0, 0};
    uint8_t src_keep[B * S], tgt_keep[B * T * T];
    padding_mask(src_keep, src, B, S, 0);
    target_mask(tgt_keep, tgt, B, T, 0);
    const Batch batch = {B, S, T, src, tgt, tgt_y, src_keep, tgt_keep};
    model_prepare(&model, B, S, T);
    float *d_logprobs = xmalloc((size_t)B * T * config.tgt_vocab * sizeof *d_logprobs);
    ModelProblem m = {&model, &batch, 0, true, d_logprobs};
    GradcheckProblem problem = {&model.parameters, &model.gradients, model_problem_loss,
                                model_problem_gradient, &m};
    double worst = gradcheck(&problem, samples, h, &rng, out);
    free(d_logprobs);
    model_free(&model);
    return worst;
}
