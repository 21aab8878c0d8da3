/* fuzz-cli.c -- the option parser on any command line: the input, cut at NUL bytes, is
   the arguments after a command's name, parsed with a table of every kind of option. A
   usage error ends the program in the real command (status 2); here exit is wrapped
   (-Wl,--wrap=exit) to come back to the harness, which checks the status. */
#include <setjmp.h>
#include <string.h>
#include "commands.h"   /* the options of the model's sizes, and cli.h */
#include "fuzz.h"

static jmp_buf back;
static int exit_status;
static bool parsing;   /* exit comes back only from the parser; libFuzzer's own exits */

void __real_exit(int status);
void __wrap_exit(int status)
{
    if (!parsing) __real_exit(status);
    parsing = false;
    exit_status = status;
    longjmp(back, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;   /* make fuzz passes -close_fd_mask=2: no usage errors shown */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MOST = 64 };
    static char text[4096];
    if (size >= sizeof text) return 0;
    memcpy(text, data, size), text[size] = '\0';
    char *line[MOST + 2] = {"fuzz"};   /* line[0]: the command's name, as in main */
    char **argv = line + 1;
    int argc = 0;
    for (size_t i = 0; i <= size && argc < MOST; i += strlen(text + i) + 1) argv[argc++] = text + i;
    argv[argc] = NULL;
    int epochs = 1, choice = 0, set = 0;
    long warmup = 1;
    double factor = 1;
    float dropout = 0;
    bool lowercase = false;
    const char *model = NULL;
    Config config = config_default(10, 10, 1);
    const Option options[] = {
        {"epochs", OPTION_INT, &epochs, 1, 100000, NULL},
        {"warmup", OPTION_LONG, &warmup, 1, 10000000, NULL},
        {"factor", OPTION_REAL, &factor, 1e-6, 1e30, NULL},
        {"dropout", OPTION_FLOAT, &dropout, 0.0, 0.99, NULL},
        {"model", OPTION_TEXT, &model, 0, 0, NULL},
        {"language", OPTION_CHOICE, &choice, 0, 0, "en|de"},
        {"lowercase", OPTION_SWITCH, &lowercase, 0, 0, NULL},
        {"detokenize", OPTION_SET, &set, 1, 0, NULL},
        MODEL_SIZE_OPTIONS(config),
    };
    exit_status = -1;
    if (setjmp(back) == 0) {
        parsing = true;
        const int first = parse_options("fuzz", options, sizeof options / sizeof *options,
                                        argc, argv);
        if (first < 0 || first > argc) abort();
        if (epochs < 1 || epochs > 100000 || warmup < 1 || !(factor >= 1e-6)
            || !(dropout >= 0 && dropout <= 0.99f) || (model && !*model) || choice < 0 || choice > 1)
            abort();
        /* check_model_size, the commands' check of the sizes together, lives with the copy
           command, outside this harness; parsing's own bounds are checked above. */
        parsing = false;
    } else if (exit_status != 2 && exit_status != 0) {
        abort();   /* a usage error exits with status 2; --help (the table printed) with 0 */
    }
    return 0;
}
