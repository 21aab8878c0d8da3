/* fuzz-model.c -- a translation model file of any bytes. With FUZZ_MAKE_SEED=PATH in the
   environment, it writes a valid tiny model to PATH instead (the seed of the corpus). */
#include <string.h>
#include "fuzz.h"
#include "modelfile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *seed = getenv("FUZZ_MAKE_SEED");
    if (seed == NULL) return 0;
    static char words[][8] = {"ein", "hund", "der", "a", "dog", "the"};
    char *tokens[12];
    for (int i = 0; i < 6; i++) tokens[2 * i] = tokens[2 * i + 1] = words[i];
    Vocab src, tgt;
    vocab_build(&src, tokens, 6, 2), vocab_build(&tgt, tokens + 6, 6, 2);
    Config config = config_default(src.size, tgt.size, 1);
    config.d_model = 4, config.d_ff = 4, config.heads = 2, config.max_len = 8;
    Model model;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 1, 1);
    model_initialize_parameters(&model, &rng);
    Error scratch;
    if (translation_model_save(seed, &model, &src, &tgt, false, &scratch)) {
        fprintf(stderr, "%s\n", scratch.message);
        exit(1);
    }
    exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Model model;
    Vocab src, tgt;
    Safetensors file;
    const char *error = translation_model_load(fuzz_file(data, size), &model, &src, &tgt,
                                               &file);
    if (error && (strchr(error, '\n') || strlen(error) >= sizeof file.error)) abort();
    safetensors_free(&file);
    model_free(&model);
    vocab_free(&src), vocab_free(&tgt);
    return 0;
}
