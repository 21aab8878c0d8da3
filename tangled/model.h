/* The encoder-decoder Transformer assembled from the layers.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef MODEL_H
#define MODEL_H
#include "batch.h"
#include "layers.h"

/* <<model.h declarations>> */
typedef enum { NORM_PRE, NORM_POST } NormPlacement;

typedef struct {
    int src_vocab, tgt_vocab;   /* V for the source and the target */
    int layers;                 /* N, in the encoder and in the decoder */
    int d_model, d_ff, heads;
    int max_len;                /* longest sequence: rows of the positional table */
    float dropout;              /* p_drop, used only in training */
    NormPlacement norm;
    LayerNormFormula layernorm;
    float layernorm_eps;
    bool tie_generator;
    bool tie_source;            /* the source embedding is the target's table too */
    bool unscaled_attention;    /* the --no-scale experiment: scores without 1/sqrt(d_k) */
    bool unscaled_embedding;    /* the --no-embed-scale experiment: embeddings without
                                   sqrt(d_model) */
} Config;

/* The base model's sizes with the reference's dropout and eps, for given vocabularies and
   N; the standard layer-norm formula (LAYERNORM_ANNOTATED gives the reference's). */
Config config_default(int src_vocab, int tgt_vocab, int layers);

/* The factor of the embeddings: sqrt(d_model), or 1 in the --no-embed-scale experiment. */
float embedding_scale(const Config *c);

typedef enum { CONFIG_INT, CONFIG_FLOAT, CONFIG_BOOL, CONFIG_CHOICE } ConfigType;
/* The limits of a model's numbers in a file: twice the reference's max_len, and a bound on
   any other size, so that no file can make a reader allocate without limit. */
enum { CONFIG_MAX_LEN = 10000, CONFIG_MAX_SIZE = 10000000 };

typedef struct {
    const char *name;        /* the key in a checkpoint, after "config." */
    const char *alias;       /* the key in a model file; NULL: not in model files */
    ConfigType type;
    size_t offset;           /* of the field in Config */
    double least, most;      /* a number's limits, both allowed (a decimal: below most) */
    bool above_least;        /* a decimal must be above least, not equal to it */
    const char *words[2];    /* the texts of 0 and 1 (false and true) */
    double fallback;         /* the default */
    bool optional;           /* a file may leave the key out, meaning the default */
    int since;               /* the model file's version that added the key */
} ConfigKey;

extern const ConfigKey config_keys[];
extern const int config_key_count;
/* The value of key's field in config, as a double (a word's 0 or 1), and setting it. */
double config_get(const Config *config, const ConfigKey *key);
void config_set(Config *config, const ConfigKey *key, double value);

typedef struct { int index; } ParameterView;    /* a view of parameters and gradients */
typedef struct { int index; } ActivationView;   /* a view of the activations */
typedef struct { ParameterView weight, bias; } LinearViews;
typedef struct { ParameterView gain, bias; } NormViews;   /* the reference's a_2, b_2 */
typedef struct { LinearViews linears[4]; } AttentionViews;
typedef struct { LinearViews w_1, w_2; } FeedForwardViews;
typedef struct {
    AttentionViews self_attn;
    FeedForwardViews feed_forward;
    NormViews norm[2];                                     /* sublayer.0, sublayer.1 */
} EncoderLayerViews;
typedef struct {
    AttentionViews self_attn, src_attn;
    FeedForwardViews feed_forward;
    NormViews norm[3];
} DecoderLayerViews;

/* <<Activation views>> */
typedef struct {
    ActivationView q, k, v, probs, probs_keep, probs_dropped, context;
} AttentionActs;
typedef struct {
    ActivationView normed;      /* pre: LN(x), the sublayer's input; post: x + dropout(F(x)) */
    ActivationView mean, rstd;  /* the norm's saved statistics */
    ActivationView output;      /* F(...) */
    ActivationView keep;        /* its dropout pattern */
    ActivationView stream;      /* the residual stream after the sublayer */
} SublayerActs;
typedef struct {
    AttentionActs self_attn;
    SublayerActs sub[2];
    ActivationView hidden, hidden_keep;
} EncoderActs;
typedef struct {
    AttentionActs self_attn, src_attn;
    SublayerActs sub[3];
    ActivationView hidden, hidden_keep;
} DecoderActs;

typedef struct {
    Config config;
    FlatBuffer parameters;
    FlatBuffer gradients;                /* the same views as parameters */
    EncoderLayerViews *encoder;          /* [layers] */
    DecoderLayerViews *decoder;          /* [layers] */
    NormViews encoder_norm, decoder_norm; /* pre-norm only; -1 otherwise */
    ParameterView src_embedding, tgt_embedding;   /* [vocab][d_model] */
    LinearViews generator;               /* weight = tgt_embedding when tied */
    float *positional;                   /* [max_len][d_model], not a parameter */
    /* <<Activation fields of the model>> */
    FlatBuffer activations;
    int max_batch, max_src_len, max_tgt_len;   /* what the activations were laid out for */
    int max_src_tokens, max_tgt_tokens;        /* ... and at most this many rows in all */
    EncoderActs *encoder_acts;                 /* [layers] */
    DecoderActs *decoder_acts;                 /* [layers] */
    ActivationView src_input, src_input_keep, tgt_input, tgt_input_keep;   /* embedded, + PE */
    ActivationView memory, memory_mean, memory_rstd;   /* the encoder's output (after its norm) */
    ActivationView decoded, decoded_mean, decoded_rstd;   /* the decoder's (after its norm) */
    ActivationView logprobs;                           /* [B][T_tgt][tgt_vocab] */
    /* <<Gradient scratch views>> */
    ActivationView d_stream, d_normed, d_output, d_memory, d_hidden, d_logits;
    ActivationView d_context, d_q, d_k, d_v, d_p;
} Model;

/* NULL if config describes a model, else what is wrong with it, written into message
   (size bytes), which is returned. */
const char *config_problem(const Config *config, Error *message);
/* Lay out and allocate, all zero; config must be one that config_problem accepts. */
void model_init(Model *model, Config config);
void model_free(Model *model);
float *model_parameter(const Model *model, ParameterView view);

/* A layer's weights from its views in buffer: model->parameters for the weights,
   model->gradients for their gradients. */
AttentionWeights attention_weights(const FlatBuffer *buffer, const AttentionViews *views);
FeedForwardWeights feed_forward_weights(const FlatBuffer *buffer,
                                        const FeedForwardViews *views);
LayerNormWeights layernorm_weights(const FlatBuffer *buffer, NormViews views);

void model_initialize_parameters(Model *model, Rng *rng);
size_t model_parameter_count(const Model *model);

/* Lay out and allocate the activations for batches of up to max_batch sequences. */
void model_prepare(Model *model, int max_batch, int max_src_len, int max_tgt_len);
/* The same for batches that also hold at most max_src_tokens and max_tgt_tokens positions
   in all (batch * length), which is what bounds memory when long sentences come in small
   batches and short ones in large batches (as in the translation chapter). */
void model_prepare_tokens(Model *model, int max_batch, int max_src_len, int max_tgt_len,
                          int max_src_tokens, int max_tgt_tokens);
float *model_activation(const Model *model, ActivationView view);

/* A training pass's dropout: the stream its patterns are drawn from, and the rows of the
   whole batch before and after the pass's own, whose draws it skips (0 and 0 when the pass
   holds the whole batch). */
typedef struct {
    Rng *rng;
    int rows_before, rows_after;
} Dropout;

/* The forward pass: log-probabilities [B][T_tgt][tgt_vocab], returned (a view of the
   activations), of batch (its tgt_y is not read); dropout: NULL in evaluation. */
const float *model_forward(Model *model, const Batch *batch, const Dropout *dropout);

/* The encoder's pass alone, in evaluation: the memory [B][T_src][d_model] of source,
   returned (a view of the activations). */
const float *model_encode(Model *model, const SourceBatch *source);

/* What a sublayer F reads: LN(x) into normed, its statistics into saved (pre-norm), or x
   itself (post-norm); x, normed: [rows][d_model]. */
const float *model_sublayer_input(const Model *model, NormViews norm, float *normed,
                                  const LayerNormSaved *saved, const float *x, int rows);
/* The residual around F, whose output is f: x + f into stream (pre-norm), or LN(x + f) into
   stream through scratch, its statistics into saved (post-norm); keep: f's dropout
   pattern, applied to f on the way, or NULL. All [rows][d_model]; stream may be x. */
void model_sublayer_residual(const Model *model, NormViews norm, float *stream,
                             float *scratch, const LayerNormSaved *saved, const float *x,
                             float *f, const float *keep, int rows);

void model_zero_gradients(Model *model);
/* Add the gradients of the loss whose gradient with respect to the log-probabilities of the
   last model_forward is d_logprobs ([B][T_tgt][tgt_vocab]); batch: that call's, and dropout
   whether it drew dropout patterns (its dropout was not NULL). */
void model_backward(Model *model, const float *d_logprobs, const Batch *batch, bool dropout);
/* The same from the gradient with respect to the logits, written beforehand into
   model_logits_gradient(model) ([B][T_tgt][tgt_vocab]). */
void model_backward_from_logits(Model *model, const Batch *batch, bool dropout);
float *model_logits_gradient(const Model *model);
float *model_gradient(const Model *model, ParameterView view);

/* The floating-point operations of the matrix products of one training step (forward and
   backward) on a batch of batch pairs, sources of src_len and decoder inputs of tgt_len. */
double training_step_flops(const Config *config, int batch, int src_len, int tgt_len);
#endif
