/* test_translate.c -- book/translate.nw: batches of similar lengths within a token budget,
   filled with the right padding and shifts, visited in a per-epoch random order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "data.h"
#include "modelfile.h"
#include "tests.h"
#include "translator.h"

/* n pairs with lengths 3..max_len (<s> ... </s>); token numbers 4.. encode (pair, position). */
static Corpus random_corpus(int n, int max_len, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed, 1);
    Corpus c = {.count = n};
    c.src_offset = malloc((size_t)(n + 1) * sizeof(int));
    c.tgt_offset = malloc((size_t)(n + 1) * sizeof(int));
    c.src_ids = malloc((size_t)n * max_len * sizeof(int));
    c.tgt_ids = malloc((size_t)n * max_len * sizeof(int));
    c.src_offset[0] = c.tgt_offset[0] = 0;
    for (int i = 0; i < n; i++) {
        const int s = 3 + (int)(rng_next(&rng) % (uint32_t)(max_len - 2));
        const int t = 3 + (int)(rng_next(&rng) % (uint32_t)(max_len - 2));
        for (int k = 0; k < s; k++)
            c.src_ids[c.src_offset[i] + k] = k == 0 ? 0 : k == s - 1 ? 1 : 4 + i * 100 + k;
        for (int k = 0; k < t; k++)
            c.tgt_ids[c.tgt_offset[i] + k] = k == 0 ? 0 : k == t - 1 ? 1 : 4 + i * 100 + k;
        c.src_offset[i + 1] = c.src_offset[i] + s;
        c.tgt_offset[i + 1] = c.tgt_offset[i] + t;
    }
    return c;
}

START_TEST(batch_plan_covers_every_pair_within_the_budget)
{
    Corpus c = random_corpus(1000, 40, 1);
    BatchPlan plan;
    const int budget = 400;
    batch_plan(&plan, &c, budget);
    int *seen = calloc(1000, sizeof(int));
    long padded = 0, real = 0;
    for (int b = 0; b < plan.count; b++) {
        const BatchSpan *span = &plan.spans[b];
        ck_assert_int_gt(span->count, 0);
        const int longest = span->src_len > span->tgt_len ? span->src_len : span->tgt_len;
        ck_assert(span->count == 1 || (long)span->count * longest <= budget);
        int s = 0, t = 0;
        for (int k = 0; k < span->count; k++) {
            const int pair = plan.order[span->first + k];
            seen[pair]++;
            if (corpus_src_len(&c, pair) > s) s = corpus_src_len(&c, pair);
            if (corpus_tgt_len(&c, pair) > t) t = corpus_tgt_len(&c, pair);
            real += corpus_tgt_len(&c, pair);
            if (k > 0)   /* sorted by target length */
                ck_assert_int_le(corpus_tgt_len(&c, plan.order[span->first + k - 1]),
                                 corpus_tgt_len(&c, pair));
        }
        ck_assert_int_eq(s, span->src_len);
        ck_assert_int_eq(t, span->tgt_len);
        ck_assert_int_le(span->count, plan.max_pairs);
        ck_assert_int_le(span->tgt_len, plan.max_tgt_len);
        padded += (long)span->count * span->tgt_len;
        /* the next pair would have broken the budget: batches are as full as allowed */
        if (b + 1 < plan.count) {
            const int next = plan.order[span->first + span->count];
            int s2 = s > corpus_src_len(&c, next) ? s : corpus_src_len(&c, next);
            int t2 = t > corpus_tgt_len(&c, next) ? t : corpus_tgt_len(&c, next);
            ck_assert_int_gt((long)(span->count + 1) * (s2 > t2 ? s2 : t2), budget);
        }
    }
    for (int i = 0; i < 1000; i++) ck_assert_int_eq(seen[i], 1);
    /* sorted by target length, target padding is small: under 2% here */
    ck_assert_msg(padded < real * 1.02, "padded %ld for %ld real tokens", padded, real);
    free(seen);
    batch_plan_free(&plan);
    corpus_free(&c);
}
END_TEST

START_TEST(batch_fill_span_pads_and_shifts)
{
    Corpus c = random_corpus(50, 12, 2);
    BatchPlan plan;
    batch_plan(&plan, &c, 60);
    Batch batch;
    batch_init(&batch, plan.max_pairs, plan.max_src_len, plan.max_tgt_len - 1);
    const int pad = 2;
    for (int b = 0; b < plan.count; b++) {
        const BatchSpan *span = &plan.spans[b];
        batch_fill_span(&batch, &c, &plan, span, pad);
        ck_assert_int_eq(batch.batch, span->count);
        ck_assert_int_eq(batch.src_len, span->src_len);
        ck_assert_int_eq(batch.tgt_len, span->tgt_len - 1);
        const int s = batch.src_len, t = batch.tgt_len;
        for (int k = 0; k < span->count; k++) {
            const int pair = plan.order[span->first + k];
            const int sl = corpus_src_len(&c, pair), tl = corpus_tgt_len(&c, pair);
            for (int i = 0; i < s; i++) {
                ck_assert_int_eq(batch.src[k * s + i], i < sl ? corpus_src(&c, pair)[i] : pad);
                ck_assert_int_eq(batch.src_keep[k * s + i], i < sl);
            }
            for (int i = 0; i < t; i++) {
                ck_assert_int_eq(batch.tgt[k * t + i], i < tl ? corpus_tgt(&c, pair)[i] : pad);
                ck_assert_int_eq(batch.tgt_y[k * t + i],
                                 i + 1 < tl ? corpus_tgt(&c, pair)[i + 1] : pad);
                for (int j = 0; j < t; j++)   /* causal and no padded key */
                    ck_assert_int_eq(batch.tgt_keep[((size_t)k * t + i) * t + j],
                                     j <= i && j < tl);
            }
        }
    }
    batch_free(&batch);
    batch_plan_free(&plan);
    corpus_free(&c);
}
END_TEST

START_TEST(batch_order_is_a_permutation_per_epoch)
{
    enum { N = 200 };
    int a[N], b[N], again[N];
    batch_order(a, N, 1, 1);
    batch_order(b, N, 1, 2);
    batch_order(again, N, 1, 1);
    ck_assert(memcmp(a, again, sizeof a) == 0);   /* a function of the epoch */
    ck_assert(memcmp(a, b, sizeof a) != 0);
    int count[N] = {0}, moved = 0;
    for (int i = 0; i < N; i++) count[a[i]]++, moved += a[i] != i;
    for (int i = 0; i < N; i++) ck_assert_int_eq(count[i], 1);
    ck_assert_int_gt(moved, N / 2);
}
END_TEST

/* A corpus of the first 64 pairs of Multi30k's training set, which serve as training and
   validation set, in a new directory made from the template dir. */
static void make_64_pairs(char *dir)
{
    char command[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(command, sizeof command,
             "head -64 data/multi30k/train.de > %s/train.de && cp %s/train.de %s/val.de && "
             "head -64 data/multi30k/train.en > %s/train.en && cp %s/train.en %s/val.en",
             dir, dir, dir, dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
}

/* The whole pipeline on 64 pairs that serve as training and validation set: the loss on
   them falls (the model overfits), the model file and its vocabularies load, translate
   writes one line per input line, and bad input gets one line and status 1 or 2. */
START_TEST(cli_train_and_translate_overfit_64_pairs)
{
    char dir[] = "/tmp/transformer-test-mt-XXXXXX", command[4096], arguments[2048];
    make_64_pairs(dir);
    snprintf(arguments, sizeof arguments,
             "train --data %s --epochs 40 --layers 1 --d-model 32 --d-ff 64 --heads 2 "
             "--token-budget 300 --warmup 50 --factor 3 --dropout 0 --smoothing 0 "
             "--model %s/m.st --checkpoint %s/c.st --log %s/log.csv", dir, dir, dir, dir);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->out, "64 training pairs, 64 validation pairs"), "%s", r->out);
    /* the log: 40 rows; the validation loss falls to a third of its first value; its mean
       over batches, the last column, is another number, since the batches hold different
       numbers of target tokens */
    snprintf(command, sizeof command, "%s/log.csv", dir);
    FILE *log = fopen(command, "r");
    ck_assert_ptr_nonnull(log);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, log));
    int rows = 0;
    double first = 0, last = 0, train, validation, batch_mean;
    while (fgets(line, sizeof line, log)) {
        int epoch;
        long step;
        ck_assert_int_eq(sscanf(line, "%d,%ld,%lf,%lf,%*f,%*f,%*f,%lf", &epoch, &step, &train,
                                &validation, &batch_mean), 5);
        ck_assert_msg(batch_mean > 0 && fabs(batch_mean - validation) > 1e-6,
                      "per token %g, per batch %g", validation, batch_mean);
        ck_assert_int_eq(epoch, ++rows);
        if (rows == 1) first = validation;
        last = validation;
    }
    fclose(log);
    ck_assert_int_eq(rows, 40);
    ck_assert_msg(last < first / 3, "validation loss %g -> %g", first, last);
    /* translate: one line out per line in, for greedy decoding and a beam */
    for (int beam = 1; beam <= 4; beam += 3) {
        snprintf(arguments, sizeof arguments, "translate --model %s/m.st --beam %d < %s/val.de",
                 dir, beam, dir);
        r = run("", arguments);
        ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
        int lines = 0;
        for (const char *p = r->out; *p; p++) lines += *p == '\n';
        ck_assert_int_eq(lines, 64);
    }
    /* the lines are decoded in batches of similar lengths, but printed in input order and
       the same whatever the batch (fp32: products of other shapes may round differently,
       which on this tiny model changes no argmax) */
    for (int beam = 1; beam <= 4; beam += 3) {
        static char one[1 << 16];
        snprintf(arguments, sizeof arguments,
                 "translate --model %s/m.st --beam %d --batch 1 --precision fp32 < %s/val.de",
                 dir, beam, dir);
        r = run("", arguments);
        ck_assert_int_eq(r->status, 0);
        ck_assert_uint_lt(strlen(r->out), sizeof one);
        strcpy(one, r->out);
        snprintf(arguments, sizeof arguments,
                 "translate --model %s/m.st --beam %d --batch 7 --precision fp32 < %s/val.de",
                 dir, beam, dir);
        r = run("", arguments);
        ck_assert_int_eq(r->status, 0);
        ck_assert_str_eq(r->out, one);
    }
    /* a translation may be legitimately empty (the model ends at once): the line is empty,
       and the lines after it are still translated (issue 19, item 3) */
    {
        Model model;
        Vocab src_vocab, tgt_vocab;
        Safetensors file;
        snprintf(command, sizeof command, "%s/m.st", dir);
        const char *error = translation_model_load(command, &model, &src_vocab, &tgt_vocab,
                                                   &file);
        ck_assert_msg(error == NULL, "%s", error);
        safetensors_free(&file);
        const int bias = flat_find(&model.parameters, "generator.proj.bias");
        ck_assert_int_ge(bias, 0);
        flat_view(&model.parameters, bias)[VOCAB_END] = 1e4f;   /* </s> always wins */
        snprintf(command, sizeof command, "%s/ends.st", dir);
        ck_assert_ptr_null(translation_model_save(command, &model, &src_vocab, &tgt_vocab, false,
                                                  &file.error));
        /* a model file whose settings are out of range is refused with one line (issue 19,
           items 2 and 9): a max_len too short for a sentence, an unknown norm placement */
        model.config.max_len = 1;
        snprintf(command, sizeof command, "%s/short.st", dir);
        ck_assert_ptr_null(translation_model_save(command, &model, &src_vocab, &tgt_vocab, false,
                                                  &file.error));
        model.config.max_len = 100;
        snprintf(command, sizeof command, "%s/sideways.st", dir);
        ck_assert_ptr_null(translation_model_save(command, &model, &src_vocab, &tgt_vocab, false,
                                                  &file.error));
        ck_assert_int_eq(model_file_rewrite(command, "norm", "sideways"), 0);
        model_free(&model), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
        static const char *const refused[2][2] = {
            {"short.st", "max_len 1 is too small (at least 3)"},
            {"sideways.st", "'norm' must be 'pre' or 'post', not 'sideways'"}};
        for (int f = 0; f < 2; f++)
            for (int c = 0; c < 2; c++) {
                snprintf(arguments, sizeof arguments, "%s --model %s/%s < %s/val.de",
                         c ? "attention" : "translate", dir, refused[f][0], dir);
                r = run("", arguments);
                ck_assert_msg(r->status == 1 && strstr(r->err, refused[f][1])
                              && strchr(r->err, '\n') == r->err + strlen(r->err) - 1,
                              "%s: status %d: %s", arguments, r->status, r->err);
            }
        for (int beam = 1; beam <= 4; beam += 3) {
            snprintf(arguments, sizeof arguments,
                     "translate --model %s/ends.st --beam %d < %s/val.de", dir, beam, dir);
            r = run("", arguments);
            ck_assert_msg(r->status == 0, "beam %d: status %d: %s", beam, r->status, r->err);
            char expected[65];
            memset(expected, '\n', 64), expected[64] = '\0';
            ck_assert_str_eq(r->out, expected);
        }
    }
    /* bad input: a missing model, invalid UTF-8 on stdin, a bad flag */
    snprintf(arguments, sizeof arguments, "translate --model %s/missing.st < /dev/null", dir);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "missing.st") && strchr(r->err, '\n') == r->err + strlen(r->err) - 1,
                  "%s", r->err);
    snprintf(arguments, sizeof arguments,
             "translate --model %s/m.st < %s/bad.txt", dir, dir);
    snprintf(command, sizeof command, "printf 'ein Hund\\n\\377\\n' > %s/bad.txt", dir);
    ck_assert_int_eq(system(command), 0);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 1);
    ck_assert_msg(strstr(r->err, "standard input:2:"), "%s", r->err);
    r = run("", "translate --beam 0");
    ck_assert_int_eq(r->status, 2);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* train --cooldown 2 over 3 epochs: the log's last rate is the schedule's at the last step
   divided by the cool-down's updates (2 epochs' worth); the cool-down is part of the recipe, so
   a resume that would move its end (more epochs) is refused, and so is a cool-down longer than
   the run. */
START_TEST(cli_train_cooldown_ends_at_the_last_epoch)
{
    char dir[] = "/tmp/transformer-test-cool-XXXXXX", command[4096], arguments[2048], said[512];
    make_64_pairs(dir);
    const char *tiny = "--layers 1 --d-model 32 --d-ff 64 --heads 2 --token-budget 300 "
                       "--warmup 50 --factor 3";
    snprintf(arguments, sizeof arguments,
             "train --data %s %s --epochs 3 --cooldown 2 --model %s/m.st --checkpoint %s/c.st "
             "--log %s/log.csv", dir, tiny, dir, dir, dir);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(command, sizeof command, "%s/log.csv", dir);
    FILE *log = fopen(command, "r");
    ck_assert_ptr_nonnull(log);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, log));
    long steps[3];
    double rate[3], train, validation;
    for (int row = 0; row < 3; row++) {
        int epoch;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, log));
        ck_assert_int_eq(sscanf(line, "%d,%ld,%lf,%lf,%lf", &epoch, &steps[row], &train,
                                &validation, &rate[row]), 5);
    }
    fclose(log);
    const long per_epoch = steps[0], end = steps[2];
    ck_assert_int_eq(end, 3 * per_epoch);
    ck_assert_double_eq_tol(rate[0], learning_rate(per_epoch - 1, 32, 3.0, 50),
                            1e-6 * rate[0]);   /* the first epoch: the schedule's own rate */
    const double last = learning_rate(end - 1, 32, 3.0, 50) / (2.0 * per_epoch);
    ck_assert_double_eq_tol(rate[2], last, 1e-6 * last);
    snprintf(arguments, sizeof arguments,   /* a run stopped early says its rate never fell */
             "train --data %s %s --epochs 3 --cooldown 2 --model %s/m4.st --checkpoint %s/c4.st "
             "--stop-after %ld", dir, tiny, dir, dir, end - 1);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    snprintf(said, sizeof said, "the cool-down was cut short at step %ld of %ld (--resume %s/c4.st",
             end - 1, end, dir);
    ck_assert_msg(strstr(r->out, said), "%s", r->out);
    snprintf(arguments, sizeof arguments,
             "train --data %s %s --epochs 4 --cooldown 2 --model %s/m2.st --checkpoint %s/c2.st "
             "--resume %s/c.st", dir, tiny, dir, dir, dir);
    r = run("", arguments);
    ck_assert_int_ne(r->status, 0);
    ck_assert_msg(strstr(r->err, "recipe.cooldown is"), "%s", r->err);
    snprintf(arguments, sizeof arguments,
             "train --data %s %s --epochs 3 --cooldown 4 --model %s/m3.st --checkpoint %s/c3.st",
             dir, tiny, dir, dir);
    r = run("", arguments);
    ck_assert_int_eq(r->status, 2);
    ck_assert_msg(strstr(r->err, "--cooldown"), "%s", r->err);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* train --subwords: one vocabulary of pieces for both sides, saved in the model, the pieces
   joined back into words by translate (no @@ in its output), and a resume with another
   size refused (by the checkpoint's configuration, whose vocabulary sizes differ, or by its
   recipe). */
START_TEST(cli_train_subwords_translates_words)
{
    char dir[] = "/tmp/transformer-test-bpe-XXXXXX", command[4096], arguments[2048];
    make_64_pairs(dir);
    snprintf(arguments, sizeof arguments,
             "train --data %s --epochs 30 --layers 1 --d-model 32 --d-ff 64 --heads 2 "
             "--token-budget 300 --warmup 50 --factor 3 --dropout 0 --smoothing 0 --tie-all "
             "--subwords 300 --model %s/m.st --checkpoint %s/c.st --log %s/log.csv", dir, dir,
             dir, dir);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    Model model;
    Vocab src_vocab, tgt_vocab;
    Safetensors file;
    snprintf(command, sizeof command, "%s/m.st", dir);
    const char *error = translation_model_load(command, &model, &src_vocab, &tgt_vocab, &file);
    ck_assert_msg(error == NULL, "%s", error);
    safetensors_free(&file);
    ck_assert(src_vocab.subwords && tgt_vocab.subwords);
    ck_assert_int_le(src_vocab.size, 300);
    ck_assert_int_eq(src_vocab.size, tgt_vocab.size);
    for (int i = 0; i < src_vocab.size; i++) ck_assert_str_eq(src_vocab.token[i], tgt_vocab.token[i]);
    char sizes[128];
    snprintf(sizes, sizeof sizes, "vocabularies: %d German, %d English", src_vocab.size,
             tgt_vocab.size);
    ck_assert_msg(strstr(r->out, sizes), "%s", r->out);
    model_free(&model), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    snprintf(arguments, sizeof arguments, "translate --model %s/m.st --beam 2 < %s/val.de",
             dir, dir);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    int lines = 0;
    for (const char *p = r->out; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, 64);
    ck_assert_msg(strstr(r->out, "@@") == NULL, "%s", r->out);
    snprintf(arguments, sizeof arguments,
             "train --data %s --epochs 31 --layers 1 --d-model 32 --d-ff 64 --heads 2 "
             "--token-budget 300 --warmup 50 --factor 3 --dropout 0 --smoothing 0 --tie-all "
             "--subwords 400 --model %s/m2.st --checkpoint %s/c2.st --resume %s/c.st", dir,
             dir, dir, dir);
    r = run("", arguments);
    ck_assert_int_ne(r->status, 0);   /* the vocabulary's size differs, or else the recipe */
    ck_assert_msg(strstr(r->err, "src_vocab is") || strstr(r->err, "recipe.subwords is"), "%s",
                  r->err);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

/* The recorded data of the translator's figures (figures/multi30k/): each attention row is a
   distribution, the decoder's map is causal, and the log is that of the run of make multi30k
   that run.txt describes: as many epochs as its recipe's --epochs, the best validation loss
   under half the first, the rate cooled to 0. */
START_TEST(multi30k_figure_data_is_consistent)
{
    static const char *const kinds[3] = {"encoder", "decoder", "cross"};
    for (int k = 0; k < 3; k++) {
        char path[256], line[8192];
        snprintf(path, sizeof path, "figures/multi30k/attention-%s.dat", kinds[k]);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "%s", path);
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));   /* comment */
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));   /* column tokens */
        int columns = 0;
        for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n")) columns++;
        columns--;   /* the corner */
        int rows = 0;
        while (fgets(line, sizeof line, f)) {
            strtok(line, " \n");   /* the row's token */
            double sum = 0.0;
            int j = 0;
            for (char *t = strtok(NULL, " \n"); t; t = strtok(NULL, " \n"), j++) {
                const double w = atof(t);
                ck_assert(w >= 0.0 && w <= 1.0);
                if (k == 1 && j > rows) ck_assert_msg(w == 0.0, "decoder row %d sees %d", rows, j);
                sum += w;
            }
            ck_assert_int_eq(j, columns);
            ck_assert_msg(sum > 0.999 && sum < 1.001, "%s row %d sums to %g", path, rows, sum);
            rows++;
        }
        fclose(f);
        ck_assert_int_gt(rows, 5);
    }
    FILE *log = fopen("figures/multi30k/log.csv", "r");
    ck_assert_ptr_nonnull(log);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, log));
    int best_epoch = 0, epoch;
    double best = 1e9, first = 0.0, train, validation;
    long step;
    double rate = 1.0;
    while (fgets(line, sizeof line, log)) {
        ck_assert_int_eq(sscanf(line, "%d,%ld,%lf,%lf,%lf", &epoch, &step, &train, &validation,
                                &rate), 5);
        if (epoch == 1) first = validation;
        if (validation < best) best = validation, best_epoch = epoch;
    }
    fclose(log);
    FILE *info = fopen("figures/multi30k/run.txt", "r");
    ck_assert_ptr_nonnull(info);
    int recipe_epochs = 0;
    while (fgets(line, sizeof line, info)) {
        const char *flag = strstr(line, "--epochs ");
        if (strncmp(line, "recipe:", 7) == 0 && flag) recipe_epochs = atoi(flag + 9);
    }
    fclose(info);
    ck_assert_int_eq(epoch, recipe_epochs);   /* the whole run, no early stop */
    ck_assert_int_gt(best_epoch, epoch / 2);
    ck_assert_double_lt(best, first / 2);
    ck_assert_double_lt(rate, 1e-6);    /* the cool-down ended at zero */
}
END_TEST

/* The translator that ships with the book (data/multi30k-de-en.safetensors, Getting to 41):
   a bfloat16 model file of at most 20 MB that translate uses without --model; greedy
   decoding of the first 100 sentences of test2016 scores, lowercased, at least one point less
   than the recorded greedy translations of the same lines by the same model
   (figures/multi30k/shipped.test2016.greedy.en, made when the model was made): another BLAS
   kernel may round a product differently and change a word or two, never a point. */
static double bleu_of_file(const char *hyp, const char *ref)
{
    char command[512];
    snprintf(command, sizeof command, "bleu %s %s --lowercase", hyp, ref);
    Run *r = run("", command);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    double score = 0.0;
    ck_assert_int_eq(sscanf(r->out, "BLEU = %lf", &score), 1);
    return score;
}

/* Run the transformer with ARGUMENTS on INPUT as its standard input, through a file: run()
   itself reads standard input from /dev/null. */
static Run *run_on(const char *arguments, const char *input)
{
    char path[128], environment[256];
    snprintf(path, sizeof path, "/tmp/transformer-test-%ld-input.de", (long)getpid());
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(input, file);
    fclose(file);
    snprintf(environment, sizeof environment, "sh -c '\"$0\" \"$@\" < %s'", path);
    Run *r = run(environment, arguments);
    unlink(path);
    return r;
}

/* The standard output of ARGUMENTS on INPUT into OUT, or NULL if the command failed. */
static const char *translate_with(const char *arguments, const char *input, char *out,
                                  size_t size)
{
    Run *r = run_on(arguments, input);
    const size_t length = strlen(r->out);
    if (r->status != 0 || length >= size) return NULL;
    memcpy(out, r->out, length + 1);
    return out;
}

static const char *translate_text(const char *input, char *out, size_t size)
{
    return translate_with("translate --beam 1", input, out, size);
}

/* translate keeps its lines: a blank line (empty, or a space and a tab) in gives a blank line
   out, at the start, in the middle and at the end, greedy or with a beam, in batches of one
   line or more, and the lines around it are translated as they are alone. */
START_TEST(translate_keeps_blank_lines)
{
    static const char *const ways[3] = {"translate --beam 1", "translate --beam 4",
                                        "translate --beam 4 --batch 1"};
    for (int w = 0; w < 3; w++) {
        static char both[4096], dog[1024], cats[1024], expected[4096];
        ck_assert_ptr_nonnull(translate_with(ways[w], "\nEin Hund.\n\nZwei Katzen.\n \t\n",
                                             both, sizeof both));
        ck_assert_ptr_nonnull(translate_with(ways[w], "Ein Hund.\n", dog, sizeof dog));
        ck_assert_ptr_nonnull(translate_with(ways[w], "Zwei Katzen.\n", cats, sizeof cats));
        ck_assert_int_gt(strlen(dog), 1);
        ck_assert_int_gt(strlen(cats), 1);
        snprintf(expected, sizeof expected, "\n%s\n%s\n", dog, cats);
        ck_assert_str_eq(both, expected);
    }
    static char blank[64];
    ck_assert_ptr_nonnull(translate_text("\n\n", blank, sizeof blank));   /* only blank lines */
    ck_assert_str_eq(blank, "\n\n");
}
END_TEST

/* A line that cannot be translated stops translate with one line naming it and status 1,
   after the lines before it have been translated and printed. */
START_TEST(translate_stops_at_an_unusable_line_after_the_lines_before)
{
    static char dog[1024];   /* first: run() returns the same Run each time */
    ck_assert_ptr_nonnull(translate_text("Ein Hund.\n", dog, sizeof dog));
    Run *r = run_on("translate --beam 1", "Ein Hund.\nZwei \xff Katzen.\nDrei.\n");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->out, dog);
    ck_assert_msg(strncmp(r->err, "transformer: standard input:2: invalid UTF-8", 44) == 0
                  && strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
}
END_TEST

/* A line of a megabyte among short ones is translated from its first 1000 bytes (cut at a
   character: the cut lands inside a two-byte ü), with one warning naming it, and the lines
   after it are translated too: three lines in, three out, status 0. */
START_TEST(translate_cuts_a_long_line_and_goes_on)
{
    static char dog[1024], cats[1024];
    ck_assert_ptr_nonnull(translate_text("Ein Hund.\n", dog, sizeof dog));
    ck_assert_ptr_nonnull(translate_text("Zwei Katzen.\n", cats, sizeof cats));
    const size_t size = 1 << 20;
    char *input = xmalloc(size + 64);
    strcpy(input, "Ein Hund.\n");
    size_t n = strlen(input);
    input[n++] = 'x';   /* then "ü" from byte 2 of the line on: byte 1000 is inside one */
    while (n < 10 + size) n += (size_t)sprintf(input + n, "\xc3\xbc");
    strcpy(input + n, "\nZwei Katzen.\n");
    Run *r = run_on("translate --beam 1", input);
    free(input);
    ck_assert_int_eq(r->status, 0);
    int lines = 0;
    for (const char *p = r->out; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, 3);
    ck_assert_int_eq(strncmp(r->out, dog, strlen(dog)), 0);
    ck_assert_msg(strlen(r->out) >= strlen(cats)
                  && strcmp(r->out + strlen(r->out) - strlen(cats), cats) == 0, "%s", r->out);
    ck_assert_msg(strstr(r->err, "transformer: standard input:2: warning: a line of ")
                  && strstr(r->err, "translated from its first 999 (at most 1000)")
                  && strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
}
END_TEST

/* attention maps one sentence: a second line is refused on one line, not left out. */
START_TEST(attention_refuses_a_second_line)
{
    Run *r = run_on("attention", "Ein Hund.\nZwei Katzen.\n");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->err, "transformer: standard input:2: a map is of one sentence; "
                             "give attention one line\n");
}
END_TEST

/* The translator module on the shipped model, lines to lines: blank lines give empty lines
   and the others their translations alone, in any batch and window (a window of 4 lines
   with --batch 1 cuts the 7 lines into two); a line that cannot be read stops it after the
   lines before it, its number returned with the tokenizer's reason. */
START_TEST(translator_translates_lines_and_stops_at_an_unusable_one)
{
    static const TranslatorSettings ways[3] = {{1, 32, 2.0, false}, {4, 32, 2.0, false},
                                                {4, 1, 2.0, false}};
    const char *const lines[7] = {"", "Ein Hund.", "", "Zwei Katzen.", " \t", "Ein Hund.",
                                  "Zwei \xff Katzen."};
    size_t sizes[7];
    for (int i = 0; i < 7; i++) sizes[i] = strlen(lines[i]);
    for (int w = 0; w < 3; w++) {
        Error error;
        Translator *translator = translator_open("data/multi30k-de-en.safetensors", &ways[w],
                                                 &error);
        ck_assert_msg(translator != NULL, "%s", error.message);
        const char *out[7], *alone;
        static char dog[1024], cats[1024];
        ck_assert_int_eq(translator_translate(translator, lines + 1, sizes + 1, 1, &alone), 1);
        snprintf(dog, sizeof dog, "%s", alone);
        ck_assert_int_eq(translator_translate(translator, lines + 3, sizes + 3, 1, &alone), 1);
        snprintf(cats, sizeof cats, "%s", alone);
        ck_assert_int_gt(strlen(dog), 0);
        ck_assert_int_gt(strlen(cats), 0);
        ck_assert_int_eq(translator_translate(translator, lines, sizes, 7, out), 6);
        ck_assert(!translator_output_failed(translator));
        ck_assert_msg(strncmp(translator_error(translator), "invalid UTF-8", 13) == 0, "%s",
                      translator_error(translator));
        const char *const expected[6] = {"", dog, "", cats, "", dog};
        for (int i = 0; i < 6; i++) ck_assert_str_eq(out[i], expected[i]);
        translator_close(translator);
    }
}
END_TEST

/* The calibration table: a prediction's bin is its confidence times B (1 in the last), a pad
   target is no prediction, and the ECE is the bins' weighted gaps: two predictions at 0.95
   (one right, one wrong) and one at 1 (right) in 10 bins: all three in bin 9, accuracy 2/3,
   mean confidence 2.9/3, ECE |2/3 - 2.9/3|; one at 0.25 (wrong) adds bin 2. */
START_TEST(calibration_bins_and_error)
{
    enum { V = 4 };
    const float p95 = logf(0.95f), rest = logf(0.05f / 3);
    const float logprobs[5][V] = {{p95, rest, rest, rest},          /* right: target 0 */
                                  {rest, p95, rest, rest},          /* wrong: target 0 */
                                  {0.0f, -INFINITY, -INFINITY, -INFINITY},   /* 1, right */
                                  {logf(0.25f), logf(0.25f), logf(0.25f), logf(0.25f)},
                                  {p95, rest, rest, rest}};         /* pad: not counted */
    const int target[5] = {0, 0, 0, 1, 9};
    Calibration c = calibration_start(10);
    calibration_add(&c, &logprobs[0][0], target, 3, V, 9);
    ck_assert_int_eq(calibration_predictions(&c), 3);
    ck_assert_int_eq(c.count[9], 3);
    ck_assert_int_eq(c.correct[9], 2);
    ck_assert_double_eq_tol(calibration_error(&c), fabs(2.0 / 3 - (0.95 + 0.95 + 1.0) / 3), 1e-6);
    calibration_add(&c, &logprobs[3][0], target + 3, 2, V, 9);
    ck_assert_int_eq(calibration_predictions(&c), 4);
    ck_assert_int_eq(c.count[2], 1);   /* 0.25 * 10 = 2.5: bin 2; its first word is not 1 */
    ck_assert_int_eq(c.correct[2], 0);
    ck_assert_double_eq_tol(calibration_error(&c),
                            (fabs(2.0 - 2.9) + fabs(0.0 - 0.25)) / 4, 1e-6);
    ck_assert_double_eq_tol(c.log_likelihood,
                            log(0.95) + log(0.05 / 3) + 0.0 + log(0.25), 1e-5);
}
END_TEST

/* transformer calibration of the shipped model: B lines whose counts sum to the predictions,
   accuracies and confidences in [0, 1] (nan for an empty bin), and the printed ECE equal to
   the one computed from the table. */
START_TEST(calibration_command_prints_a_consistent_table)
{
    Run *r = run("", "calibration --bins 8");
    ck_assert_msg(r->status == 0, "%s", r->err);
    long total = 0, predictions = 0;
    double gaps = 0.0, ece = -1.0;
    int bins = 0;
    for (const char *line = r->out; *line; line = strchr(line, '\n') + 1) {
        double low, high, conf, acc;
        long n;
        if (sscanf(line, "# predictions %ld", &predictions) == 1) continue;
        if (sscanf(line, "# ece %lf", &ece) == 1) continue;
        if (line[0] == '#') continue;
        ck_assert_int_eq(sscanf(line, "%lf %lf %ld %lf %lf", &low, &high, &n, &conf, &acc), 5);
        ck_assert_double_eq_tol(low, bins / 8.0, 1e-9);
        ck_assert_double_eq_tol(high, (bins + 1) / 8.0, 1e-9);
        bins++, total += n;
        if (n == 0) continue;
        ck_assert(conf >= low - 5e-5 && conf <= high + 5e-5);   /* the bin's own confidences */
        ck_assert(acc >= 0.0 && acc <= 1.0);
        gaps += n * fabs(acc - conf);
    }
    ck_assert_int_eq(bins, 8);
    ck_assert_int_gt(predictions, 10000);   /* the validation set's pieces */
    ck_assert_int_eq(total, predictions);
    ck_assert_double_eq_tol(ece, gaps / predictions, 2e-4);   /* the table's 4 decimals */
}
END_TEST

START_TEST(shipped_translator_translates)
{
    Safetensors file;
    const char *error = safetensors_read(&file, "data/multi30k-de-en.safetensors");
    ck_assert_msg(error == NULL, "%s", error);
    ck_assert_uint_le(file.data_size, 20u << 20);
    for (int i = 0; i < file.count; i++) ck_assert_int_eq(file.entries[i].dtype, DTYPE_BF16);
    safetensors_free(&file);
    char dir[] = "/tmp/transformer-test-shipped-XXXXXX", command[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(command, sizeof command,
             "head -100 data/multi30k/test2016.de > %s/src.de && "
             "head -100 data/multi30k/test2016.en > %s/ref.en && "
             "head -100 figures/multi30k/shipped.test2016.greedy.en > %s/recorded.en",
             dir, dir, dir);
    ck_assert_int_eq(system(command), 0);
    snprintf(command, sizeof command, "translate --beam 1 --precision fp32 < %s/src.de", dir);
    Run *r = run("", command);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->out, "@@") == NULL, "pieces not joined: %s", r->out);
    snprintf(command, sizeof command, "%s/hyp.en", dir);
    FILE *hyp = fopen(command, "w");
    ck_assert_ptr_nonnull(hyp);
    fputs(r->out, hyp);
    fclose(hyp);
    char hyp_path[300], ref_path[300], recorded_path[300];
    snprintf(hyp_path, sizeof hyp_path, "%s/hyp.en", dir);
    snprintf(ref_path, sizeof ref_path, "%s/ref.en", dir);
    snprintf(recorded_path, sizeof recorded_path, "%s/recorded.en", dir);
    const double score = bleu_of_file(hyp_path, ref_path);
    const double recorded = bleu_of_file(recorded_path, ref_path);
    ck_assert_double_gt(recorded, 30.0);   /* the recording is of a trained model */
    ck_assert_msg(score >= recorded - 1.0, "BLEU %.2f, recorded %.2f", score, recorded);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    ck_assert_int_eq(system(command), 0);
}
END_TEST

Suite *translate_suite(void)
{
    Suite *suite = suite_create("translate");
    TCase *batches = tcase_create("batches");
    tcase_add_test(batches, batch_plan_covers_every_pair_within_the_budget);
    tcase_add_test(batches, batch_fill_span_pads_and_shifts);
    tcase_add_test(batches, batch_order_is_a_permutation_per_epoch);
    tcase_add_test(batches, multi30k_figure_data_is_consistent);
    tcase_add_test(batches, calibration_bins_and_error);
    suite_add_tcase(suite, batches);
    TCase *command = tcase_create("command");
    tcase_set_timeout(command, 300);
    tcase_add_test(command, cli_train_and_translate_overfit_64_pairs);
    tcase_add_test(command, shipped_translator_translates);
    tcase_add_test(command, calibration_command_prints_a_consistent_table);
    tcase_add_test(command, translate_keeps_blank_lines);
    tcase_add_test(command, translator_translates_lines_and_stops_at_an_unusable_one);
    tcase_add_test(command, attention_refuses_a_second_line);
    tcase_add_test(command, translate_stops_at_an_unusable_line_after_the_lines_before);
    tcase_add_test(command, translate_cuts_a_long_line_and_goes_on);
    tcase_add_test(command, cli_train_cooldown_ends_at_the_last_epoch);
    tcase_add_test(command, cli_train_subwords_translates_words);
    suite_add_tcase(suite, command);
    return suite;
}
