/* What the files of commands share: the check of the model's sizes and the precision.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"

/* <<commands-common.c functions>> */
void check_model_size(const char *command, const Config *config)
{
    if (config->d_model % config->heads || config->d_model % 2)
        usage_error(command, "--d-model must be even and a multiple of --heads");
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
