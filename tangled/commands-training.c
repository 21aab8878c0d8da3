#line 109 "book/program.nw"
/* The commands that train: copy (the copy-task chapter) and train (the translation
   chapter). Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "data.h"
#include "decode.h"
/* <<commands-training.c includes>> */
#line 10 "book/copy-command.nw"
#include <unistd.h>
#include "trainer.h"
#line 32 "book/translate-commands.nw"
#include "modelfile.h"
#line 391 "book/distributed.nw"
#include <limits.h>
#include "distributed.h"
/* <<commands-training.c functions>> */
#line 50 "book/copy-command.nw"
typedef struct {
    int batch_size, len, vocab;
    int *data;   /* [batch_size][len] */
} CopyTask;

static void copy_fill(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab,
                    &trainer->progress->data_rng);
    batch_fill(trainer->batch, copy->data, copy->data, 0);
}

static double copy_validate(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    Rng validation_rng;
    rng_seed(&validation_rng, (uint64_t)trainer->progress->epoch, 4);
    double validation = 0.0;
    for (int v = 0; v < 2; v++) {
        copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab, &validation_rng);
        batch_fill(trainer->batch, copy->data, copy->data, 0);
        validation += evaluate_batch(trainer->model, trainer->batch, trainer->settings,
                                     trainer->d_logprobs) / 2;
    }
    return validation;
}
#line 84 "book/copy-command.nw"
static int trainer_exit_status(const Trainer *trainer, TrainerOutcome outcome)
{
    if (outcome == TRAINER_FAILED) die("%s", trainer->message);
    if (outcome == TRAINER_SIGNALLED) {
        fprintf(stderr, "transformer: %s\n", trainer->message);
        return 128 + trainer->signal_number;
    }
    return 0;
}
#line 102 "book/copy-command.nw"
int run_copy(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int epochs = 20, batches = 20, batch_size = 80, len = 10, seed = 1;
    int precision = default_precision();   /* the speed chapter */
    TrainerSettings run = {.accumulate = 1};
    const char *resume_path = NULL;   /* the checkpoint chapter */
    TrainSettings settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0};
    int norm = 0;                     /* --norm: 0 pre, 1 post */
    /* <<Read the copy command's flags>> */
#line 155 "book/copy-command.nw"
    const Option options[] = {
        {"epochs", OPTION_INT, &epochs, 0, 10000, NULL, "N epochs to train (0: decode untrained)"},
        {"batches", OPTION_INT, &batches, 1, 100000, NULL, "N batches in an epoch"},
        {"batch-size", OPTION_INT, &batch_size, 1, 4096, NULL, "N sequences in a batch"},
        {"seed", OPTION_INT, &seed, 0, 1000000000, NULL,
         "S seed of the weights, the data and dropout"},
        {"log", OPTION_TEXT, &run.log_path, 0, 0, NULL,
         "FILE.csv write a row per epoch: losses, rate, time"},
        {"factor", OPTION_REAL, &settings.factor, 1e-6, 1e30, NULL,
         "F factor of the learning-rate schedule"},
        {"accumulate", OPTION_INT, &run.accumulate, 1, 4096, NULL,
         "K parts of a batch, one update: accumulation"},
        /* <<The copy command's experiment options>> */
#line 186 "book/copy-command.nw"
        {"norm", OPTION_CHOICE, &norm, 0, 0, "pre|post",
         "the layer norms before (pre) or after (post) each sublayer"},
        {"warmup", OPTION_LONG, &settings.warmup, 0, 10000000, NULL,
         "N warm-up steps of the learning-rate schedule (0: none)"},
        {"rate", OPTION_REAL, &settings.constant_rate, 1e-9, 10.0, NULL,
         "R a constant learning rate R instead of the schedule"},
        {"no-scale", OPTION_SWITCH, &config.unscaled_attention, 0, 0, NULL,
         "attention scores without the 1/sqrt(d_k)"},
#line 168 "book/copy-command.nw"
        PRECISION_OPTION(precision),
        MODEL_SIZE_OPTIONS(config),
        CHECKPOINT_OPTIONS(run, resume_path),
    };
    no_operands("copy", parse_options("copy", options, sizeof options / sizeof *options, argc,
                                      argv), argc, argv);
    check_model_size("copy", &config);
    config.norm = norm == 1 ? NORM_POST : NORM_PRE;
    set_precision("copy", precision);
#line 112 "book/copy-command.nw"
    run.epochs = epochs;
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng init_rng;
    rng_seed(&init_rng, (uint64_t)seed, 1);
    model_initialize_parameters(&model, &init_rng);
    model_prepare(&model, batch_size, len, len);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    TrainingProgress progress = {.epoch = 1};
    rng_seed(&progress.data_rng, (uint64_t)seed, 2);
    rng_seed(&progress.dropout_rng, (uint64_t)seed, 3);
    Batch batch;
    batch_init(&batch, batch_size, len, len - 1);
    CopyTask copy = {batch_size, len, config.src_vocab,
                     xmalloc((size_t)batch_size * len * sizeof(int))};
    Trainer trainer = {&model, &adam, &progress, &settings, &batch,
                       xmalloc((size_t)batch_size * len * config.tgt_vocab * sizeof(float)),
                       INFINITY, "", 0, 0};
    const BatchSource source = {&copy, batches, NULL, copy_fill, copy_validate, NULL, NULL};
    /* <<Resume the copy task from its checkpoint, if asked>> */
#line 524 "book/checkpoint.nw"
    char recipe_text[8][32];
    snprintf(recipe_text[0], 32, "%d", batch_size), snprintf(recipe_text[1], 32, "%d", batches);
    snprintf(recipe_text[2], 32, "%d", len), snprintf(recipe_text[3], 32, "%.17g", settings.factor);
    snprintf(recipe_text[4], 32, "%ld", settings.warmup);
    snprintf(recipe_text[5], 32, "%.9g", settings.smoothing);
    snprintf(recipe_text[6], 32, "%d", run.accumulate > 1 ? run.accumulate : 1);
    snprintf(recipe_text[7], 32, "%.17g", settings.constant_rate);
    const char *const recipe[9][2] = {
        {"recipe.task", "copy"}, {"recipe.batch_size", recipe_text[0]},
        {"recipe.batches", recipe_text[1]}, {"recipe.len", recipe_text[2]},
        {"recipe.factor", recipe_text[3]}, {"recipe.warmup", recipe_text[4]},
        {"recipe.smoothing", recipe_text[5]}, {"recipe.accumulate", recipe_text[6]},
        {"recipe.rate", recipe_text[7]}};
    run.recipe = recipe, run.recipe_count = 9;
    if (resume_path) {
        if (trainer_resume(&trainer, resume_path, recipe, 9)) die("%s", trainer.message);
        if (!run.checkpoint_path) run.checkpoint_path = resume_path;
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
               progress.epoch, progress.batch);
    }
#line 134 "book/copy-command.nw"
    /* <<Share the copy task among the processes that mpirun started>> */
#line 372 "book/distributed.nw"
    distributed_join("copy", &run, batch_size, &model, &adam, &progress);
#line 135 "book/copy-command.nw"
    const double start = seconds_now();
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &run);
    int status = trainer_exit_status(&trainer, outcome);
    if (outcome == TRAINER_FINISHED) {
        /* <<Decode examples and report whether they are copies>> */
#line 217 "book/copy-command.nw"
        int *data = copy.data;
        double eval_loss = 0.0;
        for (int e = 0; e < 5; e++) {
            copy_task_batch(data, batch_size, len, config.src_vocab, &progress.data_rng);
            batch_fill(&batch, data, data, 0);
            eval_loss += evaluate_batch(&model, &batch, &settings, trainer.d_logprobs) / 5;
        }
        int examples = batch_size < 8 ? batch_size : 8, exact = 1;
        copy_task_batch(data, examples, len, config.src_vocab, &progress.data_rng);
        for (int t = 0; t < len; t++) data[t] = t + 1;   /* the course's example: 1 2 ... 10 */
        int *out = xmalloc((size_t)examples * len * sizeof *out);
        uint8_t *keep = xmalloc((size_t)examples * len);
        padding_mask(keep, data, examples, len, 0);
        greedy_decode(&model, out, data, keep, examples, len, len, 1);
        printf("evaluation loss %.4f after %ld steps in %.1f s\n", eval_loss, adam.step,
               seconds_now() - start);
        for (int b = 0; b < examples; b++) {
            const bool same = memcmp(out + (size_t)b * len, data + (size_t)b * len,
                                     (size_t)len * sizeof *out) == 0;
            exact = exact && same;
            printf("  source ");
            for (int t = 0; t < len; t++) printf("%2d ", data[b * len + t]);
            printf(" decoded ");
            for (int t = 0; t < len; t++) printf("%2d ", out[b * len + t]);
            printf(" %s\n", same ? "exact" : "DIFFERENT");
        }
        free(out), free(keep);
#line 140 "book/copy-command.nw"
        status = exact ? 0 : 1;
    }
    distributed_leave("copy", &model, &adam, &progress);   /* the chapter on many machines */
    free(copy.data), free(trainer.d_logprobs);
    batch_free(&batch);
    adam_free(&adam);
    model_free(&model);
    return status;
}
#line 318 "book/translate.nw"
typedef struct {
    const Corpus *train, *validation;
    const BatchPlan *plan, *validation_plan;
    int *order;                        /* [plan->count]: the epoch's order of batches */
    const char *model_path;
    Vocab *src_vocab, *tgt_vocab;
    char error[4400];                  /* why the model could not be saved */
    int keep_epochs;                   /* keep the models of this many last epochs */
    int seed;                          /* of the weights, the batches' order and dropout */
} TranslationTask;

static void translation_start_epoch(void *task, int epoch)
{
    TranslationTask *t = task;
    batch_order(t->order, t->plan->count, (uint64_t)t->seed, epoch);
}

static void translation_fill(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    const BatchSpan *span = &t->plan->spans[t->order[trainer->progress->batch]];
    batch_fill_span(trainer->batch, t->train, t->plan, span, VOCAB_BLANK);
}

static double translation_validate(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    Batch *batch = trainer->batch;
    double validation_sum = 0.0;
    long validation_tokens = 0;
    for (int b = 0; b < t->validation_plan->count; b++) {
        batch_fill_span(batch, t->validation, t->validation_plan, &t->validation_plan->spans[b],
                        VOCAB_BLANK);
        int tokens = 0;
        for (int i = 0; i < batch->batch * batch->tgt_len; i++)
            tokens += batch->tgt_y[i] != VOCAB_BLANK;
        validation_sum += evaluate_batch(trainer->model, batch, trainer->settings,
                                         trainer->d_logprobs) * tokens;
        validation_tokens += tokens;
    }
    return validation_sum / (double)validation_tokens;
}

static const char *translation_save_best(void *task, const Model *model)
{
    TranslationTask *t = task;
    Error scratch;
    const char *error = translation_model_save(t->model_path, model, t->src_vocab,
                                               t->tgt_vocab, false, &scratch);
    if (error) snprintf(t->error, sizeof t->error, "%s", error);
    return error ? t->error : NULL;
}
#line 379 "book/translate.nw"
/* The file of epoch's model beside PATH: "DIR/NAME.safetensors" gives
   "DIR/NAME-epoch-EPOCH.safetensors". */
static void epoch_model_path(char *out, size_t size, const char *path, int epoch)
{
    const size_t length = strlen(path), suffix = strlen(".safetensors");
    const int stem = (int)(length > suffix && strcmp(path + length - suffix, ".safetensors") == 0
                           ? length - suffix : length);
    snprintf(out, size, "%.*s-epoch-%d.safetensors", stem, path, epoch);
}

static const char *translation_save_epoch(void *task, const Model *model, int epoch)
{
    TranslationTask *t = task;
    char path[4096];
    epoch_model_path(path, sizeof path, t->model_path, epoch);
    Error scratch;
    const char *error = translation_model_save(path, model, t->src_vocab, t->tgt_vocab,
                                               false, &scratch);
    if (error) {
        snprintf(t->error, sizeof t->error, "%s", error);
        return t->error;
    }
    epoch_model_path(path, sizeof path, t->model_path, epoch - t->keep_epochs);
    if (remove(path) != 0 && errno != ENOENT) {
        snprintf(t->error, sizeof t->error, "%s: cannot remove: %s", path, strerror(errno));
        return t->error;
    }
    return NULL;
}
#line 414 "book/translate.nw"
/* The numbers of a translation run's recipe as text: budget, subset, factor, warm-up,
   smoothing, parts and cool-down (0, or its steps/the step it ends at), in that order. */
static void recipe_numbers(char text[7][32], int token_budget, int subset,
                           const TrainSettings *settings, int accumulate)
{
    snprintf(text[0], 32, "%d", token_budget), snprintf(text[1], 32, "%d", subset);
    snprintf(text[2], 32, "%.17g", settings->factor);
    snprintf(text[3], 32, "%ld", settings->warmup);
    snprintf(text[4], 32, "%.9g", settings->smoothing);
    snprintf(text[5], 32, "%d", accumulate);
    if (settings->cooldown > 0)
        snprintf(text[6], 32, "%ld/%ld", settings->cooldown, settings->cooldown_end);
    else
        snprintf(text[6], 32, "0");
}
#line 435 "book/translate.nw"
int run_train(int argc, char **argv)
{
    const char *data_dir = "data/multi30k", *model_path = "multi30k.safetensors";
    const char *resume_path = NULL;
    int epochs = 30, token_budget = 2000;
    TrainerSettings run = {.accumulate = 1, .checkpoint_path = "multi30k-last.safetensors",
                           .checkpoint_every = 500};
    Config config = config_default(0, 0, 3);
    config.d_model = 256, config.d_ff = 1024, config.heads = 8;
    TrainSettings settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400,
                              .pad = VOCAB_BLANK};
    /* <<Read the train command's flags>> */
#line 475 "book/translate.nw"
    int subset = 0, keep_epochs = 0, cooldown_epochs = 0, subwords = 0, seed = 1, norm = 0;
    int precision = default_precision();
    const Option options[] = {
        {"data", OPTION_TEXT, &data_dir, 0, 0, NULL, "DIR the corpus's directory"},
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL, "FILE the best model's file"},
        {"log", OPTION_TEXT, &run.log_path, 0, 0, NULL,
         "FILE.csv write a row per epoch: losses, rate, time"},
        {"epochs", OPTION_INT, &epochs, 1, 100000, NULL, "N epochs to train"},
        {"token-budget", OPTION_INT, &token_budget, 16, 1000000, NULL,
         "N padded tokens in a batch"},
        {"minutes", OPTION_INT, &run.max_minutes, 1, 100000, NULL,
         "N stop after N minutes, a cool-down ending in time (default: no limit)"},
        {"subset", OPTION_INT, &subset, 1, 100000000, NULL,
         "N use the first N pairs of each file (default: all)"},
        {"warmup", OPTION_LONG, &settings.warmup, 1, 10000000, NULL,
         "N warm-up steps of the schedule"},
        {"rate", OPTION_REAL, &settings.constant_rate, 1e-9, 10.0, NULL,
         "R a constant learning rate R instead of the schedule"},
        {"norm", OPTION_CHOICE, &norm, 0, 0, "pre|post",
         "the layer norms before (pre, the default) or after (post) each sublayer"},
        {"factor", OPTION_REAL, &settings.factor, 1e-6, 1e30, NULL,
         "F factor of the learning-rate schedule"},
        {"smoothing", OPTION_FLOAT, &settings.smoothing, 0.0, 0.99, NULL, "E label smoothing"},
        {"dropout", OPTION_FLOAT, &config.dropout, 0.0, 0.99, NULL, "P dropout rate"},
        {"tie", OPTION_SWITCH, &config.tie_generator, 0, 0, NULL,
         "the generator shares the target embedding's weights"},
        {"tie-all", OPTION_SWITCH, &config.tie_source, 0, 0, NULL,
         "one vocabulary, one table: both embeddings and the generator"},
        {"subwords", OPTION_INT, &subwords, 0, 1000000, NULL,
         "N one vocabulary of N pieces of words (byte-pair encoding), if not 0"},
        {"accumulate", OPTION_INT, &run.accumulate, 1, 4096, NULL,
         "K parts of a batch, one update: accumulation"},
        {"patience", OPTION_INT, &run.patience, 0, 100000, NULL,
         "N stop after N epochs without a better validation loss, if not 0"},
        {"keep-epochs", OPTION_INT, &keep_epochs, 0, 100000, NULL,
         "K also keep the models of the last K epochs, for averaging"},
        {"cooldown", OPTION_INT, &cooldown_epochs, 0, 100000, NULL,
         "C lower the rate linearly to 0 over the last C of the --epochs, if not 0"},
        {"seed", OPTION_INT, &seed, 1, 1000000000, NULL,
         "S seed of the weights, the order of the batches and dropout"},
        PRECISION_OPTION(precision),
        MODEL_SIZE_OPTIONS(config),
        CHECKPOINT_OPTIONS(run, resume_path),
    };
    no_operands("train", parse_options("train", options, sizeof options / sizeof *options, argc,
                                       argv), argc, argv);
    config.tie_generator = config.tie_generator || config.tie_source;
    config.norm = norm == 1 ? NORM_POST : NORM_PRE;
    if (cooldown_epochs > epochs) usage_error("train", "--cooldown cannot exceed --epochs");
    check_model_size("train", &config);
    set_precision("train", precision);
#line 447 "book/translate.nw"
    /* <<Check at once that the model can be saved>> */
#line 533 "book/translate.nw"
    {
        Error probe;
        if (safetensors_can_write(model_path, &probe)) die("%s", probe.message);
        safetensors_remove_temporaries(model_path);
    }
#line 448 "book/translate.nw"
    run.epochs = epochs;
    /* <<Load the vocabularies and the training and validation pairs>> */
#line 193 "book/translate-files.nw"
    TranslationData data;
    char error[4400];
    if (translation_data_load(&data, data_dir, subset, config.tie_source, subwords, error,
                              sizeof error))
        die("%s", error);
    Corpus *train = &data.train, *validation = &data.validation;
    config.src_vocab = data.src_vocab.size, config.tgt_vocab = data.tgt_vocab.size;
    printf("%d training pairs, %d validation pairs; vocabularies: %d German, %d English\n",
           train->count, validation->count, data.src_vocab.size, data.tgt_vocab.size);
    fflush(stdout);
#line 450 "book/translate.nw"
    /* <<Set up the model, the optimizer and the batches>> */
#line 585 "book/translate.nw"
    BatchPlan plan, validation_plan;
    batch_plan(&plan, train, token_budget);
    batch_plan(&validation_plan, validation, token_budget);
    settings.cooldown_end = (long)epochs * plan.count;   /* one update a batch */
    settings.cooldown = (long)cooldown_epochs * plan.count;
    const BatchBounds most = batch_plan_bounds(&plan, &validation_plan);
    config.max_len = most.src_len > most.tgt_len ? most.src_len : most.tgt_len;
    Model model;
    model_init(&model, config);
    Rng init_rng;
    rng_seed(&init_rng, (uint64_t)seed, 1);
    model_initialize_parameters(&model, &init_rng);
    model_prepare_tokens(&model, most.pairs, most.src_len, most.tgt_len - 1, most.src_tokens,
                         most.tgt_tokens);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    TrainingProgress progress = {.epoch = 1};
    rng_seed(&progress.data_rng, (uint64_t)seed, 2);
    rng_seed(&progress.dropout_rng, (uint64_t)seed, 3);
    Batch batch;
    batch_init(&batch, most.pairs, most.src_len, most.tgt_len - 1);
    TranslationTask task = {train, validation, &plan, &validation_plan,
                            xmalloc((size_t)plan.count * sizeof(int)), model_path,
                            &data.src_vocab, &data.tgt_vocab, "", keep_epochs, seed};
    Trainer trainer = {&model, &adam, &progress, &settings, &batch,
                       xmalloc((size_t)most.tgt_tokens * config.tgt_vocab * sizeof(float)),
                       INFINITY, "", 0, 0};
    /* <<Resume the translation run, if asked>> */
#line 622 "book/translate.nw"
    char recipe_text[7][32], subwords_text[32], seed_text[32], rate_text[32];
    recipe_numbers(recipe_text, token_budget, subset, &settings, run.accumulate);
    snprintf(subwords_text, sizeof subwords_text, "%d", subwords);
    snprintf(seed_text, sizeof seed_text, "%d", seed);
    snprintf(rate_text, sizeof rate_text, "%.17g", settings.constant_rate);
    const char *const recipe[12][2] = {
        {"recipe.task", "multi30k"}, {"recipe.data", data_dir},
        {"recipe.token_budget", recipe_text[0]}, {"recipe.subset", recipe_text[1]},
        {"recipe.factor", recipe_text[2]}, {"recipe.warmup", recipe_text[3]},
        {"recipe.smoothing", recipe_text[4]}, {"recipe.accumulate", recipe_text[5]},
        {"recipe.cooldown", recipe_text[6]}, {"recipe.subwords", subwords_text},
        {"recipe.seed", seed_text}, {"recipe.rate", rate_text}};
    run.recipe = recipe, run.recipe_count = 12;
    if (resume_path) {
        if (trainer_resume(&trainer, resume_path, recipe, 12)) die("%s", trainer.message);
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
               progress.epoch, progress.batch);
    }
    /* <<Share the translation run among the processes that mpirun started>> */
#line 380 "book/distributed.nw"
    int smallest = INT_MAX;
    for (int b = 0; b < plan.count; b++)
        if (plan.spans[b].count < smallest) smallest = plan.spans[b].count;
    const int rank = distributed_join("train", &run, smallest, &model, &adam, &progress);
#line 451 "book/translate.nw"
    /* <<Train, keeping the best model>> */
#line 647 "book/translate.nw"
    const BatchSource source = {&task, plan.count, translation_start_epoch, translation_fill,
                                translation_validate,
                                rank == 0 ? translation_save_best : NULL,   /* the chapter on many machines */
                                rank == 0 && keep_epochs ? translation_save_epoch : NULL};
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &run);
    const int status = trainer_exit_status(&trainer, outcome);
    if (isfinite(trainer.best_validation))
        printf("best validation loss %.4f; model %s\n", trainer.best_validation, model_path);
    else
        printf("no validation yet, so no model saved; resume with --resume %s\n",
               run.checkpoint_path);
    distributed_leave("train", &model, &adam, &progress);   /* the chapter on many machines */
#line 452 "book/translate.nw"
    /* <<Free the training run>> */
#line 664 "book/translate.nw"
    free(task.order), free(trainer.d_logprobs);
    batch_free(&batch);
    batch_plan_free(&plan), batch_plan_free(&validation_plan);
    translation_data_free(&data);
    adam_free(&adam);
    model_free(&model);
#line 453 "book/translate.nw"
    return status;
}
