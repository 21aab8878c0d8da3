/* test_gradients.c -- the chapter "Checking gradients": every backward by finite
   differences, and the whole model's gradients against PyTorch's (golden fixtures). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gradcheck.h"
#include "safetensors.h"
#include "tests.h"

/* Each layer's backward against central differences: e < 1e-2 (Equation 9.2). */
START_TEST(layer_gradients_match_finite_differences)
{
    const char *name = gradcheck_layer_names[_i];
    double e = gradcheck_layer(name, 40, 1e-2f, NULL);
    ck_assert_msg(e >= 0 && e < GRADCHECK_LAYER_BOUND, "%s: e = %g", name, e);
}
END_TEST

/* The whole model, all four variants (one with a tied generator) and a fifth with one table
   for the source embedding, the target embedding and the generator, dropout on: e < 5e-2. */
START_TEST(model_gradients_match_finite_differences)
{
    const NormPlacement norm = _i & 1 ? NORM_POST : NORM_PRE;
    const LayerNormFormula formula = _i & 2 ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD;
    double e = gradcheck_model(norm, formula, _i == 0 ? 1 : _i == 4 ? 2 : 0, 6, 1e-2f, NULL);
    ck_assert_msg(e < GRADCHECK_MODEL_BOUND, "variant %d: e = %g", _i, e);
}
END_TEST

/* A deliberately wrong gradient must fail the check: the checker can say no. */
static double zero_loss_fn(void *context) { return ((FlatBuffer *)context)->data[0] * 3.0; }
static void wrong_gradient_fn(void *context) { (void)context; }
START_TEST(gradcheck_detects_a_wrong_gradient)
{
    FlatBuffer vars = {0}, grads = {0};
    flat_add(&vars, "x", 1, (int[]){1});
    flat_allocate(&vars);
    flat_allocate_like(&grads, &vars);
    GradcheckProblem problem = {&vars, &grads, zero_loss_fn, wrong_gradient_fn, &vars};
    Rng rng;
    rng_seed(&rng, 1, 1);
    ck_assert_double_gt(gradcheck(&problem, 3, 1e-2f, &rng, NULL), 0.5);   /* dL/dx = 3, not 0 */
    flat_free(&vars);
    flat_free(&grads);
}
END_TEST

/* Loss and every parameter's gradient against PyTorch, Equation 9.3. */
START_TEST(gradients_match_pytorch)
{
    static const char *const variants[] = {"pre-standard", "pre-annotated", "post-standard",
                                           "post-annotated", "pre-standard-tied"};
    char path[256];
    snprintf(path, sizeof path, "tests/golden/model-%s.safetensors", variants[_i]);
    Safetensors file;
    const char *error = safetensors_read(&file, path);
    ck_assert_msg(error == NULL, "%s", error);
    Config config = fixture_config(&file);
    Model model;
    model_init(&model, config);
    error = safetensors_load(&file, &model.parameters, path);
    ck_assert_msg(error == NULL, "%s", error);
    const SafetensorsEntry *src = safetensors_find(&file, "input.src");
    const SafetensorsEntry *tgt = safetensors_find(&file, "input.tgt");
    const SafetensorsEntry *tgt_y = safetensors_find(&file, "input.tgt_y");
    const SafetensorsEntry *loss = safetensors_find(&file, "expected.loss");
    ck_assert(src && tgt && tgt_y && loss);
    const int batch = src->shape[0], src_len = src->shape[1], tgt_len = tgt->shape[1];
    uint8_t src_keep[64], tgt_keep[256];
    padding_mask(src_keep, (const int *)src->data, batch, src_len, 0);
    target_mask(tgt_keep, (const int *)tgt->data, batch, tgt_len, 0);
    model_prepare(&model, batch, src_len, tgt_len);
    float *d_logprobs = malloc((size_t)batch * tgt_len * config.tgt_vocab * sizeof *d_logprobs);
    const float *logprobs = test_forward(&model, (const int *)src->data, (const int *)tgt->data,
                                         src_keep, tgt_keep, batch, src_len, tgt_len, NULL);
    double l = nll_loss(d_logprobs, logprobs, (const int *)tgt_y->data, batch * tgt_len,
                        config.tgt_vocab, 0);
    const double expected_loss = ((const float *)loss->data)[0];
    ck_assert_msg(fabs(l - expected_loss) <= 1e-5 * fabs(expected_loss), "loss %.8g vs %.8g",
                  l, expected_loss);
    model_zero_gradients(&model);
    const Batch pass = test_batch((const int *)src->data, (const int *)tgt->data, src_keep,
                                  tgt_keep, batch, src_len, tgt_len);
    model_backward(&model, d_logprobs, &pass, false);
    for (int v = 0; v < model.parameters.count; v++) {
        char name[TENSOR_NAME_MAX + 8];
        snprintf(name, sizeof name, "grad.%s", model.parameters.views[v].name);
        const SafetensorsEntry *want = safetensors_find(&file, name);
        ck_assert_msg(want != NULL, "fixture lacks %s", name);
        const float *g = model_gradient(&model, (ParameterView){v}), *t = (const float *)want->data;
        double diff = 0, norm = 0;
        for (size_t j = 0; j < want->size; j++) {
            diff += ((double)g[j] - t[j]) * ((double)g[j] - t[j]);
            norm += (double)t[j] * t[j];
        }
        ck_assert_msg(sqrt(diff) <= 1e-4 * sqrt(norm) + 1e-6, "%s %s: |diff| %.3g, |grad| %.3g",
                      variants[_i], name, sqrt(diff), sqrt(norm));
    }
    /* backward adds: a second call doubles every gradient */
    const float first = model.gradients.data[0];
    model_backward(&model, d_logprobs, &pass, false);
    ck_assert_float_eq_tol(model.gradients.data[0], 2 * first, 1e-6f * fabsf(first) + 1e-12f);
    free(d_logprobs);
    safetensors_free(&file);
    model_free(&model);
}
END_TEST

Suite *gradients_suite(void)
{
    Suite *suite = suite_create("gradients");
    TCase *layers = tcase_create("finite differences");
    int layer_count = 0;
    while (gradcheck_layer_names[layer_count]) layer_count++;
    tcase_add_loop_test(layers, layer_gradients_match_finite_differences, 0, layer_count);
    tcase_add_loop_test(layers, model_gradients_match_finite_differences, 0, 5);
    tcase_add_test(layers, gradcheck_detects_a_wrong_gradient);
    tcase_set_timeout(layers, 120);
    suite_add_tcase(suite, layers);
    TCase *parity = tcase_create("PyTorch");
    tcase_add_loop_test(parity, gradients_match_pytorch, 0, 5);
    suite_add_tcase(suite, parity);
    return suite;
}
