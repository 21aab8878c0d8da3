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
#include <unistd.h>
#include "trainer.h"
#include "modelfile.h"
#include "bleu.h"
#include "translator.h"
#include <limits.h>
#include "distributed.h"

/* <<commands-training.c functions>> */
typedef struct {
    int batch_size, len, vocab;
    int *data;   /* [batch_size][len] */
} CopyTask;

static void copy_fill(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab,
                    &trainer->progress.data_rng);
    batch_fill(&trainer->batch, copy->data, copy->data, 0);
}

static ValidationLoss copy_validate(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    Rng validation_rng;
    rng_seed(&validation_rng, (uint64_t)trainer->progress.epoch, 4);
    double validation = 0.0;
    for (int v = 0; v < 2; v++) {
        copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab, &validation_rng);
        batch_fill(&trainer->batch, copy->data, copy->data, 0);
        validation += evaluate_batch(&trainer->model, &trainer->batch, &trainer->step,
                                     trainer->d_logprobs) / 2;
    }
    return (ValidationLoss){validation, validation, NAN};   /* batches of equal length */
}

static int trainer_exit_status(const Trainer *trainer, TrainerOutcome outcome)
{
    if (outcome == TRAINER_FAILED) die("%s", trainer->error.message);
    if (outcome == TRAINER_SIGNALLED) {
        fprintf(stderr, "transformer: %s\n", trainer->error.message);
        return 128 + trainer->signal_number;
    }
    return 0;
}

typedef struct {
    Config config;
    RunSettings run;
    StepSettings settings;
    const char *resume_path;   /* the checkpoint chapter */
    int batches, batch_size, len, seed;
    int precision;             /* the speed chapter */
    int norm;                  /* --norm: 0 pre, 1 post */
    double adam_beta2, adam_eps;   /* Adam's beta_2 and epsilon: the paper's unless set */
} CopyFlags;

/* Read the copy command's flags. */
static void read_copy_flags(CopyFlags *flags, int argc, char **argv)
{
    *flags = (CopyFlags){
        .config = config_default(11, 11, 2), .run = {.epochs = 20, .accumulate = 1},
        .settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0},
        .batches = 20, .batch_size = 80, .len = 10, .seed = 1, .precision = default_precision(),
        .adam_beta2 = 0.98, .adam_eps = 1e-9};
    const Option options[] = {
        {"epochs", OPTION_INT, &flags->run.epochs, 0, 10000, NULL,
         "N epochs to train (0: decode untrained)"},
        {"batches", OPTION_INT, &flags->batches, 1, 100000, NULL, "N batches in an epoch"},
        {"batch-size", OPTION_INT, &flags->batch_size, 1, 4096, NULL, "N sequences in a batch"},
        {"seed", OPTION_INT, &flags->seed, 0, 1000000000, NULL,
         "S seed of the weights, the data and dropout"},
        {"log", OPTION_TEXT, &flags->run.log_path, 0, 0, NULL,
         "FILE.csv write a row per epoch: losses, rate, time"},
        STEP_OPTIONS(flags->settings, flags->run),
        /* <<The copy command's experiment options>> */
        {"norm", OPTION_CHOICE, &flags->norm, 0, 0, "pre|post",
         "the layer norms before (pre) or after (post) each sublayer"},
        {"no-scale", OPTION_SWITCH, &flags->config.unscaled_attention, 0, 0, NULL,
         "attention scores without the 1/sqrt(d_k)"},
        {"no-embed-scale", OPTION_SWITCH, &flags->config.unscaled_embedding, 0, 0, NULL,
         "embeddings without the factor sqrt(d_model)"},
        {"adam-beta2", OPTION_REAL, &flags->adam_beta2, 0.5, 0.999999, NULL,
         "B Adam's beta_2 (default 0.98)"},
        {"adam-eps", OPTION_REAL, &flags->adam_eps, 1e-12, 1.0, NULL,
         "E Adam's epsilon (default 1e-9)"},
        PRECISION_OPTION(flags->precision),
        MODEL_SIZE_OPTIONS(flags->config),
        CHECKPOINT_OPTIONS(flags->run, flags->resume_path),
    };
    no_operands("copy", parse_options("copy", options, sizeof options / sizeof *options, argc,
                                      argv), argc, argv);
    check_model_size("copy", &flags->config);
    flags->config.norm = flags->norm == 1 ? NORM_POST : NORM_PRE;
    choose_schedule(&flags->settings);
    set_precision("copy", flags->precision);
}

/* Decode examples and report whether they are copies: true if every one is. */
static bool decode_examples(Trainer *trainer, const CopyTask *copy, double start)
{
    const int batch_size = copy->batch_size, len = copy->len;
    int *data = copy->data;
    double eval_loss = 0.0;
    for (int e = 0; e < 5; e++) {
        copy_task_batch(data, batch_size, len, copy->vocab, &trainer->progress.data_rng);
        batch_fill(&trainer->batch, data, data, 0);
        eval_loss += evaluate_batch(&trainer->model, &trainer->batch, &trainer->step,
                                    trainer->d_logprobs) / 5;
    }
    int examples = batch_size < 8 ? batch_size : 8, exact = 1;
    copy_task_batch(data, examples, len, copy->vocab, &trainer->progress.data_rng);
    for (int t = 0; t < len; t++) data[t] = t + 1;   /* the course's example: 1 2 ... 10 */
    int *out = xmalloc((size_t)examples * len * sizeof *out);
    uint8_t *keep = xmalloc((size_t)examples * len);
    const SourceBatch sources = source_batch(data, keep, examples, len, 0);   /* with its mask */
    greedy_decode(&trainer->model, out, sources.tokens, sources.keep, examples, len, len, 1);
    printf("evaluation loss %.4f after %ld steps in %.1f s\n", eval_loss, trainer->adam.step,
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
    return exact;
}

int run_copy(int argc, char **argv)
{
    CopyFlags flags;
    read_copy_flags(&flags, argc, argv);
    flags.config.max_len = flags.len;
    const BatchBounds bounds = fixed_bounds(flags.batch_size, flags.len);
    Trainer trainer;
    trainer_setup(&trainer, flags.config, (uint64_t)flags.seed, &bounds, &flags.settings);
    trainer.adam.beta2 = flags.adam_beta2, trainer.adam.eps = flags.adam_eps;
    CopyTask copy = {flags.batch_size, flags.len, flags.config.src_vocab,
                     xmalloc((size_t)flags.batch_size * flags.len * sizeof(int))};
    const BatchSource source = {&copy, flags.batches, NULL, copy_fill, copy_validate, NULL,
                                NULL, false};
    /* <<Resume the copy task from its checkpoint, if asked>> */
    Recipe *recipe = &flags.run.recipe;
    recipe_add(recipe, "recipe.task", "copy");
    recipe_add(recipe, "recipe.batch_size", "%d", flags.batch_size);
    recipe_add(recipe, "recipe.batches", "%d", flags.batches);
    recipe_add(recipe, "recipe.len", "%d", flags.len);
    step_recipe(recipe, &flags.settings, &flags.run);
    if (flags.resume_path) {
        if (trainer_resume(&trainer, flags.resume_path, recipe))
            die("%s", trainer.error.message);
        if (!flags.run.checkpoint_path) flags.run.checkpoint_path = flags.resume_path;
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", flags.resume_path,
               trainer.adam.step, trainer.progress.epoch, trainer.progress.batch);
    }
    /* <<Share the copy task among the processes that mpirun started>> */
    distributed_join("copy", &flags.run, flags.batch_size, &trainer.model, &trainer.adam,
                     &trainer.progress);
    const double start = seconds_now();
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &flags.run);
    int status = trainer_exit_status(&trainer, outcome);
    if (outcome == TRAINER_FINISHED) status = decode_examples(&trainer, &copy, start) ? 0 : 1;
    /* the chapter on many machines */
    distributed_leave("copy", &trainer.model, &trainer.adam, &trainer.progress);
    recipe_free(&flags.run.recipe);
    free(copy.data);
    trainer_free(&trainer);
    return status;
}

typedef struct {
    Translator *translator;          /* on a copy of the run's weights */
    BleuLines sources, references;   /* val.de and val.en */
    int count;                       /* lines translated: all, or the first --subset */
    size_t *sizes;                   /* [count]: the sources' bytes */
    const char **out;                /* [count]: their translations */
} ValidationBleu;

/* Read the validation set's two files and set up the translator of the run's MODEL; dies
   with one line that names a file it cannot use. */
static void validation_bleu_open(ValidationBleu *v, const char *data_dir, int subset,
                                 const Model *model, const TranslationData *data)
{
    char path[4096];
    Error error;
    snprintf(path, sizeof path, "%s/val.de", data_dir);
    if (bleu_read_lines(&v->sources, path, &error)) die("%s", error.message);
    snprintf(path, sizeof path, "%s/val.en", data_dir);
    if (bleu_read_lines(&v->references, path, &error)) die("%s", error.message);
    if (v->sources.count != v->references.count)
        die("%s/val.de has %ld lines, val.en %ld", data_dir, v->sources.count,
            v->references.count);
    v->count = (int)(subset && subset < v->sources.count ? subset : v->sources.count);
    v->sizes = xmalloc((size_t)v->count * sizeof *v->sizes);
    v->out = xmalloc((size_t)v->count * sizeof *v->out);
    for (int i = 0; i < v->count; i++) v->sizes[i] = strlen(v->sources.lines[i]);
    v->translator = translator_open_run(model, &data->src_vocab, &data->tgt_vocab,
                                        &(TranslatorSettings){1, TRANSLATOR_BATCH, 0.0, false});
}

static void validation_bleu_close(ValidationBleu *v)
{
    translator_close(v->translator);
    bleu_lines_free(&v->sources), bleu_lines_free(&v->references);
    free(v->sizes), free(v->out);
}

/* The corpus BLEU of the greedy translations of the validation set by MODEL's weights;
   NAN, with a warning, if a line could not be translated. */
static double validation_bleu_measure(ValidationBleu *v, const Model *model)
{
    translator_take_weights(v->translator, model);
    const Precision run_precision = compute.precision;
    compute.precision = PRECISION_FP32;   /* translate's, whatever the run's */
    const int done = translator_translate(v->translator, (const char *const *)v->sources.lines,
                                          v->sizes, v->count, v->out);
    compute.precision = run_precision;
    if (done < v->count) {
        fprintf(stderr, "transformer train: warning: no validation BLEU this epoch: "
                        "val.de:%d: %s\n", done + 1, translator_error(v->translator));
        return NAN;
    }
    const char *const *references = (const char *const *)v->references.lines;
    return bleu_corpus(v->out, &references, 1, v->count, false, false).score;
}

typedef struct {
    const Corpus *train, *validation;
    const BatchPlan *plan, *validation_plan;
    int *order;                        /* [plan->count]: the epoch's order of batches */
    const char *model_path;
    Vocab *src_vocab, *tgt_vocab;
    Error error;                       /* why the model could not be saved */
    int keep_epochs;                   /* keep the models of this many last epochs */
    int seed;                          /* of the weights, the batches' order and dropout */
    ValidationBleu *bleu;              /* --validate-bleu (above), or NULL */
} TranslationTask;

static void translation_start_epoch(void *task, int epoch)
{
    TranslationTask *t = task;
    batch_order(t->order, t->plan->count, (uint64_t)t->seed, epoch);
}

static void translation_fill(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    const BatchSpan *span = &t->plan->spans[t->order[trainer->progress.batch]];
    batch_fill_span(&trainer->batch, t->train, t->plan, span, VOCAB_BLANK);
}

static ValidationLoss translation_validate(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    Batch *batch = &trainer->batch;
    double validation_sum = 0.0, batch_means = 0.0;
    long validation_tokens = 0;
    for (int b = 0; b < t->validation_plan->count; b++) {
        batch_fill_span(batch, t->validation, t->validation_plan, &t->validation_plan->spans[b],
                        VOCAB_BLANK);
        const int tokens = batch_target_tokens(batch, VOCAB_BLANK);
        const double loss = evaluate_batch(&trainer->model, batch, &trainer->step,
                                           trainer->d_logprobs);
        validation_sum += loss * tokens, validation_tokens += tokens, batch_means += loss;
    }
    return (ValidationLoss){validation_sum / (double)validation_tokens,
                            batch_means / t->validation_plan->count,
                            t->bleu ? validation_bleu_measure(t->bleu, &trainer->model) : NAN};
}

static const char *translation_save_best(void *task, const Model *model)
{
    TranslationTask *t = task;
    Error scratch;
    const char *error = translation_model_save(t->model_path, model, t->src_vocab,
                                               t->tgt_vocab, false, &scratch);
    return error ? error_set(&t->error, "%s", error) : NULL;
}

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
    if (error) return error_set(&t->error, "%s", error);
    epoch_model_path(path, sizeof path, t->model_path, epoch - t->keep_epochs);
    if (remove(path) != 0 && errno != ENOENT)
        return error_set(&t->error, "%s: cannot remove: %s", path, strerror(errno));
    return NULL;
}

typedef struct {
    Config config;
    RunSettings run;
    StepSettings settings;
    const char *resume_path;   /* the checkpoint chapter */
    const char *data_dir, *model_path;
    int token_budget, subset, keep_epochs, cooldown_epochs, subwords, seed;
    int precision, norm;
    bool validate_bleu;
} TrainFlags;

/* The recipe of a translation run, after its flags. */
static void translation_recipe(Recipe *recipe, const TrainFlags *flags)
{
    recipe_add(recipe, "recipe.task", "multi30k");
    recipe_add(recipe, "recipe.data", "%s", flags->data_dir);
    recipe_add(recipe, "recipe.token_budget", "%d", flags->token_budget);
    recipe_add(recipe, "recipe.subset", "%d", flags->subset);
    step_recipe(recipe, &flags->settings, &flags->run);
    if (flags->settings.cooldown > 0)   /* its steps/the step it ends at */
        recipe_add(recipe, "recipe.cooldown", "%ld/%ld", flags->settings.cooldown,
                   flags->settings.cooldown_end);
    else
        recipe_add(recipe, "recipe.cooldown", "0");
    recipe_add(recipe, "recipe.subwords", "%d", flags->subwords);
    recipe_add(recipe, "recipe.seed", "%d", flags->seed);
}

/* Read the train command's flags. */
static void read_train_flags(TrainFlags *flags, int argc, char **argv)
{
    *flags = (TrainFlags){
        .config = config_default(0, 0, 3),
        .run = {.epochs = 30, .accumulate = 1, .checkpoint_path = "multi30k-last.safetensors",
                .checkpoint_every = 500},
        .settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400, .pad = VOCAB_BLANK},
        .data_dir = "data/multi30k", .model_path = "multi30k.safetensors",
        .token_budget = 2000, .seed = 1, .precision = default_precision()};
    Config *config = &flags->config;
    config->d_model = 256, config->d_ff = 1024, config->heads = 8;
    StepSettings *settings = &flags->settings;
    const Option options[] = {
        {"data", OPTION_TEXT, &flags->data_dir, 0, 0, NULL, "DIR the corpus's directory"},
        {"model", OPTION_TEXT, &flags->model_path, 0, 0, NULL, "FILE the best model's file"},
        {"log", OPTION_TEXT, &flags->run.log_path, 0, 0, NULL,
         "FILE.csv write a row per epoch: losses, rate, time"},
        {"epochs", OPTION_INT, &flags->run.epochs, 1, 100000, NULL, "N epochs to train"},
        {"token-budget", OPTION_INT, &flags->token_budget, 16, 1e6, NULL,
         "N padded tokens in a batch"},
        {"minutes", OPTION_INT, &flags->run.max_minutes, 1, 100000, NULL,
         "N stop after N minutes, a cool-down ending in time (default: no limit)"},
        {"subset", OPTION_INT, &flags->subset, 1, 100000000, NULL,
         "N use the first N pairs of each file (default: all)"},
        {"norm", OPTION_CHOICE, &flags->norm, 0, 0, "pre|post",
         "the layer norms before (pre, the default) or after (post) each sublayer"},
        {"dropout", OPTION_FLOAT, &config->dropout, 0.0, 0.99, NULL, "P dropout rate"},
        {"tie", OPTION_SWITCH, &config->tie_generator, 0, 0, NULL,
         "the generator shares the target embedding's weights"},
        {"tie-all", OPTION_SWITCH, &config->tie_source, 0, 0, NULL,
         "one vocabulary, one table: both embeddings and the generator"},
        {"subwords", OPTION_INT, &flags->subwords, 0, 1e6, NULL,
         "N one vocabulary of N pieces of words (byte-pair encoding), if not 0"},
        {"patience", OPTION_INT, &flags->run.patience, 0, 100000, NULL,
         "N stop after N epochs without a better validation loss, if not 0"},
        {"keep-epochs", OPTION_INT, &flags->keep_epochs, 0, 100000, NULL,
         "K also keep the models of the last K epochs, for averaging"},
        {"cooldown", OPTION_INT, &flags->cooldown_epochs, 0, 100000, NULL,
         "C lower the rate linearly to 0 over the last C of the --epochs, if not 0"},
        {"seed", OPTION_INT, &flags->seed, 1, 1000000000, NULL,
         "S seed of the weights, the order of the batches and dropout"},
        {"validate-bleu", OPTION_SWITCH, &flags->validate_bleu, 0, 0, NULL,
         "also translate the validation set greedily each epoch: its BLEU in the log"},
        STEP_OPTIONS(*settings, flags->run),
        PRECISION_OPTION(flags->precision),
        MODEL_SIZE_OPTIONS(*config),
        CHECKPOINT_OPTIONS(flags->run, flags->resume_path),
    };
    no_operands("train", parse_options("train", options, sizeof options / sizeof *options,
                                       argc, argv), argc, argv);
    config->tie_generator = config->tie_generator || config->tie_source;
    config->norm = flags->norm == 1 ? NORM_POST : NORM_PRE;
    choose_schedule(settings);
    if (flags->cooldown_epochs > flags->run.epochs)
        usage_error("train", "--cooldown cannot exceed --epochs");
    check_model_size("train", config);
    set_precision("train", flags->precision);
}

/* Check at once that the model can be saved. */
static void check_model_can_be_saved(const char *model_path)
{
    Error probe;
    if (safetensors_can_write(model_path, &probe)) die("%s", probe.message);
    safetensors_remove_temporaries(model_path);
}

int run_train(int argc, char **argv)
{
    TrainFlags flags;
    read_train_flags(&flags, argc, argv);
    check_model_can_be_saved(flags.model_path);
    /* <<Load the vocabularies and the training and validation pairs>> */
    TranslationData data;
    Error error;
    if (translation_data_load(&data, flags.data_dir, flags.subset, flags.config.tie_source,
                              flags.subwords, &error))
        die("%s", error.message);
    Corpus *train = &data.train, *validation = &data.validation;
    flags.config.src_vocab = data.src_vocab.size, flags.config.tgt_vocab = data.tgt_vocab.size;
    printf("%d training pairs, %d validation pairs; vocabularies: %d German, %d English\n",
           train->count, validation->count, data.src_vocab.size, data.tgt_vocab.size);
    fflush(stdout);
    /* <<Set up the trainer and the batches>> */
    BatchPlan plan, validation_plan;
    batch_plan(&plan, train, flags.token_budget);
    batch_plan(&validation_plan, validation, flags.token_budget);
    flags.settings.cooldown_end = (long)flags.run.epochs * plan.count;   /* one update a batch */
    flags.settings.cooldown = (long)flags.cooldown_epochs * plan.count;
    const BatchBounds most = batch_plan_bounds(&plan, &validation_plan);
    flags.config.max_len = most.src_len > most.tgt_len ? most.src_len : most.tgt_len;
    Trainer trainer;
    trainer_setup(&trainer, flags.config, (uint64_t)flags.seed, &most, &flags.settings);
    ValidationBleu bleu;
    if (flags.validate_bleu)
        validation_bleu_open(&bleu, flags.data_dir, flags.subset, &trainer.model, &data);
    TranslationTask task = {train, validation, &plan, &validation_plan,
                            xmalloc((size_t)plan.count * sizeof(int)), flags.model_path,
                            &data.src_vocab, &data.tgt_vocab, {""}, flags.keep_epochs,
                            flags.seed, flags.validate_bleu ? &bleu : NULL};
    /* <<Resume the translation run, if asked>> */
    translation_recipe(&flags.run.recipe, &flags);
    if (flags.resume_path) {
        if (trainer_resume(&trainer, flags.resume_path, &flags.run.recipe))
            die("%s", trainer.error.message);
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", flags.resume_path,
               trainer.adam.step, trainer.progress.epoch, trainer.progress.batch);
    }
    /* <<Share the translation run among the processes that mpirun started>> */
    int smallest = INT_MAX;
    for (int b = 0; b < plan.count; b++)
        if (plan.spans[b].count < smallest) smallest = plan.spans[b].count;
    const int rank = distributed_join("train", &flags.run, smallest, &trainer.model, &trainer.adam,
                                      &trainer.progress);
    /* <<Train, keeping the best model>> */
    const BatchSource source = {&task, plan.count, translation_start_epoch, translation_fill,
                                translation_validate,
                                /* the chapter on many machines: rank 0 saves */
                                rank == 0 ? translation_save_best : NULL,
                                rank == 0 && flags.keep_epochs ? translation_save_epoch : NULL,
                                flags.validate_bleu};
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &flags.run);
    const int status = trainer_exit_status(&trainer, outcome);
    if (isfinite(trainer.progress.best_validation))
        printf("best validation loss %.4f; model %s\n", trainer.progress.best_validation,
               flags.model_path);
    else
        printf("no validation yet, so no model saved; resume with --resume %s\n",
               flags.run.checkpoint_path);
    /* the chapter on many machines */
    distributed_leave("train", &trainer.model, &trainer.adam, &trainer.progress);
    /* <<Free the training run>> */
    recipe_free(&flags.run.recipe);
    free(task.order);
    if (task.bleu) validation_bleu_close(task.bleu);
    trainer_free(&trainer);
    batch_plan_free(&plan), batch_plan_free(&validation_plan);
    translation_data_free(&data);
    return status;
}
