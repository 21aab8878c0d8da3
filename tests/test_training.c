/* test_training.c -- Chapter 11: label smoothing, the learning-rate schedule, Adam. */
#include <math.h>
#include <string.h>
#include "train.h"
#include "tests.h"

/* The course's example: V = 5, eps = 0.4, targets 2 1 0 3 3, padding 0 (Figure 11.1). */
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

/* Adam's first step moves each parameter by about lr * sign(gradient) (Exercise 11.3), and
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

Suite *training_suite(void)
{
    Suite *suite = suite_create("training");
    TCase *pieces = tcase_create("loss, schedule, optimizer");
    tcase_add_test(pieces, label_smoothing_distribution_of_the_course);
    tcase_add_test(pieces, label_smoothing_loss_and_gradient);
    tcase_add_test(pieces, learning_rate_schedule_values);
    tcase_add_test(pieces, adam_first_step);
    suite_add_tcase(suite, pieces);
    return suite;
}
