/* test_experiments.c -- the experiment flags: --norm pre|post and --warmup N of the copy
   command (the placement of the layer norm, the length of the warm-up), --rate R (a constant
   rate, copy and train), train --norm, --no-scale (attention
   without 1/sqrt(d_k)), --no-embed-scale (embeddings without sqrt(d_model)), --adam-beta2
   and --adam-eps, and --accumulate K
   (gradient accumulation) of the trainer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"

/* A tiny copy run (d_model 16, 5 steps of 8 sequences, well under a second) with EXTRA
   flags; its one log row's learning rate, and whether the checkpoint FILE names the tensor
   encoder.norm.a_2 (the final norm of a pre-norm encoder), the scales it records and Adam's
   beta_2 and epsilon. */
typedef struct {
    int status;
    double rate, loss;
    bool final_norm, unscaled, unscaled_embedding;
    double beta2, eps;
} TinyRun;

/* The number after KEY in the header TEXT: "KEY":"number". */
static double header_number(const char *text, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":\"", key);
    const char *at = strstr(text, quoted);
    ck_assert_msg(at != NULL, "%s not in the checkpoint", key);
    return strtod(at + strlen(quoted), NULL);
}

static TinyRun tiny_copy(const char *extra)
{
    char dir[] = "/tmp/transformer-test-experiment-XXXXXX", command[512], path[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(command, sizeof command,
             "copy --epochs 1 --batches 5 --batch-size 8 --d-model 16 --d-ff 32 --heads 2 "
             "--log %s/log.csv --checkpoint %s/c.st %s", dir, dir, extra);
    TinyRun result = {run("", command)->status, NAN, NAN, false, false, false, NAN, NAN};
    snprintf(path, sizeof path, "%s/log.csv", dir);
    static char text[1 << 20];
    read_text(path, text, sizeof text);
    const char *row = strchr(text, '\n');
    ck_assert_ptr_nonnull(row);
    int epoch, step;
    double train, validation;
    ck_assert_int_eq(sscanf(row + 1, "%d,%d,%lf,%lf,%lf", &epoch, &step, &train, &validation,
                            &result.rate), 5);
    result.loss = train;
    ck_assert_int_eq(step, 5);
    unlink(path);
    snprintf(path, sizeof path, "%s/c.st", dir);
    read_text(path, text, sizeof text);   /* the header (JSON) comes first, after 8 bytes */
    result.final_norm = strstr(text + 8, "\"encoder.norm.a_2\"") != NULL;
    result.unscaled = strstr(text + 8, "\"config.attention_scale\":\"1\"") != NULL;
    result.unscaled_embedding = strstr(text + 8, "\"config.embedding_scale\":\"1\"") != NULL;
    result.beta2 = header_number(text + 8, "adam.beta2");
    result.eps = header_number(text + 8, "adam.eps");
    unlink(path);
    rmdir(dir);
    return result;
}

/* --norm post builds the model without the final norms of a pre-norm stack, and trains it
   (the default, pre, has them). The copy run may fail to copy after 5 steps (status 1), but
   must not refuse (2) or crash. */
START_TEST(copy_norm_flag_chooses_the_placement)
{
    TinyRun pre = tiny_copy(""), post = tiny_copy("--norm post"),
            explicit_pre = tiny_copy("--norm pre");
    ck_assert_int_le(pre.status, 1);
    ck_assert_int_le(post.status, 1);
    ck_assert(pre.final_norm);
    ck_assert(explicit_pre.final_norm);
    ck_assert(!post.final_norm);
}
END_TEST

/* The log's rate is that of the step just taken, learning_rate(step - 1): after 5 steps
   s = 4, d_model 16, f 0.5. With the default warm-up of 400 it is 0.5 * 16^-1/2 * 4 *
   400^-3/2 = 6.25e-5; with --warmup 0 there is no warm-up branch, 0.5 * 16^-1/2 * 4^-1/2 =
   0.0625; with --warmup 2 the step is past the peak, the same 0.0625. The log prints 7
   significant digits: relative tolerance 1e-6. */
START_TEST(copy_warmup_flag_sets_the_schedule)
{
    ck_assert_double_eq_tol(tiny_copy("").rate, 6.25e-5, 6.25e-11);
    ck_assert_double_eq_tol(tiny_copy("--warmup 0").rate, 0.0625, 6.25e-8);
    ck_assert_double_eq_tol(tiny_copy("--warmup 2").rate, 0.0625, 6.25e-8);
    ck_assert_double_eq_tol(tiny_copy("--warmup 8").rate, 0.5 * 0.25 * 4 / pow(8, 1.5),
                            2.3e-8);
}
END_TEST

/* --no-scale trains without the 1/sqrt(d_k) of the scores (the default has it), which the
   checkpoint records, and which changes the run: the same seed, other losses. */
START_TEST(copy_no_scale_flag_drops_the_scale)
{
    TinyRun scaled = tiny_copy(""), unscaled = tiny_copy("--no-scale");
    ck_assert_int_le(unscaled.status, 1);
    ck_assert(!scaled.unscaled);
    ck_assert(unscaled.unscaled);
    ck_assert_msg(fabs(scaled.loss - unscaled.loss) > 1e-6, "losses %.6f and %.6f",
                  scaled.loss, unscaled.loss);
}
END_TEST

/* --no-embed-scale embeds without sqrt(d_model) (the checkpoint records it), which changes
   the run; --adam-beta2 and --adam-eps reach the Adam that steps (the checkpoint describes
   that one; over five steps they change the loss by less than the log's digits, since
   Adam's bias correction makes the first steps nearly independent of beta_2). The defaults
   are the paper's 0.98 and 1e-9. */
START_TEST(copy_practical_flags_reach_the_model_and_adam)
{
    TinyRun reference = tiny_copy(""), unscaled = tiny_copy("--no-embed-scale"),
            adam = tiny_copy("--adam-beta2 0.999 --adam-eps 1e-8");
    ck_assert_int_le(unscaled.status, 1);
    ck_assert_int_le(adam.status, 1);
    ck_assert(!reference.unscaled_embedding);
    ck_assert(unscaled.unscaled_embedding);
    ck_assert_double_eq(reference.beta2, 0.98);
    ck_assert_double_eq(reference.eps, 1e-9);
    ck_assert_double_eq(adam.beta2, 0.999);
    ck_assert_double_eq(adam.eps, 1e-8);
    ck_assert_msg(fabs(reference.loss - unscaled.loss) > 1e-6, "losses %.6f and %.6f",
                  reference.loss, unscaled.loss);
}
END_TEST

/* --epochs 0 decodes with the untrained model: no step, the loss of random weights (above
   ln 10), every example decoded and none copied (status 1). */
START_TEST(copy_zero_epochs_decodes_the_untrained_model)
{
    Run *r = run("", "copy --epochs 0 --d-model 32 --d-ff 64 --heads 2");
    ck_assert_int_eq(r->status, 1);
    double loss;
    const char *line = strstr(r->out, "evaluation loss ");
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(sscanf(line, "evaluation loss %lf after 0 steps", &loss), 1);
    ck_assert_double_gt(loss, log(10.0));
    ck_assert_ptr_nonnull(strstr(r->out, "DIFFERENT"));
    ck_assert_ptr_null(strstr(r->out, "exact"));
}
END_TEST

/* train --tie: the model file holds no separate generator weight (the target embedding is
   the generator's), records the tie, translates, and a resume without --tie is refused;
   train --tie-all: one vocabulary, and no separate source embedding either. */
START_TEST(train_tie_flag_shares_the_generator)
{
    char dir[] = "/tmp/transformer-test-tie-XXXXXX", command[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    tiny_corpus(dir, 16);
    const char *sizes = "--epochs 2 --layers 1 --d-model 16 --d-ff 32 --heads 2";
    static const char *const ties[3] = {"", "--tie", "--tie-all"};
    for (int tie = 0; tie < 3; tie++) {   /* 2: one vocabulary, one table for all three */
        snprintf(command, sizeof command,
                 "train --data %s %s %s --model %s/m%d.st --checkpoint %s/c%d.st", dir, sizes,
                 ties[tie], dir, tie, dir, tie);
        Run *r = run("", command);
        ck_assert_msg(r->status == 0, "%s: %s", command, r->err);
        if (tie == 2) {   /* one vocabulary: the counts of German and English are equal */
            int german, english;
            const char *line = strstr(r->out, "vocabularies: ");
            ck_assert_ptr_nonnull(line);
            ck_assert_int_eq(sscanf(line, "vocabularies: %d German, %d English", &german,
                                    &english), 2);
            ck_assert_int_eq(german, english);
        }
        snprintf(command, sizeof command, "%s/m%d.st", dir, tie);
        static char text[1 << 20];
        read_text(command, text, sizeof text);
        ck_assert_int_eq(strstr(text + 8, "\"generator.proj.weight\"") == NULL, tie > 0);
        ck_assert_int_eq(strstr(text + 8, "\"src_embed.0.lut.weight\"") == NULL, tie == 2);
        ck_assert_int_eq(strstr(text + 8, "\"tied_source\":\"1\"") != NULL, tie == 2);
        snprintf(command, sizeof command, "translate --model %s/m%d.st < %s/val.de", dir, tie,
                 dir);
        ck_assert_int_eq(run("", command)->status, 0);
    }
    snprintf(command, sizeof command, "train --data %s %s --epochs 3 --model %s/m1.st "
             "--resume %s/c1.st", dir, sizes, dir, dir);
    Run *r = run("", command);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "config.tie_generator is 1 in the checkpoint but 0"), "%s",
                  r->err);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* --rate R holds the rate at R from the first step: the log's rate is R whatever the warm-up,
   and a resume without it is refused (the rate is part of the copy task's recipe). */
START_TEST(copy_rate_flag_holds_the_rate)
{
    ck_assert_double_eq_tol(tiny_copy("--rate 0.003").rate, 0.003, 3e-9);
    ck_assert_double_eq_tol(tiny_copy("--rate 0.003 --warmup 0").rate, 0.003, 3e-9);
    char dir[] = "/tmp/transformer-test-rate-XXXXXX", command[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *sizes = "--batches 5 --batch-size 8 --d-model 16 --d-ff 32 --heads 2";
    snprintf(command, sizeof command, "copy --epochs 1 %s --rate 0.003 --checkpoint %s/c.st",
             sizes, dir);
    ck_assert_int_le(run("", command)->status, 1);
    snprintf(command, sizeof command, "copy --epochs 2 %s --resume %s/c.st", sizes, dir);
    Run *r = run("", command);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "recipe.rate is 0.0030000000000000001 in the checkpoint but 0"),
                  "%s", r->err);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* train --validate-bleu: the run trains exactly as without the flag (the same model file, the
   same losses and rates), its log's last column is validation_bleu, and the best epoch's
   score is what translate --beam 1 and bleu give the saved model on the validation set. */
START_TEST(train_validate_bleu_is_translate_then_bleu)
{
    char dir[] = "/tmp/transformer-test-vbleu-XXXXXX", command[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    tiny_corpus(dir, 16);
    const char *recipe = "--epochs 40 --layers 1 --d-model 32 --d-ff 64 --heads 2 --warmup 20 "
                         "--factor 2";
    for (int flag = 0; flag < 2; flag++) {
        snprintf(command, sizeof command, "train --data %s %s %s --model %s/m%d.st "
                 "--checkpoint %s/c%d.st --log %s/log%d.csv", dir, recipe,
                 flag ? "--validate-bleu" : "", dir, flag, dir, flag, dir, flag);
        Run *r = run("", command);
        ck_assert_msg(r->status == 0, "%s: %s", command, r->err);
        ck_assert_int_eq(strstr(r->out, "  BLEU ") != NULL, flag);
    }
    snprintf(command, sizeof command, "cmp -s %s/m0.st %s/m1.st && cut -d, -f1-5,8 %s/log0.csv "
             "> %s/a && cut -d, -f1-5,8 %s/log1.csv > %s/b && cmp -s %s/a %s/b", dir, dir, dir,
             dir, dir, dir, dir, dir);
    ck_assert_msg(system(command) == 0, "the flag changed the run: %s", command);
    snprintf(command, sizeof command, "%s/log1.csv", dir);
    static char text[1 << 16];
    read_text(command, text, sizeof text);
    const char *row = strchr(text, '\n');
    ck_assert_ptr_nonnull(row);
    ck_assert_int_eq(strncmp(row - 16, ",validation_bleu", 16), 0);
    double best = INFINITY, best_bleu = NAN, measured = 0.0;
    for (row++; *row; row = strchr(row, '\n') + 1) {
        double loss, bleu;
        ck_assert_int_eq(sscanf(row, "%*d,%*d,%*f,%lf,%*f,%*f,%*f,%*f,%lf", &loss, &bleu), 2);
        if (loss < best) best = loss, best_bleu = bleu;
        measured += bleu;
    }
    ck_assert_double_gt(measured, 0.0);   /* not a column of zeros */
    snprintf(command, sizeof command, "translate --beam 1 --model %s/m1.st < %s/val.de", dir,
             dir);
    Run *r = run("", command);
    ck_assert_int_eq(r->status, 0);
    snprintf(command, sizeof command, "%s/hyp.en", dir);
    FILE *hyp = fopen(command, "w");
    ck_assert_ptr_nonnull(hyp);
    fputs(r->out, hyp);
    fclose(hyp);
    snprintf(command, sizeof command, "bleu %s/hyp.en %s/val.en", dir, dir);
    r = run("", command);
    double score;
    ck_assert_int_eq(sscanf(r->out, "BLEU = %lf", &score), 1);
    ck_assert_double_eq_tol(best_bleu, score, 0.005);   /* the log's two decimals */
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* train --norm post: the model file says post and has no final norms; it translates. */
START_TEST(train_norm_flag_chooses_the_placement)
{
    char dir[] = "/tmp/transformer-test-norm-XXXXXX", command[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    tiny_corpus(dir, 16);
    static const char *const norms[2] = {"pre", "post"};
    for (int n = 0; n < 2; n++) {
        snprintf(command, sizeof command,
                 "train --data %s --epochs 1 --layers 1 --d-model 16 --d-ff 32 --heads 2 "
                 "--norm %s --rate 0.001 --model %s/m.st", dir, norms[n], dir);
        Run *r = run("", command);
        ck_assert_msg(r->status == 0, "%s: %s", command, r->err);
        snprintf(command, sizeof command, "%s/m.st", dir);
        static char text[1 << 20];
        read_text(command, text, sizeof text);
        ck_assert_int_eq(strstr(text + 8, "\"norm\":\"post\"") != NULL, n == 1);
        ck_assert_int_eq(strstr(text + 8, "\"encoder.norm.a_2\"") != NULL, n == 0);
        snprintf(command, sizeof command, "translate --model %s/m.st < %s/val.de", dir, dir);
        ck_assert_int_eq(run("", command)->status, 0);
    }
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* The training losses of a small copy run (3 epochs of 5 batches of 16) with EXTRA flags,
   from its log, into loss[3]. */
static void copy_losses(const char *extra, double *loss)
{
    char dir[] = "/tmp/transformer-test-accumulate-XXXXXX", command[512], path[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(command, sizeof command,
             "copy --epochs 3 --batches 5 --batch-size 16 --d-model 32 --d-ff 64 --heads 2 "
             "--precision fp32 --log %s/log.csv %s", dir, extra);
    ck_assert_int_le(run("OMP_NUM_THREADS=1", command)->status, 1);
    snprintf(path, sizeof path, "%s/log.csv", dir);
    static char text[1 << 16];
    read_text(path, text, sizeof text);
    const char *row = text;
    for (int e = 0; e < 3; e++) {
        row = strchr(row, '\n');
        ck_assert_ptr_nonnull(row);
        int epoch, step;
        ck_assert_int_eq(sscanf(++row, "%d,%d,%lf", &epoch, &step, &loss[e]), 3);
        ck_assert_int_eq(step, 5 * (e + 1));
    }
    unlink(path);
    rmdir(dir);
}

/* --accumulate K trains each batch in K parts and updates once: the same run as one pass per
   batch, dropout included, up to rounding. The log prints losses to 1e-6; the runs agree to
   the printed digits here, and 2e-6 allows one rounding of the print. Parts that drew their
   own dropout (the stream not restarted for each part) move the losses by about 1e-2. */
START_TEST(copy_accumulate_equals_whole_batches)
{
    double whole[3], parts[3], uneven[3];
    copy_losses("", whole);
    copy_losses("--accumulate 4", parts);
    copy_losses("--accumulate 3", uneven);   /* parts of 5, 5 and 6 rows */
    for (int e = 0; e < 3; e++) {
        ck_assert_double_eq_tol(parts[e], whole[e], 2e-6);
        ck_assert_double_eq_tol(uneven[e], whole[e], 2e-6);
    }
}
END_TEST

/* A bad value is one line naming the flag, status 2, and no training. */
START_TEST(copy_experiment_flags_refuse_bad_values)
{
    const char *bad[] = {"copy --norm sideways", "copy --warmup -1", "copy --warmup x",
                         "copy --accumulate 0", "train --accumulate x", "copy --rate 0",
                         "train --rate -1", "train --norm sideways"};
    const char *flag[] = {"--norm", "--warmup", "--warmup", "--accumulate", "--accumulate",
                          "--rate", "--rate", "--norm"};
    for (int i = 0; i < 8; i++) {
        Run *r = run("", bad[i]);
        ck_assert_int_eq(r->status, 2);
        ck_assert_msg(strstr(r->err, flag[i]) != NULL, "%s: %s", bad[i], r->err);
        ck_assert_str_eq(r->out, "");
    }
}
END_TEST

Suite *experiments_suite(void)
{
    Suite *suite = suite_create("experiments");
    TCase *flags = tcase_create("experiment flags");
    tcase_add_test(flags, copy_norm_flag_chooses_the_placement);
    tcase_add_test(flags, copy_practical_flags_reach_the_model_and_adam);
    tcase_add_test(flags, copy_warmup_flag_sets_the_schedule);
    tcase_add_test(flags, copy_rate_flag_holds_the_rate);
    tcase_add_test(flags, train_norm_flag_chooses_the_placement);
    tcase_add_test(flags, copy_experiment_flags_refuse_bad_values);
    tcase_add_test(flags, copy_accumulate_equals_whole_batches);
    tcase_add_test(flags, copy_no_scale_flag_drops_the_scale);
    tcase_add_test(flags, copy_zero_epochs_decodes_the_untrained_model);
    tcase_add_test(flags, train_tie_flag_shares_the_generator);
    tcase_add_test(flags, train_validate_bleu_is_translate_then_bleu);
    tcase_set_timeout(flags, 120);
    suite_add_tcase(suite, flags);
    return suite;
}
