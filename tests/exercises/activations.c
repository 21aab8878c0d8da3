/* Exercises 8.1 and 8.2 (book/model.nw): the copy model's parameters, and the floats of its
   activations for batches of 80 sequences of 10 source and 9 target tokens.
   Built and run by `make exercise-model-count` and `make exercise-model-activations`. */
#include <stdio.h>
#include "model.h"

int main(void)
{
    Model model;
    model_init(&model, config_default(11, 11, 2));
    model_prepare(&model, 80, 10, 9);
    printf("parameters %zu\n", model_parameter_count(&model));
    printf("activations %zu floats\n", model.activations.total);
    model_free(&model);
    return 0;
}
