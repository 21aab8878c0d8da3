/* The encoder-decoder model: its parameters and activations, the forward pass through the
   layers and the backward pass back -- generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "model.h"
#include <string.h>
/* <<model.c includes>> */
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>

/* <<model.c definitions>> */
#define FIELD(field) offsetof(Config, field)
const ConfigKey config_keys[] = {
    {"src_vocab", "src_vocab", CONFIG_INT, FIELD(src_vocab), 1, CONFIG_MAX_SIZE, .fallback = 0},
    {"tgt_vocab", "tgt_vocab", CONFIG_INT, FIELD(tgt_vocab), 1, CONFIG_MAX_SIZE, .fallback = 0},
    {"layers", "layers", CONFIG_INT, FIELD(layers), 1, CONFIG_MAX_SIZE, .fallback = 0},
    {"d_model", "d_model", CONFIG_INT, FIELD(d_model), 1, CONFIG_MAX_SIZE, .fallback = 512},
    {"d_ff", "d_ff", CONFIG_INT, FIELD(d_ff), 1, CONFIG_MAX_SIZE, .fallback = 2048},
    {"heads", "heads", CONFIG_INT, FIELD(heads), 1, CONFIG_MAX_SIZE, .fallback = 8},
    {"max_len", "max_len", CONFIG_INT, FIELD(max_len), 1, CONFIG_MAX_LEN, .fallback = 5000},
    {"dropout", NULL, CONFIG_FLOAT, FIELD(dropout), 0, 1, .fallback = 0.1},
    {"norm", "norm", CONFIG_CHOICE, FIELD(norm), .words = {"pre", "post"},
     .fallback = NORM_PRE},
    {"layernorm", "layernorm", CONFIG_CHOICE, FIELD(layernorm),
     .words = {"standard", "annotated"}, .fallback = LAYERNORM_STANDARD},
    {"layernorm_eps", "layernorm.epsilon", CONFIG_FLOAT, FIELD(layernorm_eps), 0, 1,
     .above_least = true, .fallback = 1e-6, .since = 3},
    {"tie_generator", "tied", CONFIG_BOOL, FIELD(tie_generator), .words = {"0", "1"},
     .fallback = false},
    {"tie_source", "tied_source", CONFIG_BOOL, FIELD(tie_source), .words = {"0", "1"},
     .fallback = false, .optional = true},
    {"attention_scale", NULL, CONFIG_BOOL, FIELD(unscaled_attention),
     .words = {"1/sqrt(d_k)", "1"}, .fallback = false},
    {"embedding_scale", NULL, CONFIG_BOOL, FIELD(unscaled_embedding),
     .words = {"sqrt(d_model)", "1"}, .fallback = false},
};
#undef FIELD
const int config_key_count = sizeof config_keys / sizeof config_keys[0];

_Static_assert(sizeof(NormPlacement) == sizeof(int) && sizeof(LayerNormFormula) == sizeof(int),
               "a choice is stored as an int");

double config_get(const Config *config, const ConfigKey *key)
{
    const char *field = (const char *)config + key->offset;
    switch (key->type) {
    case CONFIG_FLOAT: return *(const float *)field;
    case CONFIG_BOOL: return *(const bool *)field;
    default: return *(const int *)field;
    }
}

void config_set(Config *config, const ConfigKey *key, double value)
{
    char *field = (char *)config + key->offset;
    switch (key->type) {
    case CONFIG_FLOAT: *(float *)field = (float)value; break;
    case CONFIG_BOOL: *(bool *)field = value != 0; break;
    default: *(int *)field = (int)value;
    }
}

Config config_default(int src_vocab, int tgt_vocab, int layers)
{
    Config config;
    memset(&config, 0, sizeof config);
    for (int i = 0; i < config_key_count; i++)
        config_set(&config, &config_keys[i], config_keys[i].fallback);
    config.src_vocab = src_vocab, config.tgt_vocab = tgt_vocab, config.layers = layers;
    return config;
}

float embedding_scale(const Config *c)
{
    return c->unscaled_embedding ? 1.0f : sqrtf((float)c->d_model);
}

static void format_name(char name[TENSOR_NAME_MAX], const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void format_name(char name[TENSOR_NAME_MAX], const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int n = vsnprintf(name, TENSOR_NAME_MAX, format, arguments);
    va_end(arguments);
    ENSURE(n >= 0 && n < TENSOR_NAME_MAX, "tensor name too long: %s...", name);
}

static LinearViews add_linear(FlatBuffer *p, const char *prefix, int out, int in)
{
    char name[TENSOR_NAME_MAX];
    LinearViews views;
    format_name(name, "%s.weight", prefix);
    views.weight = (ParameterView){flat_add(p, name, 2, (int[]){out, in})};
    format_name(name, "%s.bias", prefix);
    views.bias = (ParameterView){flat_add(p, name, 1, (int[]){out})};
    return views;
}

static NormViews add_norm(FlatBuffer *p, const char *prefix, int d)
{
    char name[TENSOR_NAME_MAX];
    NormViews views;
    format_name(name, "%s.a_2", prefix);
    views.gain = (ParameterView){flat_add(p, name, 1, (int[]){d})};
    format_name(name, "%s.b_2", prefix);
    views.bias = (ParameterView){flat_add(p, name, 1, (int[]){d})};
    return views;
}

static AttentionViews add_attention(FlatBuffer *p, const char *prefix, int d)
{
    char name[TENSOR_NAME_MAX];
    AttentionViews views;
    for (int i = 0; i < 4; i++) {
        format_name(name, "%s.linears.%d", prefix, i);
        views.linears[i] = add_linear(p, name, d, d);
    }
    return views;
}

static FeedForwardViews add_feed_forward(FlatBuffer *p, const char *prefix, int d, int d_ff)
{
    char name[TENSOR_NAME_MAX];
    FeedForwardViews views;
    format_name(name, "%s.w_1", prefix);
    views.w_1 = add_linear(p, name, d_ff, d);
    format_name(name, "%s.w_2", prefix);
    views.w_2 = add_linear(p, name, d, d_ff);
    return views;
}

static void add_encoder_layer(Model *model, int l)
{
    FlatBuffer *p = &model->parameters;
    const Config *c = &model->config;
    EncoderLayerViews *layer = &model->encoder[l];
    char prefix[TENSOR_NAME_MAX];
    format_name(prefix, "encoder.layers.%d.self_attn", l);
    layer->self_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "encoder.layers.%d.feed_forward", l);
    layer->feed_forward = add_feed_forward(p, prefix, c->d_model, c->d_ff);
    for (int s = 0; s < 2; s++) {
        format_name(prefix, "encoder.layers.%d.sublayer.%d.norm", l, s);
        layer->norm[s] = add_norm(p, prefix, c->d_model);
    }
}

static void add_decoder_layer(Model *model, int l)
{
    FlatBuffer *p = &model->parameters;
    const Config *c = &model->config;
    DecoderLayerViews *layer = &model->decoder[l];
    char prefix[TENSOR_NAME_MAX];
    format_name(prefix, "decoder.layers.%d.self_attn", l);
    layer->self_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "decoder.layers.%d.src_attn", l);
    layer->src_attn = add_attention(p, prefix, c->d_model);
    format_name(prefix, "decoder.layers.%d.feed_forward", l);
    layer->feed_forward = add_feed_forward(p, prefix, c->d_model, c->d_ff);
    for (int s = 0; s < 3; s++) {
        format_name(prefix, "decoder.layers.%d.sublayer.%d.norm", l, s);
        layer->norm[s] = add_norm(p, prefix, c->d_model);
    }
}

void model_init(Model *model, Config config)
{
    /* <<Check the configuration>> */
    Error problem;
    ENSURE(config_problem(&config, &problem) == NULL, "model configuration: %s", problem.message);
    memset(model, 0, sizeof *model);
    model->config = config;
    FlatBuffer *p = &model->parameters;
    model->encoder = xmalloc((size_t)config.layers * sizeof *model->encoder);
    model->decoder = xmalloc((size_t)config.layers * sizeof *model->decoder);
    for (int l = 0; l < config.layers; l++) add_encoder_layer(model, l);
    model->encoder_norm = (NormViews){{-1}, {-1}};
    if (config.norm == NORM_PRE)
        model->encoder_norm = add_norm(p, "encoder.norm", config.d_model);
    for (int l = 0; l < config.layers; l++) add_decoder_layer(model, l);
    model->decoder_norm = (NormViews){{-1}, {-1}};
    if (config.norm == NORM_PRE)
        model->decoder_norm = add_norm(p, "decoder.norm", config.d_model);
    if (!config.tie_source)
        model->src_embedding = (ParameterView){flat_add(
            p, "src_embed.0.lut.weight", 2, (int[]){config.src_vocab, config.d_model})};
    model->tgt_embedding = (ParameterView){flat_add(
        p, "tgt_embed.0.lut.weight", 2, (int[]){config.tgt_vocab, config.d_model})};
    if (config.tie_source) model->src_embedding = model->tgt_embedding;
    if (config.tie_generator) {
        model->generator.weight = model->tgt_embedding;
        model->generator.bias = (ParameterView){flat_add(p, "generator.proj.bias", 1,
                                                         (int[]){config.tgt_vocab})};
    } else {
        model->generator = add_linear(p, "generator.proj", config.tgt_vocab, config.d_model);
    }
    flat_allocate(p);
    flat_allocate_like(&model->gradients, p);
    model->positional = xmalloc((size_t)config.max_len * config.d_model * sizeof(float));
    positional_encoding_table(model->positional, config.max_len, config.d_model);
}

const char *config_problem(const Config *config, Error *message)
{
    const Config c = *config;
    if (c.src_vocab < 1 || c.tgt_vocab < 1 || c.layers < 1 || c.d_model < 2 || c.d_ff < 1
        || c.heads < 1 || c.max_len < 1)
        error_set(message, "every size must be positive");
    else if (c.d_model % c.heads != 0 || c.d_model % 2 != 0)
        error_set(message, "d_model (%d) must be even and a multiple of heads (%d)",
                  c.d_model, c.heads);
    else if (!(c.dropout >= 0.0f && c.dropout < 1.0f))
        error_set(message, "dropout must be in [0, 1), not %g", c.dropout);
    else if (!(c.layernorm_eps > 0.0f))
        error_set(message, "the layer norm's eps must be positive, not %g",
                  c.layernorm_eps);
    else if (c.tie_source && c.src_vocab != c.tgt_vocab)
        error_set(message, "a shared source embedding needs one vocabulary (%d and %d)",
                  c.src_vocab, c.tgt_vocab);
    else if ((c.norm != NORM_PRE && c.norm != NORM_POST)
             || (c.layernorm != LAYERNORM_STANDARD && c.layernorm != LAYERNORM_ANNOTATED))
        error_set(message, "unknown norm placement or layer-norm formula");
    else
        return NULL;
    return message->message;
}

float *model_parameter(const Model *model, ParameterView view)
{
    return flat_view(&model->parameters, view.index);
}

void model_free(Model *model)
{
    flat_free(&model->parameters);
    flat_free(&model->gradients);
    flat_free(&model->activations);
    free(model->encoder);
    free(model->decoder);
    free(model->positional);
    free(model->encoder_acts);
    free(model->decoder_acts);
    memset(model, 0, sizeof *model);
}

static float *parameter_in(const FlatBuffer *buffer, ParameterView view)
{
    return flat_view(buffer, view.index);
}

AttentionWeights attention_weights(const FlatBuffer *buffer, const AttentionViews *views)
{
    const LinearViews *l = views->linears;
    return (AttentionWeights){
        parameter_in(buffer, l[0].weight), parameter_in(buffer, l[0].bias),
        parameter_in(buffer, l[1].weight), parameter_in(buffer, l[1].bias),
        parameter_in(buffer, l[2].weight), parameter_in(buffer, l[2].bias),
        parameter_in(buffer, l[3].weight), parameter_in(buffer, l[3].bias)};
}

FeedForwardWeights feed_forward_weights(const FlatBuffer *buffer,
                                        const FeedForwardViews *views)
{
    return (FeedForwardWeights){
        parameter_in(buffer, views->w_1.weight), parameter_in(buffer, views->w_1.bias),
        parameter_in(buffer, views->w_2.weight), parameter_in(buffer, views->w_2.bias)};
}

LayerNormWeights layernorm_weights(const FlatBuffer *buffer, NormViews views)
{
    return (LayerNormWeights){parameter_in(buffer, views.gain),
                              parameter_in(buffer, views.bias)};
}

void model_initialize_parameters(Model *model, Rng *rng)
{
    const FlatBuffer *p = &model->parameters;
    for (int i = 0; i < p->count; i++) {
        const TensorView *view = &p->views[i];
        float *x = flat_view(p, i);
        const char *leaf = strrchr(view->name, '.') + 1;
        if (view->ndim == 2) {
            float a = sqrtf(6.0f / (float)(view->shape[0] + view->shape[1]));
            for (size_t j = 0; j < view->size; j++) x[j] = rng_uniform_between(rng, -a, a);
        } else if (strcmp(leaf, "a_2") == 0) {
            for (size_t j = 0; j < view->size; j++) x[j] = 1.0f;
        } else if (strcmp(leaf, "b_2") == 0) {
            memset(x, 0, view->size * sizeof *x);
        } else {   /* a linear layer's bias: its weight is the view before it */
            /* <<Draw a bias uniformly in plus or minus one over the square root of its fan-in>> */
            int fan_in = model->config.d_model;
            if (i > 0 && p->views[i - 1].ndim == 2) fan_in = p->views[i - 1].shape[1];
            float bound = 1.0f / sqrtf((float)fan_in);
            for (size_t j = 0; j < view->size; j++) x[j] = rng_uniform_between(rng, -bound, bound);
        }
    }
}

size_t model_parameter_count(const Model *model)
{
    size_t count = 0;
    for (int i = 0; i < model->parameters.count; i++)
        count += model->parameters.views[i].size;
    return count;
}

static ActivationView add_act(FlatBuffer *a, const char *prefix, const char *what, size_t rows,
                   int cols)
{
    char name[TENSOR_NAME_MAX];
    format_name(name, "%s.%s", prefix, what);
    ENSURE(rows > 0 && rows <= INT32_MAX, "activation %s has %zu rows", name, rows);
    return (ActivationView){flat_add(a, name, 2, (int[]){(int)rows, cols})};
}

/* rows_q, rows_k: query and key positions of the whole batch; len_k: the longest key
   sequence. A batch's weights [B][h][T_q][T_k] then fit in h * rows_q * len_k floats. */
static AttentionActs add_attention_acts(FlatBuffer *a, const char *prefix, size_t rows_q,
                                        size_t rows_k, int len_k, int d, int heads)
{
    AttentionActs acts;
    acts.q = add_act(a, prefix, "q", rows_q, d);
    acts.k = add_act(a, prefix, "k", rows_k, d);
    acts.v = add_act(a, prefix, "v", rows_k, d);
    acts.probs = add_act(a, prefix, "probs", (size_t)heads * rows_q, len_k);
    acts.probs_keep = add_act(a, prefix, "probs_keep", (size_t)heads * rows_q, len_k);
    acts.probs_dropped = add_act(a, prefix, "probs_dropped", (size_t)heads * rows_q, len_k);
    acts.context = add_act(a, prefix, "context", rows_q, d);
    return acts;
}

static SublayerActs add_sublayer_acts(FlatBuffer *a, const char *prefix, size_t rows, int d)
{
    SublayerActs acts;
    acts.normed = add_act(a, prefix, "normed", rows, d);
    acts.mean = add_act(a, prefix, "mean", rows, 1);
    acts.rstd = add_act(a, prefix, "rstd", rows, 1);
    acts.output = add_act(a, prefix, "output", rows, d);
    acts.keep = add_act(a, prefix, "keep", rows, d);
    acts.stream = add_act(a, prefix, "stream", rows, d);
    return acts;
}

static void lay_out_encoder_activations(Model *model)
{
    const Config *c = &model->config;
    FlatBuffer *a = &model->activations;
    const size_t src_rows = (size_t)model->max_src_tokens;
    const int d = c->d_model, max_src_len = model->max_src_len;
    char prefix[TENSOR_NAME_MAX];
    /* <<Lay out the encoder's activations>> */
    model->src_input = add_act(a, "src_embed", "output", src_rows, d);
    model->src_input_keep = add_act(a, "src_embed", "keep", src_rows, d);
    model->encoder_acts = xmalloc((size_t)c->layers * sizeof *model->encoder_acts);
    for (int l = 0; l < c->layers; l++) {
        EncoderActs *acts = &model->encoder_acts[l];
        format_name(prefix, "encoder.layers.%d.self_attn", l);
        acts->self_attn = add_attention_acts(a, prefix, src_rows, src_rows, max_src_len, d,
                                             c->heads);
        for (int s = 0; s < 2; s++) {
            format_name(prefix, "encoder.layers.%d.sublayer.%d", l, s);
            acts->sub[s] = add_sublayer_acts(a, prefix, src_rows, d);
        }
        format_name(prefix, "encoder.layers.%d.feed_forward", l);
        acts->hidden = add_act(a, prefix, "hidden", src_rows, c->d_ff);
        acts->hidden_keep = add_act(a, prefix, "hidden_keep", src_rows, c->d_ff);
    }
    model->memory = add_act(a, "encoder", "output", src_rows, d);
    model->memory_mean = add_act(a, "encoder", "mean", src_rows, 1);
    model->memory_rstd = add_act(a, "encoder", "rstd", src_rows, 1);
}

static void lay_out_decoder_activations(Model *model)
{
    const Config *c = &model->config;
    FlatBuffer *a = &model->activations;
    const size_t src_rows = (size_t)model->max_src_tokens;
    const size_t tgt_rows = (size_t)model->max_tgt_tokens;
    const int d = c->d_model, max_src_len = model->max_src_len;
    const int max_tgt_len = model->max_tgt_len;
    char prefix[TENSOR_NAME_MAX];
    /* <<Lay out the decoder's activations>> */
    model->tgt_input = add_act(a, "tgt_embed", "output", tgt_rows, d);
    model->tgt_input_keep = add_act(a, "tgt_embed", "keep", tgt_rows, d);
    model->decoder_acts = xmalloc((size_t)c->layers * sizeof *model->decoder_acts);
    for (int l = 0; l < c->layers; l++) {
        DecoderActs *acts = &model->decoder_acts[l];
        format_name(prefix, "decoder.layers.%d.self_attn", l);
        acts->self_attn = add_attention_acts(a, prefix, tgt_rows, tgt_rows, max_tgt_len, d,
                                             c->heads);
        format_name(prefix, "decoder.layers.%d.src_attn", l);
        acts->src_attn = add_attention_acts(a, prefix, tgt_rows, src_rows, max_src_len, d,
                                            c->heads);
        for (int s = 0; s < 3; s++) {
            format_name(prefix, "decoder.layers.%d.sublayer.%d", l, s);
            acts->sub[s] = add_sublayer_acts(a, prefix, tgt_rows, d);
        }
        format_name(prefix, "decoder.layers.%d.feed_forward", l);
        acts->hidden = add_act(a, prefix, "hidden", tgt_rows, c->d_ff);
        acts->hidden_keep = add_act(a, prefix, "hidden_keep", tgt_rows, c->d_ff);
    }
    model->decoded = add_act(a, "decoder", "output", tgt_rows, d);
    model->decoded_mean = add_act(a, "decoder", "mean", tgt_rows, 1);
    model->decoded_rstd = add_act(a, "decoder", "rstd", tgt_rows, 1);
}

void model_prepare(Model *model, int max_batch, int max_src_len, int max_tgt_len)
{
    model_prepare_tokens(model, max_batch, max_src_len, max_tgt_len,
                         max_batch * max_src_len, max_batch * max_tgt_len);
}

void model_prepare_tokens(Model *model, int max_batch, int max_src_len, int max_tgt_len,
                          int max_src_tokens, int max_tgt_tokens)
{
    const Config *c = &model->config;
    ENSURE(max_src_len <= c->max_len && max_tgt_len <= c->max_len,
           "sequences of %d tokens exceed the model's max_len %d",   /* the caller checks */
           max_src_len > max_tgt_len ? max_src_len : max_tgt_len, c->max_len);
    flat_free(&model->activations);
    free(model->encoder_acts);
    free(model->decoder_acts);
    FlatBuffer *a = &model->activations;
    const size_t src_rows = (size_t)max_src_tokens, tgt_rows = (size_t)max_tgt_tokens;
    const int d = c->d_model;
    model->max_batch = max_batch;
    model->max_src_len = max_src_len;
    model->max_tgt_len = max_tgt_len;
    model->max_src_tokens = max_src_tokens, model->max_tgt_tokens = max_tgt_tokens;
    lay_out_encoder_activations(model);
    lay_out_decoder_activations(model);
    model->logprobs = add_act(a, "generator", "logprobs", tgt_rows, c->tgt_vocab);
    /* <<Lay out the scratch of the backward pass>> */
    const size_t rows = src_rows > tgt_rows ? src_rows : tgt_rows;
    const int longest = max_src_len > max_tgt_len ? max_src_len : max_tgt_len;
    model->d_stream = add_act(a, "grad", "stream", rows, d);
    model->d_normed = add_act(a, "grad", "normed", rows, d);
    model->d_output = add_act(a, "grad", "output", rows, d);
    model->d_memory = add_act(a, "grad", "memory", src_rows, d);
    model->d_hidden = add_act(a, "grad", "hidden", rows, c->d_ff);
    model->d_logits = add_act(a, "grad", "logits", tgt_rows, c->tgt_vocab);
    model->d_context = add_act(a, "grad", "context", rows, d);
    model->d_q = add_act(a, "grad", "q", rows, d);
    model->d_k = add_act(a, "grad", "k", rows, d);
    model->d_v = add_act(a, "grad", "v", rows, d);
    model->d_p = add_act(a, "grad", "p", (size_t)MAX_THREADS * longest, longest);  /* each its own */
    flat_allocate(a);
}

float *model_activation(const Model *model, ActivationView view)
{
    return flat_view(&model->activations, view.index);
}

/* <<Sublayer helpers>> */
/* The dropout of a training pass as its layers draw it: the caller's, and the rows (sequences)
   the pass holds. */
typedef struct {
    const Dropout *given;
    int batch;
} PassDropout;

static void draw_dropout(Model *model, float *keep, size_t size, const PassDropout *dropout)
{
    const size_t per_row = size / (size_t)dropout->batch;
    Rng *rng = dropout->given->rng;
    rng_advance(rng, per_row * (size_t)dropout->given->rows_before);
    layer_kernels[compute.kernel_set].dropout_mask(keep, size, model->config.dropout, rng);
    rng_advance(rng, per_row * (size_t)dropout->given->rows_after);
}

static LayerNormSaved layernorm_saved(const Model *model, ActivationView mean,
                                     ActivationView rstd)
{
    return (LayerNormSaved){model_activation(model, mean), model_activation(model, rstd)};
}

const float *model_sublayer_input(const Model *model, NormViews norm, float *normed,
                                  const LayerNormSaved *saved, const float *x, int rows)
{
    const Config *c = &model->config;
    if (c->norm == NORM_POST) return x;
    const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
    layernorm_forward(normed, &w, saved, x, rows, c->d_model, c->layernorm,
                      c->layernorm_eps);
    return normed;
}

void model_sublayer_residual(const Model *model, NormViews norm, float *stream,
                             float *scratch, const LayerNormSaved *saved, const float *x,
                             float *f, const float *keep, int rows)
{
    const Config *c = &model->config;
    const size_t size = (size_t)rows * c->d_model;
    float *sum = c->norm == NORM_PRE ? stream : scratch;
    if (keep) {   /* the dropout and the residual sum in one pass */
        PARALLEL_FOR(size)
        for (size_t i = 0; i < size; i++) sum[i] = x[i] + (f[i] *= keep[i]);
    } else {
        PARALLEL_FOR(size)
        for (size_t i = 0; i < size; i++) sum[i] = x[i] + f[i];
    }
    if (c->norm == NORM_PRE) return;
    const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
    layernorm_forward(stream, &w, saved, sum, rows, c->d_model, c->layernorm,
                      c->layernorm_eps);
}

static const float *sublayer_input(Model *model, const SublayerActs *acts, NormViews norm,
                                   const float *x, int rows)
{
    const LayerNormSaved saved = layernorm_saved(model, acts->mean, acts->rstd);
    return model_sublayer_input(model, norm, model_activation(model, acts->normed), &saved,
                                x, rows);
}

static const float *sublayer_output(Model *model, const SublayerActs *acts, NormViews norm,
                                    const float *x, int rows, const PassDropout *dropout)
{
    float *keep = NULL;
    if (dropout) {
        keep = model_activation(model, acts->keep);
        draw_dropout(model, keep, (size_t)rows * model->config.d_model, dropout);
    }
    const LayerNormSaved saved = layernorm_saved(model, acts->mean, acts->rstd);
    float *stream = model_activation(model, acts->stream);
    model_sublayer_residual(model, norm, stream, model_activation(model, acts->normed),
                            &saved, x, model_activation(model, acts->output), keep, rows);
    return stream;
}

static const float *maybe_dropout(Model *model, ActivationView view, size_t size,
                                  const PassDropout *dropout)
{
    if (dropout == NULL) return NULL;
    float *keep = model_activation(model, view);
    draw_dropout(model, keep, size, dropout);
    return keep;
}

static AttentionSaved attention_saved(const Model *model, const AttentionActs *acts,
                                      const float *probs_keep)
{
    return (AttentionSaved){
        model_activation(model, acts->q), model_activation(model, acts->k),
        model_activation(model, acts->v), model_activation(model, acts->probs),
        model_activation(model, acts->probs_dropped), model_activation(model, acts->context),
        probs_keep};
}

static void attention_sublayer(Model *model, const AttentionActs *acts,
                               const AttentionViews *views, float *out,
                               const float *query_in, const float *memory_in,
                               const Mask *mask, const AttentionShape *shape,
                               const PassDropout *dropout)
{
    const AttentionWeights w = attention_weights(&model->parameters, views);
    const size_t weights = (size_t)shape->batch * shape->heads * shape->len_q * shape->len_k;
    const float *probs_keep = maybe_dropout(model, acts->probs_keep, weights, dropout);
    const AttentionSaved saved = attention_saved(model, acts, probs_keep);
    attention_forward(out, &w, &saved, query_in, memory_in, mask, shape);
}

static void feed_forward_sublayer(Model *model, ActivationView hidden,
                                  ActivationView hidden_keep, const FeedForwardViews *views,
                                  float *out, const float *in, int rows,
                                  const PassDropout *dropout)
{
    const Config *c = &model->config;
    const FeedForwardWeights w = feed_forward_weights(&model->parameters, views);
    const float *keep = maybe_dropout(model, hidden_keep, (size_t)rows * c->d_ff, dropout);
    const FeedForwardSaved saved = {model_activation(model, hidden), keep};
    feed_forward_forward(out, &w, &saved, in, rows, c->d_model, c->d_ff);
}

static const float *embed(Model *model, ParameterView table, ActivationView output,
                          ActivationView keep_view, const int *tokens, int vocab, int batch,
                          int len, const PassDropout *dropout)
{
    const int d = model->config.d_model;
    float *x = model_activation(model, output);
    embedding_forward(x, tokens, model_parameter(model, table), batch * len, d, vocab,
                      embedding_scale(&model->config));
    positional_encoding_forward(x, model->positional, batch, len, d);
    const float *keep = maybe_dropout(model, keep_view, (size_t)batch * len * d, dropout);
    if (keep) dropout_apply(x, keep, (size_t)batch * len * d);
    return x;
}

/* The final norm of a pre-norm stack; a post-norm stack's output is already normalized. */
static const float *final_norm(Model *model, NormViews norm, ActivationView out,
                               ActivationView mean, ActivationView rstd, const float *x,
                               int rows)
{
    const Config *c = &model->config;
    float *y = model_activation(model, out);
    if (c->norm == NORM_POST) {
        memcpy(y, x, (size_t)rows * c->d_model * sizeof *y);
        return y;
    }
    const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
    const LayerNormSaved saved = layernorm_saved(model, mean, rstd);
    layernorm_forward(y, &w, &saved, x, rows, c->d_model, c->layernorm, c->layernorm_eps);
    return y;
}

static float *sublayer_backward_begin(Model *model, const SublayerActs *acts, NormViews norm,
                                      int rows, bool dropout)
{
    const Config *c = &model->config;
    const size_t size = (size_t)rows * c->d_model;
    float *d_stream = model_activation(model, model->d_stream);
    float *d_normed = model_activation(model, model->d_normed);
    float *d_output = model_activation(model, model->d_output);
    memset(d_normed, 0, size * sizeof *d_normed);
    if (c->norm == NORM_POST) {
        const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
        const LayerNormWeights d_w = layernorm_weights(&model->gradients, norm);
        const LayerNormSaved saved = layernorm_saved(model, acts->mean, acts->rstd);
        layernorm_backward(d_normed, &d_w, d_stream, &w, &saved,
                           model_activation(model, acts->normed), rows, c->d_model,
                           c->layernorm, c->layernorm_eps);
        memcpy(d_stream, d_normed, size * sizeof *d_stream);
    }
    if (dropout) {   /* the copy and the dropout's backward in one pass */
        const float *keep = model_activation(model, acts->keep);
        PARALLEL_FOR(size)
        for (size_t i = 0; i < size; i++) d_output[i] = d_stream[i] * keep[i];
    } else {
        memcpy(d_output, d_stream, size * sizeof *d_output);
    }
    return c->norm == NORM_PRE ? d_normed : d_stream;
}

static void sublayer_backward_end(Model *model, const SublayerActs *acts, NormViews norm,
                                  const float *x, int rows)
{
    const Config *c = &model->config;
    if (c->norm == NORM_POST) return;
    const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
    const LayerNormWeights d_w = layernorm_weights(&model->gradients, norm);
    const LayerNormSaved saved = layernorm_saved(model, acts->mean, acts->rstd);
    layernorm_backward(model_activation(model, model->d_stream), &d_w,
                       model_activation(model, model->d_normed), &w, &saved, x, rows,
                       c->d_model, c->layernorm, c->layernorm_eps);
}

/* What F read in the forward pass: LN(x) for pre-norm, x itself for post-norm. */
static const float *sublayer_f_input(Model *model, const SublayerActs *acts, const float *x)
{
    return model->config.norm == NORM_PRE ? model_activation(model, acts->normed) : x;
}

static void attention_sublayer_backward(Model *model, const AttentionActs *acts,
                                        const AttentionViews *views, float *d_query_in,
                                        float *d_memory_in, const float *query_in,
                                        const float *memory_in, const AttentionShape *shape,
                                        bool dropout)
{
    const AttentionWeights w = attention_weights(&model->parameters, views);
    const AttentionWeights d_w = attention_weights(&model->gradients, views);
    const AttentionSaved saved = attention_saved(
        model, acts, dropout ? model_activation(model, acts->probs_keep) : NULL);
    const AttentionScratch scratch = {
        model_activation(model, model->d_context), model_activation(model, model->d_q),
        model_activation(model, model->d_k), model_activation(model, model->d_v),
        model_activation(model, model->d_p)};
    attention_backward(d_query_in, d_memory_in, &d_w, &scratch,
                       model_activation(model, model->d_output), &w, &saved, query_in,
                       memory_in, shape);
}

static void feed_forward_sublayer_backward(Model *model, ActivationView hidden,
                                           ActivationView hidden_keep,
                                           const FeedForwardViews *views, float *d_in,
                                           const float *in, int rows, bool dropout)
{
    const Config *c = &model->config;
    const FeedForwardWeights w = feed_forward_weights(&model->parameters, views);
    const FeedForwardWeights d_w = feed_forward_weights(&model->gradients, views);
    const FeedForwardSaved saved = {
        model_activation(model, hidden),
        dropout ? model_activation(model, hidden_keep) : NULL};
    feed_forward_backward(d_in, &d_w, model_activation(model, model->d_hidden),
                          model_activation(model, model->d_output), &w, &saved, in, rows,
                          c->d_model, c->d_ff);
}

static void final_norm_backward(Model *model, NormViews norm, ActivationView mean,
                                ActivationView rstd, const float *x, const float *d_out,
                                int rows)
{
    const Config *c = &model->config;
    float *d_stream = model_activation(model, model->d_stream);
    const size_t size = (size_t)rows * c->d_model;
    if (c->norm == NORM_POST) {
        memcpy(d_stream, d_out, size * sizeof *d_stream);
        return;
    }
    memset(d_stream, 0, size * sizeof *d_stream);
    const LayerNormWeights w = layernorm_weights(&model->parameters, norm);
    const LayerNormWeights d_w = layernorm_weights(&model->gradients, norm);
    const LayerNormSaved saved = layernorm_saved(model, mean, rstd);
    layernorm_backward(d_stream, &d_w, d_out, &w, &saved, x, rows, c->d_model, c->layernorm,
                       c->layernorm_eps);
}

static void embed_backward(Model *model, ParameterView table, ActivationView keep,
                           const int *tokens, int rows, bool dropout)
{
    const int d = model->config.d_model;
    float *d_stream = model_activation(model, model->d_stream);
    if (dropout)
        dropout_apply(d_stream, model_activation(model, keep), (size_t)rows * d);
    embedding_backward(model_gradient(model, table), d_stream, tokens, rows, d,
                       embedding_scale(&model->config));
}

/* <<The encoder>> */
static const float *encode(Model *model, const SourceBatch *source, const PassDropout *dropout)
{
    const Config *c = &model->config;
    const int batch = source->batch, src_len = source->len, rows = batch * src_len;
    const Mask mask = {source->keep, (size_t)src_len, 0};
    const AttentionShape shape = {batch, src_len, src_len, c->d_model, c->heads,
                                  c->unscaled_attention};
    const float *x = embed(model, model->src_embedding, model->src_input,
                           model->src_input_keep, source->tokens, c->src_vocab, batch,
                           src_len, dropout);
    for (int l = 0; l < c->layers; l++) {
        const EncoderLayerViews *views = &model->encoder[l];
        const EncoderActs *acts = &model->encoder_acts[l];
        const float *in = sublayer_input(model, &acts->sub[0], views->norm[0], x, rows);
        attention_sublayer(model, &acts->self_attn, &views->self_attn,
                           model_activation(model, acts->sub[0].output), in, in, &mask,
                           &shape, dropout);
        x = sublayer_output(model, &acts->sub[0], views->norm[0], x, rows, dropout);
        in = sublayer_input(model, &acts->sub[1], views->norm[1], x, rows);
        feed_forward_sublayer(model, acts->hidden, acts->hidden_keep, &views->feed_forward,
                              model_activation(model, acts->sub[1].output), in, rows, dropout);
        x = sublayer_output(model, &acts->sub[1], views->norm[1], x, rows, dropout);
    }
    return final_norm(model, model->encoder_norm, model->memory, model->memory_mean,
                      model->memory_rstd, x, rows);
}

/* <<The decoder>> */
static const float *decode(Model *model, const float *memory, const Batch *b,
                           const PassDropout *dropout)
{
    const Config *c = &model->config;
    const int batch = b->batch, src_len = b->src_len, tgt_len = b->tgt_len;
    const int rows = batch * tgt_len;
    const Mask self_mask = {b->tgt_keep, (size_t)tgt_len * tgt_len, (size_t)tgt_len};
    const Mask src_mask = {b->src_keep, (size_t)src_len, 0};
    const AttentionShape self_shape = {batch, tgt_len, tgt_len, c->d_model, c->heads,
                                       c->unscaled_attention};
    const AttentionShape src_shape = {batch, tgt_len, src_len, c->d_model, c->heads,
                                      c->unscaled_attention};
    const float *x = embed(model, model->tgt_embedding, model->tgt_input,
                           model->tgt_input_keep, b->tgt, c->tgt_vocab, batch, tgt_len,
                           dropout);
    for (int l = 0; l < c->layers; l++) {
        const DecoderLayerViews *views = &model->decoder[l];
        const DecoderActs *acts = &model->decoder_acts[l];
        const float *in = sublayer_input(model, &acts->sub[0], views->norm[0], x, rows);
        attention_sublayer(model, &acts->self_attn, &views->self_attn,
                           model_activation(model, acts->sub[0].output), in, in,
                           &self_mask, &self_shape, dropout);
        x = sublayer_output(model, &acts->sub[0], views->norm[0], x, rows, dropout);
        in = sublayer_input(model, &acts->sub[1], views->norm[1], x, rows);
        attention_sublayer(model, &acts->src_attn, &views->src_attn,
                           model_activation(model, acts->sub[1].output), in, memory,
                           &src_mask, &src_shape, dropout);
        x = sublayer_output(model, &acts->sub[1], views->norm[1], x, rows, dropout);
        in = sublayer_input(model, &acts->sub[2], views->norm[2], x, rows);
        feed_forward_sublayer(model, acts->hidden, acts->hidden_keep, &views->feed_forward,
                              model_activation(model, acts->sub[2].output), in, rows, dropout);
        x = sublayer_output(model, &acts->sub[2], views->norm[2], x, rows, dropout);
    }
    return final_norm(model, model->decoder_norm, model->decoded, model->decoded_mean,
                      model->decoded_rstd, x, rows);
}

/* Begin a pass of batch sequences of src_len and tgt_len tokens. */
static void begin_pass(Model *model, int batch, int src_len, int tgt_len)
{
    ENSURE(batch <= model->max_batch && src_len <= model->max_src_len
           && tgt_len <= model->max_tgt_len && batch * src_len <= model->max_src_tokens
           && batch * tgt_len <= model->max_tgt_tokens,
           "batch %d x %d / %d exceeds the prepared size", batch, src_len, tgt_len);
    /* <<Round the weights to bfloat16 for this pass's products, if asked>> */
    if (compute.precision == PRECISION_BF16)
        bf16_weights_use(model->parameters.data, model->parameters.total);
}

const float *model_encode(Model *model, const SourceBatch *source)
{
    begin_pass(model, source->batch, source->len, 0);
    return encode(model, source, NULL);
}

const float *model_forward(Model *model, const Batch *batch, const Dropout *dropout)
{
    begin_pass(model, batch->batch, batch->src_len, batch->tgt_len);
    const PassDropout pass = {dropout, batch->batch}, *drawn = dropout ? &pass : NULL;
    const SourceBatch source = source_batch_of(batch);
    const float *memory = encode(model, &source, drawn);
    const float *decoded = decode(model, memory, batch, drawn);
    /* <<Project to the vocabulary and take the log-softmax>> */
    const Config *c = &model->config;
    const int rows = batch->batch * batch->tgt_len;
    float *logprobs = model_activation(model, model->logprobs);
    linear_forward(logprobs, decoded, model_parameter(model, model->generator.weight),
                   model_parameter(model, model->generator.bias), rows, c->d_model,
                   c->tgt_vocab);
    layer_kernels[compute.kernel_set].log_softmax(logprobs, rows, c->tgt_vocab);
    return logprobs;
}

void model_zero_gradients(Model *model)
{
    memset(model->gradients.data, 0, model->gradients.total * sizeof(float));
}

float *model_gradient(const Model *model, ParameterView view)
{
    return flat_view(&model->gradients, view.index);
}

void model_backward(Model *model, const float *d_logprobs, const Batch *batch, bool dropout)
{
    layer_kernels[compute.kernel_set].log_softmax_backward(
        model_logits_gradient(model), d_logprobs, model_activation(model, model->logprobs),
        batch->batch * batch->tgt_len, model->config.tgt_vocab);
    model_backward_from_logits(model, batch, dropout);
}

float *model_logits_gradient(const Model *model)
{
    return model_activation(model, model->d_logits);
}

static void decoder_backward(Model *model, const Batch *pass, bool dropout, float *d_memory)
{
    const Config *c = &model->config;
    const int batch = pass->batch, src_len = pass->src_len, tgt_len = pass->tgt_len;
    const int tgt_rows = batch * tgt_len;
    const AttentionShape self_shape = {batch, tgt_len, tgt_len, c->d_model, c->heads,
                                       c->unscaled_attention};
    const AttentionShape src_shape = {batch, tgt_len, src_len, c->d_model, c->heads,
                                      c->unscaled_attention};
    /* <<Back through the decoder's layers>> */
    const float *memory = model_activation(model, model->memory);
    for (int l = c->layers - 1; l >= 0; l--) {
        const DecoderLayerViews *views = &model->decoder[l];
        const DecoderActs *acts = &model->decoder_acts[l];
        const ActivationView input_view = l == 0 ? model->tgt_input
                                      : model->decoder_acts[l - 1].sub[2].stream;
        const float *layer_input = model_activation(model, input_view);
        const float *x2 = model_activation(model, acts->sub[1].stream);
        float *d_in = sublayer_backward_begin(model, &acts->sub[2], views->norm[2], tgt_rows,
                                              dropout);
        feed_forward_sublayer_backward(model, acts->hidden, acts->hidden_keep,
                                       &views->feed_forward, d_in,
                                       sublayer_f_input(model, &acts->sub[2], x2), tgt_rows,
                                       dropout);
        sublayer_backward_end(model, &acts->sub[2], views->norm[2], x2, tgt_rows);
        const float *x1 = model_activation(model, acts->sub[0].stream);
        d_in = sublayer_backward_begin(model, &acts->sub[1], views->norm[1], tgt_rows, dropout);
        attention_sublayer_backward(model, &acts->src_attn, &views->src_attn, d_in, d_memory,
                                    sublayer_f_input(model, &acts->sub[1], x1), memory,
                                    &src_shape, dropout);
        sublayer_backward_end(model, &acts->sub[1], views->norm[1], x1, tgt_rows);
        d_in = sublayer_backward_begin(model, &acts->sub[0], views->norm[0], tgt_rows, dropout);
        const float *in = sublayer_f_input(model, &acts->sub[0], layer_input);
        attention_sublayer_backward(model, &acts->self_attn, &views->self_attn, d_in, d_in,
                                    in, in, &self_shape, dropout);
        sublayer_backward_end(model, &acts->sub[0], views->norm[0], layer_input, tgt_rows);
    }
}

static void encoder_backward(Model *model, const Batch *pass, bool dropout, float *d_memory)
{
    const Config *c = &model->config;
    const int batch = pass->batch, src_len = pass->src_len, src_rows = batch * src_len;
    const AttentionShape encoder_shape = {batch, src_len, src_len, c->d_model, c->heads,
                                          c->unscaled_attention};
    /* <<Back through the encoder>> */
    const ActivationView last_encoder_stream = model->encoder_acts[c->layers - 1].sub[1].stream;
    final_norm_backward(model, model->encoder_norm, model->memory_mean, model->memory_rstd,
                        model_activation(model, last_encoder_stream), d_memory, src_rows);
    for (int l = c->layers - 1; l >= 0; l--) {
        const EncoderLayerViews *views = &model->encoder[l];
        const EncoderActs *acts = &model->encoder_acts[l];
        const ActivationView input_view = l == 0 ? model->src_input
                                      : model->encoder_acts[l - 1].sub[1].stream;
        const float *layer_input = model_activation(model, input_view);
        const float *x1 = model_activation(model, acts->sub[0].stream);
        float *d_in = sublayer_backward_begin(model, &acts->sub[1], views->norm[1], src_rows,
                                              dropout);
        feed_forward_sublayer_backward(model, acts->hidden, acts->hidden_keep,
                                       &views->feed_forward, d_in,
                                       sublayer_f_input(model, &acts->sub[1], x1), src_rows,
                                       dropout);
        sublayer_backward_end(model, &acts->sub[1], views->norm[1], x1, src_rows);
        d_in = sublayer_backward_begin(model, &acts->sub[0], views->norm[0], src_rows, dropout);
        const float *in = sublayer_f_input(model, &acts->sub[0], layer_input);
        attention_sublayer_backward(model, &acts->self_attn, &views->self_attn, d_in, d_in,
                                    in, in, &encoder_shape, dropout);
        sublayer_backward_end(model, &acts->sub[0], views->norm[0], layer_input, src_rows);
    }
}

void model_backward_from_logits(Model *model, const Batch *batch, bool dropout)
{
    const Config *c = &model->config;
    const int src_rows = batch->batch * batch->src_len;
    const int tgt_rows = batch->batch * batch->tgt_len;
    /* <<Back through the generator and the decoder's final norm>> */
    const float *d_logits = model_logits_gradient(model);
    float *d_decoded = model_activation(model, model->d_output);
    memset(d_decoded, 0, (size_t)tgt_rows * c->d_model * sizeof *d_decoded);
    linear_backward(d_decoded, model_gradient(model, model->generator.weight),
                    model_gradient(model, model->generator.bias), d_logits,
                    model_activation(model, model->decoded),
                    model_parameter(model, model->generator.weight), tgt_rows, c->d_model,
                    c->tgt_vocab);
    const ActivationView last_decoder_stream = model->decoder_acts[c->layers - 1].sub[2].stream;
    final_norm_backward(model, model->decoder_norm, model->decoded_mean, model->decoded_rstd,
                        model_activation(model, last_decoder_stream), d_decoded, tgt_rows);
    float *d_memory = model_activation(model, model->d_memory);
    memset(d_memory, 0, (size_t)src_rows * c->d_model * sizeof *d_memory);
    decoder_backward(model, batch, dropout, d_memory);
    embed_backward(model, model->tgt_embedding, model->tgt_input_keep, batch->tgt, tgt_rows,
                   dropout);
    encoder_backward(model, batch, dropout, d_memory);
    embed_backward(model, model->src_embedding, model->src_input_keep, batch->src, src_rows,
                   dropout);
}

double training_step_flops(const Config *config, int batch, int src_len, int tgt_len)
{
    const double B = batch, S = src_len, T = tgt_len, d = config->d_model;
    const double d_ff = config->d_ff, V = config->tgt_vocab, n_S = B * S, n_T = B * T;
    const double encoder = 4 * 2 * n_S * d * d + 2 * 2 * B * S * S * d
                         + 2 * 2 * n_S * d * d_ff;
    const double decoder = 4 * 2 * n_T * d * d + 2 * 2 * B * T * T * d
                         + (2 * 2 * n_T * d * d + 2 * 2 * n_S * d * d + 2 * 2 * B * T * S * d)
                         + 2 * 2 * n_T * d * d_ff;
    return 3 * (config->layers * (encoder + decoder) + 2 * n_T * d * V);
}
