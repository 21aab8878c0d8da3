/* test_training.c -- the training chapter: label smoothing, the learning-rate schedule, Adam. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "safetensors.h"
#include "train.h"
#include "tests.h"

/* The course's example: V = 5, eps = 0.4, targets 2 1 0 3 3, padding 0 (the label-smoothing figure). */
START_TEST(label_smoothing_distribution_of_the_course)
{
    const int targets[5] = {2, 1, 0, 3, 3};
    float t[25];
    label_smoothing_distribution(t, targets, 5, 5, 0, 0.4f);
    for (int r = 0; r < 5; r++) {
        double sum = 0;
        for (int w = 0; w < 5; w++) {
            float expected = targets[r] == 0 || w == 0 ? 0.0f
                           : w == targets[r] ? 0.6f : 0.4f / 3.0f;
            ck_assert_float_eq_tol(t[r * 5 + w], expected, 1e-7f);
            sum += t[r * 5 + w];
        }
        ck_assert_double_eq_tol(sum, targets[r] == 0 ? 0.0 : 1.0, 1e-6);
    }
}
END_TEST

/* Loss = KL / tokens with 0 log 0 = 0: finite even where p = 0 at a zero target (the case
   where the reference's KLDivLoss gives NaN); gradient -t/n; eps = 0 gives the NLL. */
START_TEST(label_smoothing_loss_and_gradient)
{
    const int targets[3] = {1, 0, 2};   /* one padding row */
    const float logprobs[12] = {-INFINITY, logf(0.7f), logf(0.2f), logf(0.1f),
                                -1, -2, -3, -4,
                                -INFINITY, logf(0.1f), logf(0.8f), logf(0.1f)};
    float grad[12];
    int tokens;
    double loss = label_smoothing_loss(grad, logprobs, targets, 3, 4, 0, 0.2f, &tokens);
    ck_assert_int_eq(tokens, 2);
    double expected = 0;
    const double t_true = 0.8, t_other = 0.1;
    expected += t_true * (log(t_true) - log(0.7)) + t_other * (log(t_other) - log(0.2))
              + t_other * (log(t_other) - log(0.1));
    expected += t_other * (log(t_other) - log(0.1)) + t_true * (log(t_true) - log(0.8))
              + t_other * (log(t_other) - log(0.1));
    expected /= 2;
    ck_assert(isfinite(loss));
    ck_assert_double_eq_tol(loss, expected, 1e-6);
    ck_assert_float_eq_tol(grad[1], -0.8f / 2, 1e-7f);
    ck_assert_float_eq_tol(grad[2], -0.1f / 2, 1e-7f);
    for (int w = 4; w < 8; w++) ck_assert_float_eq(grad[w], 0.0f);   /* padding row */
    ck_assert_float_eq(grad[0], 0.0f);                                /* padding column */
    /* eps = 0: the negative log-likelihood per token */
    loss = label_smoothing_loss(grad, logprobs, targets, 3, 4, 0, 0.0f, &tokens);
    ck_assert_double_eq_tol(loss, -(log(0.7) + log(0.8)) / 2, 1e-6);
}
END_TEST

/* Equation 11.3, with step 0 counted as step 1; the peak at step = warmup. */
START_TEST(learning_rate_schedule_values)
{
    ck_assert_double_eq(learning_rate(0, 512, 1.0, 4000), learning_rate(1, 512, 1.0, 4000));
    ck_assert_double_eq_tol(learning_rate(1, 512, 1.0, 4000), pow(512, -0.5) * pow(4000, -1.5),
                            1e-15);
    ck_assert_double_eq_tol(learning_rate(4000, 512, 1.0, 4000), pow(512 * 4000.0, -0.5), 1e-12);
    ck_assert_double_eq_tol(learning_rate(20000, 256, 2.0, 4000), 2 * pow(256, -0.5) *
                            pow(20000, -0.5), 1e-12);
    ck_assert(learning_rate(3999, 512, 1, 4000) < learning_rate(4000, 512, 1, 4000));
    ck_assert(learning_rate(4001, 512, 1, 4000) < learning_rate(4000, 512, 1, 4000));
}
END_TEST

/* The cool-down (Getting to 41): none leaves the schedule as it is; with one, the rate is the
   schedule's until the last C steps, then falls on a straight line: half at the middle of the
   cool-down, 1/C of the schedule's at the last update (step T-1), zero at T and after. */
START_TEST(cooldown_lowers_the_rate_to_zero_at_the_end)
{
    StepSettings none = {.factor = 1.0, .warmup = 40};
    StepSettings cool = {.factor = 1.0, .warmup = 40, .cooldown_end = 1000, .cooldown = 200};
    for (long step = 0; step < 1200; step += 7)
        ck_assert_double_eq(scheduled_rate(step, 64, &none), learning_rate(step, 64, 1.0, 40));
    ck_assert_double_eq(scheduled_rate(800, 64, &cool), learning_rate(800, 64, 1.0, 40));
    ck_assert_double_eq(scheduled_rate(300, 64, &cool), learning_rate(300, 64, 1.0, 40));
    ck_assert_double_eq_tol(scheduled_rate(900, 64, &cool), learning_rate(900, 64, 1.0, 40) / 2,
                            1e-15);
    ck_assert_double_eq_tol(scheduled_rate(999, 64, &cool), learning_rate(999, 64, 1.0, 40) / 200,
                            1e-15);
    ck_assert(scheduled_rate(999, 64, &cool) > 0);
    ck_assert_double_eq(scheduled_rate(1000, 64, &cool), 0.0);
    ck_assert_double_eq(scheduled_rate(1100, 64, &cool), 0.0);
    for (long step = 801; step < 1000; step++)   /* falling all the way */
        ck_assert(scheduled_rate(step, 64, &cool) < scheduled_rate(step - 1, 64, &cool));
}
END_TEST

/* Adam's first step moves each parameter by about lr * sign(gradient) (an exercise of the training chapter), and
   a gradient of zero leaves a parameter where it is. */
START_TEST(adam_first_step)
{
    FlatBuffer parameters = {0}, gradients = {0};
    flat_add(&parameters, "x", 1, (int[]){4});
    flat_allocate(&parameters);
    flat_allocate_like(&gradients, &parameters);
    const float g[4] = {1e-3f, -5.0f, 0.0f, 42.0f};
    memcpy(gradients.data, g, sizeof g);
    Adam adam;
    adam_init(&adam, &parameters, 0.9, 0.98, 1e-9);
    adam_step(&adam, &parameters, &gradients, 0.01);
    ck_assert_float_eq_tol(parameters.data[0], -0.01f, 1e-7f);
    ck_assert_float_eq_tol(parameters.data[1], 0.01f, 1e-7f);
    ck_assert_float_eq(parameters.data[2], 0.0f);
    ck_assert_float_eq_tol(parameters.data[3], -0.01f, 1e-7f);
    ck_assert_int_eq(adam.step, 1);
    ck_assert_float_eq_tol(adam.m.data[1], -0.5f, 1e-6f);          /* (1 - 0.9) g */
    ck_assert_float_eq_tol(adam.v.data[1], 0.02f * 25.0f, 1e-6f);  /* (1 - 0.98) g^2 */
    adam_free(&adam);
    flat_free(&parameters);
    flat_free(&gradients);
}
END_TEST

/* Against PyTorch (tests/golden/training.safetensors, tools/make-golden-training.py). */
static const float *golden(const Safetensors *file, const char *name, size_t size)
{
    const SafetensorsEntry *e = safetensors_find(file, name);
    ck_assert_msg(e != NULL && e->size == size, "golden %s", name);
    return (const float *)e->data;
}

START_TEST(training_pieces_match_pytorch)
{
    Safetensors file;
    const char *error = safetensors_read(&file, "tests/golden/training.safetensors");
    ck_assert_msg(error == NULL, "%s", error);
    /* the course's distribution: exactly the reference's true_dist */
    float t[25], grad[42];
    label_smoothing_distribution(t, (const int *)golden(&file, "ls.course.targets", 5), 5, 5,
                                 0, 0.4f);
    const float *want = golden(&file, "ls.course.true_dist", 25);
    for (int i = 0; i < 25; i++) ck_assert_float_eq_tol(t[i], want[i], 1e-7f);
    /* finite case, eps 0.1 and 0: loss (relative 1e-6) and gradient (1e-7) */
    const float *logprobs = golden(&file, "ls.finite.logprobs", 42);
    const int *targets = (const int *)golden(&file, "ls.finite.targets", 6);
    static const char *const cases[2][3] = {{"ls.finite.loss", "ls.finite.grad", "0.1"},
                                            {"ls.nosmooth.loss", "ls.nosmooth.grad", "0"}};
    for (int c = 0; c < 2; c++) {
        int tokens;
        double loss = label_smoothing_loss(grad, logprobs, targets, 6, 7, 0,
                                           (float)atof(cases[c][2]), &tokens);
        double expected = golden(&file, cases[c][0], 1)[0];
        ck_assert_msg(fabs(loss - expected) <= 1e-6 * fabs(expected), "%s: %.9g vs %.9g",
                      cases[c][0], loss, expected);
        const float *g = golden(&file, cases[c][1], 42);
        for (int i = 0; i < 42; i++) ck_assert_float_eq_tol(grad[i], g[i], 1e-7f);
    }
    /* the confidence curve: where PyTorch's KLDivLoss gives NaN, ours is the correct value */
    const float *confident = golden(&file, "ls.confident.logprobs", 99 * 5);
    const float *correct = golden(&file, "ls.confident.loss_correct", 99);
    for (int x = 0; x < 99; x++) {
        const int target = 1;
        int tokens;
        double loss = label_smoothing_loss(grad, confident + 5 * x, &target, 1, 5, 0, 0.1f, &tokens);
        ck_assert(isfinite(loss));
        ck_assert_double_eq_tol(loss, correct[x], 1e-6 * fabs(correct[x]) + 1e-7);
    }
    /* the schedule */
    const int *steps = (const int *)golden(&file, "rate.steps", 9);
    const float *rate512 = golden(&file, "rate.values", 9), *rate256 = golden(&file, "rate.values_256", 9);
    for (int i = 0; i < 9; i++) {
        ck_assert_double_eq_tol(learning_rate(steps[i], 512, 1.0, 4000), rate512[i], 1e-6 * rate512[i]);
        ck_assert_double_eq_tol(learning_rate(steps[i], 256, 1.0, 4000), rate256[i], 1e-6 * rate256[i]);
    }
    /* three Adam steps with PyTorch's learning rates: parameters and both moments */
    FlatBuffer parameters = {0}, gradients = {0};
    flat_add(&parameters, "param", 2, (int[]){4, 3});
    flat_allocate(&parameters);
    flat_allocate_like(&gradients, &parameters);
    memcpy(parameters.data, golden(&file, "adam.param0", 12), 12 * sizeof(float));
    Adam adam;
    adam_init(&adam, &parameters, 0.9, 0.98, 1e-9);
    const float *lr = golden(&file, "adam.lr", 3);
    for (int k = 1; k <= 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "adam.grad%d", k);
        memcpy(gradients.data, golden(&file, name, 12), 12 * sizeof(float));
        adam_step(&adam, &parameters, &gradients, lr[k - 1]);
        static const char *const what[3] = {"param", "exp_avg", "exp_avg_sq"};
        const float *mine[3] = {parameters.data, adam.m.data, adam.v.data};
        for (int w = 0; w < 3; w++) {
            snprintf(name, sizeof name, "adam.%s%d", what[w], k);
            const float *expected = golden(&file, name, 12);
            for (int i = 0; i < 12; i++)
                ck_assert_msg(fabs(mine[w][i] - expected[i]) <= 1e-6 * fabs(expected[i]) + 1e-12,
                              "%s[%d]: %.9g vs %.9g", name, i, mine[w][i], expected[i]);
        }
    }
    adam_free(&adam);
    flat_free(&parameters);
    flat_free(&gradients);
    safetensors_free(&file);
}
END_TEST

/* Two halves of a batch, each normalized by the whole batch's tokens and accumulated,
   give the gradient of the whole batch (dropout off). The bound allows for the different
   order of float additions: 1e-5 of each tensor's largest gradient, plus 1e-7 for the
   tensors whose gradient is zero in exact arithmetic (the key projection's bias). */
START_TEST(accumulation_equals_one_big_batch)
{
    enum { B = 8, HALF = B / 2, LEN = 6 };
    Config config = config_default(11, 11, 1);
    config.d_model = 16, config.d_ff = 32, config.heads = 2, config.max_len = LEN;
    Model whole, halves;
    model_init(&whole, config);
    model_init(&halves, config);
    Rng rng;
    rng_seed(&rng, 9, 1);
    model_initialize_parameters(&whole, &rng);
    memcpy(halves.parameters.data, whole.parameters.data, whole.parameters.total * sizeof(float));
    model_prepare(&whole, B, LEN, LEN - 1);
    model_prepare(&halves, HALF, LEN, LEN - 1);
    int data[B * LEN];
    copy_task_batch(data, B, LEN, 11, &rng);
    data[5] = data[LEN + 4] = data[LEN + 5] = 0;   /* some padding, so tokens differ */
    Batch all, part;
    batch_init(&all, B, LEN, LEN - 1);
    batch_init(&part, HALF, LEN, LEN - 1);
    batch_fill(&all, data, data, 0);
    const int tokens = batch_target_tokens(&all, 0);
    StepSettings settings = {.smoothing = 0.1f, .factor = 1.0, .warmup = 10, .pad = 0};
    model_zero_gradients(&whole);
    train_accumulate(&whole, &all, &settings, NULL, tokens);
    model_zero_gradients(&halves);
    for (int h = 0; h < 2; h++) {
        batch_fill(&part, data + h * HALF * LEN, data + h * HALF * LEN, 0);
        train_accumulate(&halves, &part, &settings, NULL, tokens);
    }
    for (int v = 0; v < whole.gradients.count; v++) {
        const float *a = flat_view(&whole.gradients, v), *b = flat_view(&halves.gradients, v);
        double scale = 0;
        for (size_t j = 0; j < whole.gradients.views[v].size; j++) scale = fmax(scale, fabs(a[j]));
        for (size_t j = 0; j < whole.gradients.views[v].size; j++)
            ck_assert_msg(fabs(a[j] - b[j]) <= 1e-5 * scale + 1e-7, "%s[%zu]: %g vs %g",
                          whole.gradients.views[v].name, j, a[j], b[j]);
    }
    batch_free(&all), batch_free(&part);
    model_free(&whole), model_free(&halves);
}
END_TEST

Suite *training_suite(void)
{
    Suite *suite = suite_create("training");
    TCase *pieces = tcase_create("loss, schedule, optimizer");
    tcase_add_test(pieces, label_smoothing_distribution_of_the_course);
    tcase_add_test(pieces, label_smoothing_loss_and_gradient);
    tcase_add_test(pieces, learning_rate_schedule_values);
    tcase_add_test(pieces, cooldown_lowers_the_rate_to_zero_at_the_end);
    tcase_add_test(pieces, adam_first_step);
    tcase_add_test(pieces, training_pieces_match_pytorch);
    tcase_add_test(pieces, accumulation_equals_one_big_batch);
    suite_add_tcase(suite, pieces);
    return suite;
}
