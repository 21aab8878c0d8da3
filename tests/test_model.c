/* test_model.c -- Chapters 5 to 9: embeddings, positional encoding, attention, layer norm,
   feed-forward, the whole forward pass against PyTorch, parameter counts, safetensors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model.h"
#include "json.h"
#include "safetensors.h"
#include "tests.h"

/* A parameter's view and an activation's are types C does not mix: model_parameter(model,
   an_activation_view) does not compile (checked here when the tests compile). */
_Static_assert(_Generic((ParameterView){0}, ActivationView: 0, default: 1)
                   && _Generic((ActivationView){0}, ParameterView: 0, default: 1),
               "parameter and activation views are distinct types");

/* ---------------------------------------------------------------- small layers */

START_TEST(embedding_scales_rows)
{
    const float table[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {-1, 0, 1, 2}};
    const int tokens[2] = {2, 0};
    float out[2][4];
    embedding_forward(&out[0][0], tokens, &table[0][0], 2, 4, 3, sqrtf(4.0f));
    for (int i = 0; i < 4; i++) {
        ck_assert_float_eq(out[0][i], 2.0f * table[2][i]);   /* sqrt(4) = 2 */
        ck_assert_float_eq(out[1][i], 2.0f * table[0][i]);
    }
}
END_TEST

/* The equation of the embeddings chapter, evaluated independently here in double. */
START_TEST(positional_encoding_values)
{
    enum { LEN = 100, D = 20 };
    static float table[LEN][D];
    positional_encoding_table(&table[0][0], LEN, D);
    for (int i = 0; i < D; i++) ck_assert_float_eq(table[0][i], i % 2 ? 1.0f : 0.0f);
    for (int p = 0; p < LEN; p += 7)
        for (int i = 0; 2 * i < D; i++) {
            double w = exp(-2.0 * i / D * log(10000.0));
            ck_assert_double_eq_tol(table[p][2 * i], sin(p * w), 1e-6);
            ck_assert_double_eq_tol(table[p][2 * i + 1], cos(p * w), 1e-6);
        }
    /* an exercise of the embeddings chapter: PE[1][4] = sin(10000^(-4/20)), PE[1][5] = cos(...) */
    ck_assert_double_eq_tol(table[1][4], 0.15782664, 1e-7);
    ck_assert_double_eq_tol(table[1][5], 0.98746686, 1e-7);
    float x[2][3][D] = {{{0}}};
    positional_encoding_forward(&x[0][0][0], &table[0][0], 2, 3, D);
    ck_assert_mem_eq(x[1], table, sizeof x[1]);
}
END_TEST

START_TEST(softmax_rows_sum_to_one_and_mask_exactly)
{
    float s[3][4] = {{1, 2, 3, 4}, {0, -INFINITY, 100, -INFINITY},
                     {-INFINITY, -INFINITY, -INFINITY, -INFINITY}};
    softmax_rows(&s[0][0], &s[0][0], 3, 4);
    double sum = 0;
    for (int j = 0; j < 4; j++) sum += s[0][j];
    ck_assert_double_eq_tol(sum, 1.0, 1e-6);
    ck_assert_float_eq(s[1][1], 0.0f);
    ck_assert_float_eq(s[1][3], 0.0f);
    ck_assert_float_eq_tol(s[1][2], 1.0f, 1e-6f);
    for (int j = 0; j < 4; j++) ck_assert_float_eq(s[2][j], 0.0f);   /* all masked: zeros */
}
END_TEST

/* The worked example of the attention chapter (the course's numbers, printed to 5 digits). */
START_TEST(attention_worked_example)
{
    const float x_q[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const float x_k[2][4] = {{2, 1, 0, -1}, {4, 3, 2, 1}};
    float identity[4][4] = {{0}}, zero[4] = {0};
    for (int i = 0; i < 4; i++) identity[i][i] = 1;
    float *const w_i = &identity[0][0];
    const AttentionWeights w = {w_i, zero, w_i, zero, w_i, zero, w_i, zero};
    const uint8_t keep[2] = {1, 1};
    const Mask mask = {keep, 0, 0};
    float out[8], q[8], k[8], v[8], probs[8], context[8];
    const AttentionSaved saved = {q, k, v, probs, NULL, context, NULL};
    /* one head */
    const AttentionShape one = {.batch = 1, .len_q = 2, .len_k = 2, .d_model = 4, .heads = 1};
    attention_forward(out, &w, &saved, &x_q[0][0], &x_k[0][0], &mask, &one);
    const double one_head[4] = {4.5398e-05, 0.99995, 5.1091e-12, 1.0};
    for (int i = 0; i < 4; i++)   /* relative: the course prints 5 significant digits */
        ck_assert_msg(fabs(probs[i] - one_head[i]) <= 1e-4 * one_head[i],
                      "probs[%d] = %.6g, course %.6g", i, probs[i], one_head[i]);
    /* two heads */
    const AttentionShape two = {.batch = 1, .len_q = 2, .len_k = 2, .d_model = 4, .heads = 2};
    attention_forward(out, &w, &saved, &x_q[0][0], &x_k[0][0], &mask, &two);
    const double two_heads[8] = {1.4166e-02, 9.8583e-01, 1.7537e-07, 1.0,
                                 5.0197e-05, 9.9995e-01, 6.1266e-10, 1.0};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(fabs(probs[i] - two_heads[i]) <= 1e-4 * two_heads[i],
                      "probs[%d] = %.6g, course %.6g", i, probs[i], two_heads[i]);
    /* the output is the weighted sum of the values (here the keys, through identities) */
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 4; c++) {
            int head = c / 2;
            double expected = probs[(head * 2 + i) * 2 + 0] * x_k[0][c]
                            + probs[(head * 2 + i) * 2 + 1] * x_k[1][c];
            ck_assert_double_eq_tol(out[i * 4 + c], expected, 1e-5);
        }
}
END_TEST

/* Both formulas: statistics of the output, the saved mean and factor, and the ratio
   sqrt((d-1)/d) between them (an exercise of the layer-norm chapter). */
START_TEST(layernorm_formulas)
{
    enum { N = 3, D = 32 };
    float x[N][D], gain[D], bias[D], y_std[N][D], y_ann[N][D], mean[N], rstd_std[N], rstd_ann[N];
    Rng rng;
    rng_seed(&rng, 4, 4);
    for (int r = 0; r < N; r++)
        for (int i = 0; i < D; i++) x[r][i] = 3.0f + 2.0f * rng_normal(&rng);
    for (int i = 0; i < D; i++) gain[i] = 1, bias[i] = 0;
    const LayerNormWeights w = {gain, bias};
    const LayerNormSaved saved_std = {mean, rstd_std}, saved_ann = {mean, rstd_ann};
    layernorm_forward(&y_std[0][0], &w, &saved_std, &x[0][0], N, D, LAYERNORM_STANDARD, 0.0f);
    layernorm_forward(&y_ann[0][0], &w, &saved_ann, &x[0][0], N, D, LAYERNORM_ANNOTATED, 0.0f);
    for (int r = 0; r < N; r++) {
        double m = 0, v = 0, mu = 0;
        for (int i = 0; i < D; i++) mu += x[r][i];
        mu /= D;
        ck_assert_double_eq_tol(mean[r], mu, 1e-5);
        for (int i = 0; i < D; i++) m += y_std[r][i];
        for (int i = 0; i < D; i++) v += y_std[r][i] * y_std[r][i];
        ck_assert_double_eq_tol(m / D, 0.0, 1e-6);
        ck_assert_double_eq_tol(v / D, 1.0, 1e-5);            /* biased variance 1 */
        v = 0;
        for (int i = 0; i < D; i++) v += y_ann[r][i] * y_ann[r][i];
        ck_assert_double_eq_tol(v / (D - 1), 1.0, 1e-5);      /* unbiased variance 1 */
        ck_assert_double_eq_tol(rstd_ann[r] / rstd_std[r], sqrt((D - 1.0) / D), 1e-6);
    }
    /* eps: a constant row gives 0, not NaN, with either formula */
    float c[D], yc[D];
    for (int i = 0; i < D; i++) c[i] = 5.0f;
    for (int f = 0; f < 2; f++) {
        layernorm_forward(yc, &w, &saved_std, c, 1, D, (LayerNormFormula)f, 1e-6f);
        for (int i = 0; i < D; i++) ck_assert_float_eq(yc[i], 0.0f);
    }
}
END_TEST

START_TEST(log_softmax_rows_are_distributions)
{
    float x[2][5] = {{1, 2, 3, 4, 5}, {1000, -1000, 0, 3, 999}};
    log_softmax_rows(&x[0][0], 2, 5);
    for (int r = 0; r < 2; r++) {
        double sum = 0;
        for (int j = 0; j < 5; j++) {
            ck_assert(isfinite(x[r][j]) && x[r][j] <= 0);
            sum += exp(x[r][j]);
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-6);
    }
}
END_TEST

START_TEST(dropout_keeps_the_expectation)
{
    enum { N = 100000 };
    static float keep[N];
    Rng rng;
    rng_seed(&rng, 8, 2);
    dropout_mask(keep, N, 0.1f, &rng);
    double sum = 0;
    int zeros = 0;
    for (int i = 0; i < N; i++) {
        ck_assert(keep[i] == 0.0f || keep[i] == 1.0f / 0.9f);
        zeros += keep[i] == 0.0f;
        sum += keep[i];
    }
    ck_assert_int_le(abs(zeros - N / 10), 5 * 95);   /* binomial sd sqrt(N p (1-p)) = 95 */
    ck_assert_double_eq_tol(sum / N, 1.0, 5 * 0.0033);
}
END_TEST

/* ---------------------------------------------------------------- the whole model */

/* Load a golden fixture into a model configured from its metadata. */
static void load_fixture(Model *model, Safetensors *file, const char *variant)
{
    char path[256];
    snprintf(path, sizeof path, "tests/golden/model-%s.safetensors", variant);
    const char *error = safetensors_read(file, path);
    ck_assert_msg(error == NULL, "%s", error);
    Config config = fixture_config(file);
    model_init(model, config);
    error = safetensors_load(file, &model->parameters, path);
    ck_assert_msg(error == NULL, "%s", error);
}

static const SafetensorsEntry *entry(const Safetensors *file, const char *name, Dtype dtype,
                                     int ndim)
{
    const SafetensorsEntry *e = safetensors_find(file, name);
    ck_assert_msg(e != NULL && e->dtype == dtype && e->ndim == ndim, "fixture lacks %s", name);
    return e;
}

/* |got - expected| <= 1e-5 max(1, |expected|) for every value (the model chapter's parity section). */
static void assert_close(const float *got, const SafetensorsEntry *expected, const char *what)
{
    const float *want = (const float *)expected->data;
    for (size_t i = 0; i < expected->size; i++) {
        double error = fabs((double)got[i] - want[i]) / fmax(1.0, fabs(want[i]));
        ck_assert_msg(error <= 1e-5, "%s[%zu]: %.8g vs PyTorch %.8g", what, i, got[i], want[i]);
    }
}

START_TEST(forward_matches_pytorch)
{
    static const char *const variants[] = {"pre-standard", "pre-annotated", "post-standard",
                                           "post-annotated"};
    const char *variant = variants[_i];
    Model model;
    Safetensors file;
    load_fixture(&model, &file, variant);
    const SafetensorsEntry *src = entry(&file, "input.src", DTYPE_I32, 2);
    const SafetensorsEntry *tgt = entry(&file, "input.tgt", DTYPE_I32, 2);
    const int batch = src->shape[0], src_len = src->shape[1], tgt_len = tgt->shape[1];
    int pad = fixture_metadata_int(&file, "pad", -1);
    uint8_t *src_keep = malloc((size_t)batch * src_len);
    uint8_t *tgt_keep = malloc((size_t)batch * tgt_len * tgt_len);
    padding_mask(src_keep, (const int *)src->data, batch, src_len, pad);
    target_mask(tgt_keep, (const int *)tgt->data, batch, tgt_len, pad);
    model_prepare(&model, batch, src_len, tgt_len);
    const float *logprobs = test_forward(&model, (const int *)src->data, (const int *)tgt->data,
                                         src_keep, tgt_keep, batch, src_len, tgt_len, NULL);
    assert_close(model_activation(&model, model.memory),
                 entry(&file, "expected.memory", DTYPE_F32, 3), "memory");
    assert_close(model_activation(&model, model.decoded),
                 entry(&file, "expected.decoded", DTYPE_F32, 3), "decoded");
    assert_close(logprobs, entry(&file, "expected.logprobs", DTYPE_F32, 3), "logprobs");
    /* the decoder's self-attention weights: every row sums to one, and masked keys (later
       positions, padding) get exactly zero */
    const int heads = model.config.heads;
    const float *probs = model_activation(&model, model.decoder_acts[0].self_attn.probs);
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < tgt_len; i++) {
                const float *row = probs + (((size_t)b * heads + h) * tgt_len + i) * tgt_len;
                double sum = 0;
                for (int j = 0; j < tgt_len; j++) {
                    sum += row[j];
                    if (!tgt_keep[((size_t)b * tgt_len + i) * tgt_len + j])
                        ck_assert_float_eq(row[j], 0.0f);
                }
                ck_assert_double_eq_tol(sum, 1.0, 1e-6);
            }
    /* and every row of log-probabilities is a distribution */
    for (int r = 0; r < batch * tgt_len; r++) {
        double sum = 0;
        for (int w = 0; w < model.config.tgt_vocab; w++) sum += exp(logprobs[r * model.config.tgt_vocab + w]);
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
    free(src_keep);
    free(tgt_keep);
    safetensors_free(&file);
    model_free(&model);
}
END_TEST

/* The two formulas differ visibly on the same weights: loading the annotated fixture with
   the standard formula must NOT match (the test above could not tell them apart otherwise). */
START_TEST(layernorm_formula_matters_for_parity)
{
    Model model;
    Safetensors file;
    load_fixture(&model, &file, "pre-annotated");
    model.config.layernorm = LAYERNORM_STANDARD;
    const SafetensorsEntry *src = entry(&file, "input.src", DTYPE_I32, 2);
    const SafetensorsEntry *tgt = entry(&file, "input.tgt", DTYPE_I32, 2);
    const int batch = src->shape[0], src_len = src->shape[1], tgt_len = tgt->shape[1];
    uint8_t src_keep[64], tgt_keep[256];
    padding_mask(src_keep, (const int *)src->data, batch, src_len, 0);
    target_mask(tgt_keep, (const int *)tgt->data, batch, tgt_len, 0);
    model_prepare(&model, batch, src_len, tgt_len);
    const float *logprobs = test_forward(&model, (const int *)src->data, (const int *)tgt->data,
                                         src_keep, tgt_keep, batch, src_len, tgt_len, NULL);
    const SafetensorsEntry *expected = entry(&file, "expected.logprobs", DTYPE_F32, 3);
    double worst = 0;
    for (size_t i = 0; i < expected->size; i++)
        worst = fmax(worst, fabs(logprobs[i] - ((const float *)expected->data)[i]));
    ck_assert_msg(worst > 1e-3, "formulas indistinguishable: %g", worst);
    safetensors_free(&file);
    model_free(&model);
}
END_TEST

/* Dropout: off in evaluation (same output twice); on in training (different); p = 0 in
   training equals evaluation. */
START_TEST(dropout_only_in_training)
{
    Model model;
    Safetensors file;
    load_fixture(&model, &file, "pre-standard");
    const SafetensorsEntry *src = entry(&file, "input.src", DTYPE_I32, 2);
    const SafetensorsEntry *tgt = entry(&file, "input.tgt", DTYPE_I32, 2);
    const int batch = src->shape[0], src_len = src->shape[1], tgt_len = tgt->shape[1];
    const size_t n = (size_t)batch * tgt_len * model.config.tgt_vocab;
    uint8_t src_keep[64], tgt_keep[256];
    padding_mask(src_keep, (const int *)src->data, batch, src_len, 0);
    target_mask(tgt_keep, (const int *)tgt->data, batch, tgt_len, 0);
    model_prepare(&model, batch, src_len, tgt_len);
    float *eval = malloc(n * sizeof *eval), *train = malloc(n * sizeof *train);
    memcpy(eval, test_forward(&model, (const int *)src->data, (const int *)tgt->data, src_keep,
                              tgt_keep, batch, src_len, tgt_len, NULL), n * sizeof *eval);
    Rng rng;
    rng_seed(&rng, 1, 2);
    const Dropout dropout = {&rng, 0, 0};
    memcpy(train, test_forward(&model, (const int *)src->data, (const int *)tgt->data, src_keep,
                               tgt_keep, batch, src_len, tgt_len, &dropout), n * sizeof *train);
    ck_assert(memcmp(eval, train, n * sizeof *eval) != 0);
    /* the saved weights are those before dropout: rows still sum to one */
    const float *probs = model_activation(&model, model.encoder_acts[0].self_attn.probs);
    for (int r = 0; r < batch * model.config.heads * src_len; r++) {
        double sum = 0;
        for (int j = 0; j < src_len; j++) sum += probs[r * src_len + j];
        ck_assert_double_eq_tol(sum, 1.0, 1e-6);
    }
    model.config.dropout = 0.0f;
    memcpy(train, test_forward(&model, (const int *)src->data, (const int *)tgt->data, src_keep,
                               tgt_keep, batch, src_len, tgt_len, &dropout), n * sizeof *train);
    ck_assert_mem_eq(eval, train, n * sizeof *eval);
    free(eval);
    free(train);
    safetensors_free(&file);
    model_free(&model);
}
END_TEST

/* Layout: the views have the reference's names and shapes. */
START_TEST(parameters_have_pytorch_names_and_shapes)
{
    Model model;
    Config config = config_default(11, 13, 2);
    config.d_model = 32, config.d_ff = 64, config.heads = 4, config.max_len = 16;
    model_init(&model, config);
    const FlatBuffer *p = &model.parameters;
    static const struct { const char *name; int ndim, d0, d1; } expected[] = {
        {"encoder.layers.0.self_attn.linears.0.weight", 2, 32, 32},
        {"encoder.layers.1.feed_forward.w_1.weight", 2, 64, 32},
        {"encoder.layers.1.feed_forward.w_2.bias", 1, 32, 0},
        {"encoder.layers.0.sublayer.1.norm.a_2", 1, 32, 0},
        {"encoder.norm.b_2", 1, 32, 0},
        {"decoder.layers.1.src_attn.linears.3.weight", 2, 32, 32},
        {"decoder.layers.0.sublayer.2.norm.b_2", 1, 32, 0},
        {"src_embed.0.lut.weight", 2, 11, 32},
        {"tgt_embed.0.lut.weight", 2, 13, 32},
        {"generator.proj.weight", 2, 13, 32},
        {"generator.proj.bias", 1, 13, 0},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        int v = flat_find(p, expected[i].name);
        ck_assert_msg(v >= 0, "no view %s", expected[i].name);
        ck_assert_int_eq(p->views[v].ndim, expected[i].ndim);
        ck_assert_int_eq(p->views[v].shape[0], expected[i].d0);
        if (expected[i].ndim == 2) ck_assert_int_eq(p->views[v].shape[1], expected[i].d1);
    }
    ck_assert_int_eq(p->count, 92);   /* the pre-norm fixture: 97 tensors, 5 of them data */
    model_free(&model);
    config.tie_generator = true;
    config.norm = NORM_POST;
    model_init(&model, config);
    ck_assert_int_eq(flat_find(&model.parameters, "generator.proj.weight"), -1);
    ck_assert_int_eq(flat_find(&model.parameters, "encoder.norm.a_2"), -1);
    ck_assert_int_eq(model.generator.weight.index, model.tgt_embedding.index);
    model_free(&model);
}
END_TEST

/* Table 8.1: our counts equal the PyTorch statement's, read from the golden file. */
START_TEST(parameter_counts_match_pytorch)
{
    FILE *counts = fopen("tests/golden/parameter-counts.txt", "r");
    ck_assert_msg(counts != NULL, "cannot open tests/golden/parameter-counts.txt");
    char line[256];
    int checked = 0;
    while (fgets(line, sizeof line, counts)) {
        if (line[0] == '#') continue;
        char name[32];
        int src_vocab, tgt_vocab, layers, d_model, d_ff, heads;
        unsigned long long pytorch;
        ck_assert_int_eq(sscanf(line, "%31s %d %d %d %d %d %d %llu", name, &src_vocab, &tgt_vocab,
                                &layers, &d_model, &d_ff, &heads, &pytorch), 8);
        Config config = config_default(src_vocab, tgt_vocab, layers);
        config.d_model = d_model, config.d_ff = d_ff, config.heads = heads, config.max_len = 8;
        Model model;
        model_init(&model, config);
        ck_assert_msg(model_parameter_count(&model) == pytorch, "%s: %zu vs PyTorch %llu", name,
                      model_parameter_count(&model), pytorch);
        model_free(&model);
        checked++;
    }
    fclose(counts);
    ck_assert_int_eq(checked, 3);
}
END_TEST

/* Xavier: every matrix within its bound, with about the right variance; norms 1 and 0. */
START_TEST(initialization_follows_xavier)
{
    Model model;
    Config config = config_default(11, 13, 1);
    config.d_model = 32, config.d_ff = 64, config.heads = 4, config.max_len = 8;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 42, 0);
    model_initialize_parameters(&model, &rng);
    for (int i = 0; i < model.parameters.count; i++) {
        const TensorView *view = &model.parameters.views[i];
        const float *x = model_parameter(&model, (ParameterView){i});
        if (view->ndim != 2) continue;
        double a = sqrt(6.0 / (view->shape[0] + view->shape[1])), sum2 = 0;
        for (size_t j = 0; j < view->size; j++) {
            ck_assert_msg(fabs(x[j]) <= a, "%s outside its Xavier bound", view->name);
            sum2 += (double)x[j] * x[j];
        }
        double variance = sum2 / view->size, expected = a * a / 3;
        ck_assert_msg(fabs(variance - expected) < 0.25 * expected, "%s variance %g vs %g",
                      view->name, variance, expected);
    }
    const float *gain = model_parameter(&model, model.encoder[0].norm[0].gain);
    const float *bias = model_parameter(&model, model.encoder[0].norm[0].bias);
    ck_assert_float_eq(gain[5], 1.0f);
    ck_assert_float_eq(bias[5], 0.0f);
    model_free(&model);
}
END_TEST

/* ---------------------------------------------------------------- safetensors */

START_TEST(safetensors_round_trip)
{
    Model model;
    Safetensors file;
    Error scratch;
    load_fixture(&model, &file, "post-standard");
    char path[] = "/tmp/transformer-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const char *const metadata[][2] = {{"norm", "post"}, {"layernorm", "standard"}};
    const char *error = safetensors_write(path, &model.parameters, metadata, 2, &scratch);
    ck_assert_msg(error == NULL, "%s", error);
    Safetensors again;
    error = safetensors_read(&again, path);
    ck_assert_msg(error == NULL, "%s", error);
    ck_assert_int_eq(again.count, model.parameters.count);
    char value[16];
    ck_assert(safetensors_metadata(&again, "norm", value, sizeof value));
    ck_assert_str_eq(value, "post");
    for (int i = 0; i < model.parameters.count; i++) {
        const SafetensorsEntry *e = safetensors_find(&again, model.parameters.views[i].name);
        const SafetensorsEntry *original = safetensors_find(&file, model.parameters.views[i].name);
        ck_assert_ptr_nonnull(e);
        ck_assert_mem_eq(e->data, original->data, e->size * sizeof(float));
    }
    /* the data start on an 8-byte boundary after the padded header */
    ck_assert_uint_eq(((uintptr_t)(again.entries[0].data - again.bytes)) % 8, 0);
    safetensors_free(&again);
    safetensors_free(&file);
    model_free(&model);
    unlink(path);
}
END_TEST

/* A part stored as bfloat16: dtype BF16, two bytes a number, the checksum of the bytes
   written, and a load that gives each float rounded to the nearest bfloat16 (ties to even):
   within 2^-8 of it relatively, and exactly the float when it already was a bfloat16. */
START_TEST(safetensors_bf16_round_trip)
{
    Model model, again_model;
    Safetensors file, scratch, again;
    load_fixture(&model, &file, "post-standard");
    load_fixture(&again_model, &scratch, "post-standard");
    safetensors_free(&scratch);
    char path[] = "/tmp/transformer-test-XXXXXX";
    close(mkstemp(path));
    const SafetensorsPart part = {"", &model.parameters, true};
    const char *error = safetensors_write_parts(path, &part, 1, NULL, 0, &scratch.error);
    ck_assert_msg(error == NULL, "%s", error);
    ck_assert_ptr_null(safetensors_read(&again, path));
    ck_assert_int_eq(again.entries[0].dtype, DTYPE_BF16);
    size_t numbers = 0;
    for (int i = 0; i < model.parameters.count; i++) numbers += model.parameters.views[i].size;
    ck_assert_uint_eq(again.data_size, numbers * 2);
    ck_assert_uint_eq(safetensors_checksum(&again),
                      safetensors_checksum_parts(&part, 1, NULL, 0));
    memset(again_model.parameters.data, 0, again_model.parameters.total * sizeof(float));
    ck_assert_ptr_null(safetensors_load(&again, &again_model.parameters, path));
    const float *x = model.parameters.data, *y = again_model.parameters.data;
    for (size_t i = 0; i < model.parameters.total; i++) {
        ck_assert_float_eq(y[i], float_from_bf16(bf16_from_float(x[i])));
        ck_assert(fabsf(y[i] - x[i]) <= ldexpf(fabsf(x[i]), -8));   /* half a unit of 2^-7 */
        ck_assert_float_eq(float_from_bf16(bf16_from_float(y[i])), y[i]);
    }
    safetensors_free(&again);
    safetensors_free(&file);
    model_free(&model), model_free(&again_model);
    unlink(path);
}
END_TEST

/* The JSON reader: escapes, surrogate pairs and numbers read as JSON means them; every
   malformed text refused, deep nesting included, and nothing after the value but spaces. */
START_TEST(json_reads_json_and_refuses_the_rest)
{
    static const char text[] =
        " {\"a\\u00e9\\ud83d\\ude00\": [1, -2.5e3, 0.25, true, false, null, \"\\\"\\\\\\/\\t\"],"
        " \"b\": {}, \"a\\u00e9\\ud83d\\ude00\": 7}   ";
    Json json;
    ck_assert_ptr_null(json_parse(&json, text, strlen(text)));
    const JsonValue *root = &json.values[0];
    ck_assert_int_eq(root->type, JSON_OBJECT);
    ck_assert_int_eq(root->count, 3);
    const JsonValue *a = json_member(&json, root, "a\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_ptr_nonnull(a);   /* the first of the two members of that name */
    ck_assert_int_eq(a->type, JSON_ARRAY);
    ck_assert_int_eq(a->count, 7);
    ck_assert(json_element(&json, a, 0)->number == 1);
    ck_assert(json_element(&json, a, 1)->number == -2500);
    ck_assert(json_element(&json, a, 2)->number == 0.25);
    ck_assert_int_eq(json_element(&json, a, 3)->type, JSON_TRUE);
    ck_assert_int_eq(json_element(&json, a, 5)->type, JSON_NULL);
    ck_assert_str_eq(json_element(&json, a, 6)->text, "\"\\/\t");
    ck_assert_ptr_null(json_element(&json, a, 7));
    ck_assert_int_eq(json_member(&json, root, "b")->count, 0);
    ck_assert_ptr_null(json_member(&json, root, "c"));
    json_free(&json);
    static const char *const bad[] = {
        "", "{", "{\"a\" 1}", "{\"a\":1,}", "[1 2]", "[01]", "[1.]", "[.5]", "[1e]", "[-]",
        "[tru]", "\"\\ud83d\"", "\"\\ude00\"", "\"\\u0000\"", "\"\\x\"", "\"a\tb\"", "\"open",
        "{} {}", "[1] x", "{1:2}", "\"\\u12g4\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(json_parse(&json, bad[i], strlen(bad[i])) != NULL, "accepted: %s", bad[i]);
    char deep[200];
    memset(deep, '[', 100), memset(deep + 100, ']', 100);
    ck_assert_ptr_nonnull(json_parse(&json, deep, sizeof deep));
    memset(deep, '[', 60), memset(deep + 60, ']', 60);
    ck_assert_ptr_null(json_parse(&json, deep, 120));
    json_free(&json);
}
END_TEST

/* Corrupt files are refused with one line naming the file and the problem. */
START_TEST(safetensors_refuses_bad_files)
{
    FILE *in = fopen("tests/golden/model-pre-standard.safetensors", "rb");
    ck_assert_ptr_nonnull(in);
    static unsigned char bytes[1 << 20];
    size_t length = fread(bytes, 1, sizeof bytes, in);
    fclose(in);
    char path[] = "/tmp/transformer-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    static const struct { size_t keep; int poke_at; unsigned char poke; const char *says; } cases[] = {
        {5, -1, 0, "too short"},
        {100, -1, 0, "does not fit"},
        {0, -1, 0, "data_offsets outside the data"},   /* keep = length - 1, below */
        {0, 9, '[', "not a JSON object"},
    };
    for (int c = 0; c < 4; c++) {
        size_t keep = cases[c].keep ? cases[c].keep : c == 2 ? length - 1 : length;
        unsigned char saved = bytes[cases[c].poke_at >= 0 ? cases[c].poke_at : 0];
        if (cases[c].poke_at >= 0) bytes[cases[c].poke_at] = cases[c].poke;
        FILE *out = fopen(path, "wb");
        ck_assert_uint_eq(fwrite(bytes, 1, keep, out), keep);
        fclose(out);
        if (cases[c].poke_at >= 0) bytes[cases[c].poke_at] = saved;
        Safetensors file;
        const char *error = safetensors_read(&file, path);
        ck_assert_msg(error != NULL, "case %d accepted", c);
        ck_assert_msg(strncmp(error, path, strlen(path)) == 0, "does not name the file: %s", error);
        ck_assert_msg(strstr(error, cases[c].says) != NULL, "case %d: %s", c, error);
        ck_assert_ptr_null(strchr(error, '\n'));
        safetensors_free(&file);
    }
    /* headers that parse but lie: fractions, strings, a shape larger than the file */
    static const char *const lies[][2] = {
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", "bad shape"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[\"a\",\"b\"]}}",
         "data_offsets outside"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[536870912,536870912,16],"
         "\"data_offsets\":[0,0]}}", "bad shape"},
        {"{\"x\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", "unsupported dtype"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", "disagree"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", "larger than the file"},
        {"{\"__metadata__\":{\"a\":\"1\"},\"__metadata__\":{\"a\":\"2\"}}",
         "'__metadata__' twice"},   /* found by fuzz-checkpoint: the first one leaked */
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", "named twice"},
    };
    for (size_t c = 0; c < sizeof lies / sizeof lies[0]; c++) {
        FILE *out = fopen(path, "wb");
        unsigned long long n = strlen(lies[c][0]);
        for (int i = 0; i < 8; i++) fputc((int)(n >> (8 * i)) & 0xff, out);
        fputs(lies[c][0], out);
        for (int i = 0; i < 8; i++) fputc(0, out);   /* 8 bytes of data */
        fclose(out);
        Safetensors file;
        const char *error = safetensors_read(&file, path);
        ck_assert_msg(error && strstr(error, lies[c][1]), "lie %zu: %s", c, error ? error : "accepted");
        safetensors_free(&file);
    }
    Safetensors file;
    const char *error = safetensors_read(&file, "/nonexistent/model.safetensors");
    ck_assert(error && strstr(error, "/nonexistent/model.safetensors: cannot open"));
    safetensors_free(&file);
    /* a model of another shape: one clear line naming the tensor */
    Model model;
    Config config = config_default(11, 13, 2);
    config.d_model = 16, config.d_ff = 64, config.heads = 4, config.max_len = 8;
    model_init(&model, config);
    ck_assert(safetensors_read(&file, "tests/golden/model-pre-standard.safetensors") == NULL);
    error = safetensors_load(&file, &model.parameters, "fixture");
    ck_assert(error && strstr(error, "has the wrong dtype or shape"));
    safetensors_free(&file);
    model_free(&model);
    unlink(path);
}
END_TEST

Suite *model_suite(void)
{
    Suite *suite = suite_create("model");
    TCase *layers = tcase_create("layers");
    tcase_add_test(layers, embedding_scales_rows);
    tcase_add_test(layers, positional_encoding_values);
    tcase_add_test(layers, softmax_rows_sum_to_one_and_mask_exactly);
    tcase_add_test(layers, attention_worked_example);
    tcase_add_test(layers, layernorm_formulas);
    tcase_add_test(layers, log_softmax_rows_are_distributions);
    tcase_add_test(layers, dropout_keeps_the_expectation);
    suite_add_tcase(suite, layers);
    TCase *whole = tcase_create("whole model");
    tcase_add_loop_test(whole, forward_matches_pytorch, 0, 4);
    tcase_add_test(whole, layernorm_formula_matters_for_parity);
    tcase_add_test(whole, dropout_only_in_training);
    tcase_add_test(whole, parameters_have_pytorch_names_and_shapes);
    tcase_add_test(whole, parameter_counts_match_pytorch);
    tcase_add_test(whole, initialization_follows_xavier);
    tcase_set_timeout(whole, 60);
    suite_add_tcase(suite, whole);
    TCase *st = tcase_create("safetensors");
    tcase_add_test(st, safetensors_round_trip);
    tcase_add_test(st, safetensors_bf16_round_trip);
    tcase_add_test(st, safetensors_refuses_bad_files);
    tcase_add_test(st, json_reads_json_and_refuses_the_rest);
    suite_add_tcase(suite, st);
    return suite;
}
