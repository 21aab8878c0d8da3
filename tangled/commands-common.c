/* What the files of commands share: the check of the model's sizes and the precision.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"

/* <<commands-common.c functions>> */
void choose_schedule(StepSettings *settings)
{
    settings->schedule = settings->rate > 0 ? SCHEDULE_CONSTANT : SCHEDULE_WARMUP;
}

void check_model_size(const char *command, const Config *config)
{
    if (config->d_model % config->heads || config->d_model % 2)
        usage_error(command, "--d-model must be even and a multiple of --heads");
}

void step_recipe(Recipe *recipe, const StepSettings *settings, const RunSettings *run)
{
    recipe_add(recipe, "recipe.factor", "%.17g", settings->factor);
    recipe_add(recipe, "recipe.warmup", "%ld", settings->warmup);
    recipe_add(recipe, "recipe.smoothing", "%.9g", settings->smoothing);
    recipe_add(recipe, "recipe.accumulate", "%d", run->accumulate > 1 ? run->accumulate : 1);
    recipe_add(recipe, "recipe.rate", "%.17g", settings->rate);
}

int default_precision(void)
{
    return bf16_hardware() ? PRECISION_BF16 : PRECISION_FP32;
}

void set_precision(const char *command, int choice)
{
    if (choice == PRECISION_BF16 && !bf16_hardware())
        usage_error(command, "--precision bf16 needs a processor with AVX512_BF16, which "
                             "this one lacks (or ONEDNN_MAX_CPU_ISA hides)");
    compute.precision = (Precision)choice;
}
