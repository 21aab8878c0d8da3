/* fuzz-checkpoint.c -- a checkpoint of any bytes, loaded into a tiny model of a fixed
   configuration and recipe. FUZZ_MAKE_SEED=PATH writes a valid checkpoint to PATH. */
#include <string.h>
#include "checkpoint.h"
#include "fuzz.h"

static Model model;
static Adam adam;
static const char *const recipe[2][2] = {{"recipe.task", "fuzz"}, {"recipe.len", "5"}};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    Config config = config_default(6, 6, 1);
    config.d_model = 4, config.d_ff = 4, config.heads = 2, config.max_len = 8;
    model_init(&model, config);
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    const char *seed = getenv("FUZZ_MAKE_SEED");
    if (seed == NULL) return 0;
    Rng rng;
    rng_seed(&rng, 1, 1);
    model_initialize_parameters(&model, &rng);
    adam.step = 3;
    TrainingProgress progress = {.epoch = 1, .batch = 2, .loss_sum = 1.5};
    rng_seed(&progress.data_rng, 1, 2), rng_seed(&progress.dropout_rng, 1, 3);
    Error scratch;
    if (checkpoint_save(seed, &model, &adam, &progress, recipe, 2, &scratch)) {
        fprintf(stderr, "%s\n", scratch.message);
        exit(1);
    }
    exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TrainingProgress progress;
    Safetensors file;
    const char *error = checkpoint_load(fuzz_file(data, size), &model, &adam, &progress,
                                        recipe, 2, &file);
    if (error && (strchr(error, '\n') || strlen(error) >= sizeof file.error)) abort();
    if (!error && (progress.epoch < 1 || progress.batch < 0 || adam.step < 0)) abort();
    safetensors_free(&file);
    return 0;
}
