/* run_tests.c -- runs every suite; prints Check's summary line ("100%: Checks: N, ...").
   Exit status 0 only when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
#include "tests.h"

char *figure_text(const char *name, const int *option)
{
    const FigureKind *kind = NULL;
    for (int k = 0; k < figure_kind_count; k++)
        if (strcmp(figure_kinds[k].name, name) == 0) kind = &figure_kinds[k];
    ck_assert_msg(kind != NULL, "no figure kind '%s'", name);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    ck_assert_ptr_nonnull(out);
    const char *problem = kind->emit(out, option);
    ck_assert_msg(problem == NULL, "%s", problem);
    fclose(out);
    return text;
}

int main(void)
{
    SRunner *runner = srunner_create(tensor_suite());
    srunner_add_suite(runner, masks_suite());
    srunner_add_suite(runner, model_suite());
    srunner_add_suite(runner, gradients_suite());
    srunner_add_suite(runner, training_suite());
    srunner_add_suite(runner, figure_suite());
    srunner_add_suite(runner, cli_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
