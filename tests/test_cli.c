/* test_cli.c -- the transformer program: help, version, and one clear line with exit
   status 2 for every mistake on the command line. Runs the binary named by $TRANSFORMER. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests.h"

/* A usage error: status 2, nothing on stdout, exactly one line on stderr that starts with
   the program's name and contains the given text. */
static void assert_usage_error(const char *environment, const char *arguments, const char *says)
{
    Run *r = run(environment, arguments);
    ck_assert_msg(r->status == 2, "'%s': status %d, stderr: %s", arguments, r->status, r->err);
    ck_assert_str_eq(r->out, "");
    ck_assert_msg(strncmp(r->err, "transformer", 11) == 0, "'%s': %s", arguments, r->err);
    char *newline = strchr(r->err, '\n');
    ck_assert_msg(newline && newline[1] == '\0', "'%s': not one line: %s", arguments, r->err);
    ck_assert_msg(strstr(r->err, says) != NULL, "'%s': '%s' not in: %s", arguments, says, r->err);
}

START_TEST(cli_help_and_version)
{
    Run *r = run("", "--version");
    ck_assert_int_eq(r->status, 0);
    ck_assert_str_eq(r->out, "transformer 0.1.0\n");
    r = run("", "--help");
    ck_assert_int_eq(r->status, 0);
    ck_assert_str_eq(r->err, "");
    static char help[sizeof r->out];   /* run() reuses its result: keep a copy */
    strcpy(help, r->out);
    static const char *const commands[] = {"figure-data", "demo", "random", "time-matmul",
                                           "gradcheck", "copy"};
    for (int c = 0; c < 6; c++) {
        ck_assert_msg(strstr(help, commands[c]) != NULL, "%s not in --help", commands[c]);
        char arguments[64];
        snprintf(arguments, sizeof arguments, "%s --help", commands[c]);
        Run *h = run("", arguments);
        ck_assert_int_eq(h->status, 0);
        ck_assert_msg(strncmp(h->out, "usage: transformer ", 19) == 0, "%s: %s", arguments, h->out);
    }
    r = run("", "figure-data --help");
    ck_assert(strstr(r->out, "mask subsequent") && strstr(r->out, "mask batch"));
    ck_assert(strstr(r->out, "--size N") && strstr(r->out, "1 to 512, default 20"));
    r = run("TRANSFORMER_MATMUL=fast", "--help");   /* help works even then */
    ck_assert_int_eq(r->status, 0);
    ck_assert(strstr(r->out, "TRANSFORMER_MATMUL=blas|reference") != NULL);
}
END_TEST

/* --help is made from the same table the parser reads: every flag a command's help lists is
   one it accepts (given without its value, it is refused for the missing value, never as
   unknown), every help ends with the same --help line, and the defaults it prints are the
   command's (a few checked by hand). */
START_TEST(cli_help_lists_what_the_parser_accepts)
{
    Run *r = run("", "--help");
    static char list[sizeof r->out];
    strcpy(list, strstr(r->out, "commands:\n") + strlen("commands:\n"));
    int commands = 0, flags = 0;
    for (char *line = strtok(list, "\n"); line && line[0] == ' '; line = strtok(NULL, "\n")) {
        char command[32];
        ck_assert_int_eq(sscanf(line, " %31s", command), 1);
        if (strcmp(command, "figure-data") == 0) continue;   /* its help lists its figures */
        char arguments[256];
        snprintf(arguments, sizeof arguments, "%s --help", command);
        static char help[sizeof r->out];
        strcpy(help, run("", arguments)->out);
        ck_assert_msg(strstr(help, "\noptions:\n") != NULL, "%s: %s", arguments, help);
        ck_assert_msg(strstr(help, "  --help                   print this help and exit\n"),
                      "%s: %s", arguments, help);
        for (char *at = strstr(help, "\n  --"); at; at = strstr(at + 1, "\n  --")) {
            char flag[64] = "", value[64] = "";
            sscanf(at + 1, " %63s %63s", flag, value);
            if (strcmp(flag, "--help") == 0) continue;
            const bool takes_value = (value[0] >= 'A' && value[0] <= 'Z')   /* N, FILE */
                                     || strchr(value, '|') != NULL;         /* a|b */
            /* a switch alone would run the command (copy --no-scale trains): ask for help
               after it, which the parser reaches only if it accepted the switch */
            snprintf(arguments, sizeof arguments, "%s %s%s", command, flag,
                     takes_value ? "" : " --help");
            Run *f = run("", arguments);
            ck_assert_msg(strstr(f->err, "unknown option") == NULL, "%s: %s", arguments, f->err);
            if (takes_value)
                ck_assert_msg(f->status == 2 && (strstr(f->err, "needs a value")
                                                 || strstr(f->err, "got 'nothing'")),
                              "%s: %d %s", arguments, f->status, f->err);
            flags++;
        }
        commands++;
    }
    ck_assert_int_ge(commands, 12);
    ck_assert_int_ge(flags, 60);
    static const char *const defaults[][2] = {
        {"copy --help", "  --epochs N               epochs to train (0: decode untrained) (default 20)\n"},
        {"train --help", "  --warmup N               warm-up steps of the schedule (0: none) (default 400)\n"},
        {"translate --help", "  --beam K                 beam size (1: greedy decoding) (default 4)\n"},
        {"tokenize --help", "  --language en|de         the language's rules (default en)\n"},
    };
    for (int d = 0; d < 4; d++) {
        r = run("", defaults[d][0]);
        ck_assert_msg(strstr(r->out, defaults[d][1]) != NULL, "%s: %s", defaults[d][0], r->out);
    }
}
END_TEST

START_TEST(cli_rejects_unknown_commands_and_options)
{
    assert_usage_error("", "", "which command?");
    assert_usage_error("", "frobnicate", "unknown command 'frobnicate'");
    assert_usage_error("", "--frobnicate", "unknown option '--frobnicate'");
    assert_usage_error("", "figure-data mask subsequent --bogus 3", "unknown option '--bogus'");
    assert_usage_error("", "figure-data mask sideways", "unknown figure 'mask sideways'");
    assert_usage_error("", "figure-data", "which figure?");
    assert_usage_error("", "demo extra", "unexpected argument 'extra'");
    assert_usage_error("", "random --gaussian", "unknown option '--gaussian'");
    assert_usage_error("", "time-matmul --kernel fast", "--kernel expects 'blas' or 'reference'");
    assert_usage_error("TRANSFORMER_MATMUL=fast", "demo", "TRANSFORMER_MATMUL");
    assert_usage_error("TRANSFORMER_KERNELS=slow", "demo", "TRANSFORMER_KERNELS");
    assert_usage_error("TRANSFORMER_PRODUCTS=mine", "demo", "TRANSFORMER_PRODUCTS");
    assert_usage_error("", "benchmark", "'train' or 'decode'");
    assert_usage_error("", "benchmark fast", "'train' or 'decode'");
    assert_usage_error("", "benchmark train --epochs 3", "unknown option '--epochs'");
    assert_usage_error("", "benchmark train --threads 0", "--threads expects");
    assert_usage_error("", "benchmark train --len 1", "--len expects");
    assert_usage_error("", "benchmark decode --d-model 30 --heads 8", "multiple of --heads");
}
END_TEST

/* The training loss of the first epoch printed by a tiny copy run with these flags. */
static double first_epoch_loss(const char *flags)
{
    char arguments[256];
    snprintf(arguments, sizeof arguments,
             "copy --d-model 16 --d-ff 32 --heads 2 --batch-size 16 --batches 2 --epochs 1 %s",
             flags);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0 || r->status == 1, "status %d: %s", r->status, r->err);
    const char *loss = strstr(r->out, "loss ");
    double value;
    ck_assert_msg(loss && sscanf(loss, "loss %lf", &value) == 1, "%s", r->out);
    return value;
}

/* --seed: the default is seed 1, and another seed trains on other data from other
   weights, so its loss differs. */
START_TEST(cli_copy_seed_chooses_the_run)
{
    const double default_seed = first_epoch_loss("");
    ck_assert_double_eq(first_epoch_loss("--seed 1"), default_seed);
    ck_assert_double_ne(first_epoch_loss("--seed 2"), default_seed);
}
END_TEST

/* The benchmark's line: every key, the exact FLOP count of equation (step-flops) for this
   configuration (d 16, d_ff 32, V 7, N 1, B 3, L 5: 2 * 3 * 9 * 16 * ... by hand below),
   a positive rate; and the same for decoding, with both kinds of kernels. */
START_TEST(cli_benchmark_prints_its_line)
{
    const char *sizes = "--layers 1 --d-model 16 --d-ff 32 --heads 2 --vocab 7 --batch 3 --len 5";
    char arguments[256];
    snprintf(arguments, sizeof arguments, "benchmark train %s --steps 2 --warmup-steps 1", sizes);
    const char *environments[2] = {"", "TRANSFORMER_KERNELS=reference TRANSFORMER_PRODUCTS=openblas"};
    for (int e = 0; e < 2; e++) {
        Run *r = run(environments[e], arguments);
        ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
        ck_assert_msg(strncmp(r->out, "c train tokens_per_s=", 21) == 0, "%s", r->out);
        double rate = atof(r->out + 21);
        ck_assert_double_gt(rate, 0.0);
        /* B = 3, S = 5, T = 4, d = 16, d_ff = 32, V = 7, N = 1: n_S = 15, n_T = 12;
           encoder 8*15*256 + 4*3*25*16 + 4*15*16*32 = 30720 + 4800 + 30720 = 66240;
           decoder 8*12*256 + 4*3*16*16 + (4*12*256 + 4*15*256 + 4*3*4*5*16) + 4*12*16*32
                 = 24576 + 3072 + (12288 + 15360 + 3840) + 24576 = 83712;
           generator 2*12*16*7 = 2688; times 3: 457920. */
        ck_assert_msg(strstr(r->out, " flops_per_step=457920 ") != NULL, "%s", r->out);
        ck_assert_msg(strstr(r->out, " tokens_per_step=12 ") != NULL, "%s", r->out);
        for (const char *const *key = (const char *const[]){"step_ms=", "peak_rss_mib=",
                 "params=", "threads=", "sgemm_gflops=", NULL}; *key; key++)
            ck_assert_msg(strstr(r->out, *key) != NULL, "%s missing: %s", *key, r->out);
    }
    snprintf(arguments, sizeof arguments, "benchmark decode %s --sentences 2", sizes);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_msg(strncmp(r->out, "c decode sentences_per_s=", 25) == 0, "%s", r->out);
    ck_assert_double_gt(atof(r->out + 25), 0.0);
}
END_TEST

START_TEST(cli_rejects_bad_values)
{
    static const char *const bad[] = {"0", "513", "20x", "x20", "''", "-5", "1e3",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char arguments[128];
        snprintf(arguments, sizeof arguments, "figure-data mask subsequent --size %s", bad[i]);
        assert_usage_error("", arguments, "--size expects an integer from 1 to 512");
    }
    assert_usage_error("", "figure-data mask subsequent --size", "got 'nothing'");
    assert_usage_error("", "figure-data mask batch --sentence 4", "--sentence: the batch has fewer sentences");
    assert_usage_error("", "figure-data mask batch --sentence 9", "--sentence expects an integer from 1 to 8");
    assert_usage_error("", "random --count 0", "--count expects");
    assert_usage_error("", "figure-data pe --d-model 21", "--d-model must be even");
    assert_usage_error("", "gradcheck --layer nothing", "unknown layer 'nothing'");
    assert_usage_error("", "gradcheck --step 2", "--step expects a number from 1e-06 to 0.5");
    assert_usage_error("", "figure-data pe --d-model 20 --first 20", "--first must be smaller");
}
END_TEST

/* Every command parses its flags with getopt_long (book/program.nw): a value after '=' or as
   the next argument, unambiguous prefixes, '--' ending the options, and one kind of message
   for each mistake. */
START_TEST(cli_follows_gnu_conventions)
{
    Run *r = run("", "random --count=2 --seed=42 --stream 54");
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_str_eq(r->out, "0.630310178\n0.481566668\n");
    r = run("", "random --cou 1");   /* an unambiguous prefix */
    ck_assert_str_eq(r->out, "0.630310178\n");
    r = run("", "figure-data mask subsequent --size=3");
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "1 1 1\n"));
    assert_usage_error("", "copy --epochs=-1", "--epochs expects an integer from 0 to 10000, got '-1'");
    assert_usage_error("", "copy -- --epochs 2", "unexpected argument '--epochs'");
    assert_usage_error("", "translate --model", "--model needs a value");
    assert_usage_error("", "translate --model=", "--model needs a value");
    assert_usage_error("", "train --smoothing 1", "--smoothing expects a number from 0 to 0.99");
    assert_usage_error("", "train --d", "unknown option '--d'");   /* --data, --d-model, ... */
    assert_usage_error("", "attention --kind both", "--kind expects 'encoder', 'decoder' or "
                                                     "'cross', got 'both'");
    assert_usage_error("", "time-decode --decoder=fast", "--decoder expects 'recompute' or "
                                                         "'cached', got 'fast'");
    assert_usage_error("", "vocab --min-freq=0 x", "--min-freq expects an integer from 1");
    assert_usage_error("", "bleu --lowercase a", "expects a hypothesis file and a reference file");
    assert_usage_error("", "random -x", "unknown option '-x'");
}
END_TEST

/* A long path gets one line naming it and the reason, and status 1: the messages of the
   safetensors and checkpoint readers once overflowed a 512-byte buffer (issue 19). (A path
   longer than a message holds is cut short: long_path_cut_before_the_reason.) */
START_TEST(cli_long_paths_get_one_line)
{
    static const char *const commands[] = {"translate --model", "copy --resume",
                                           "attention --model", "train --resume"};
    char path[1201], arguments[1400];   /* run() builds a command of at most 2048 bytes */
    memset(path, 'x', sizeof path - 1);
    path[0] = '/', path[sizeof path - 1] = '\0';
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++) {
        snprintf(arguments, sizeof arguments, "%s %s", commands[c], path);
        Run *r = run("", arguments);
        ck_assert_msg(r->status == 1, "%s: status %d: %s", commands[c], r->status, r->err);
        ck_assert_msg(strncmp(r->err, "transformer: /xxx", 17) == 0, "%s: %s", commands[c],
                      r->err);
        const char *at = strstr(r->err, path);
        ck_assert_msg(at && strncmp(at + strlen(path), ": ", 2) == 0, "%s: %s", commands[c],
                      r->err);
        ck_assert_msg(strchr(r->err, '\n') == r->err + strlen(r->err) - 1, "%s", r->err);
    }
}
END_TEST

/* End to end: what the binary prints is the figure data and the documented stream. */
START_TEST(cli_prints_figure_data_and_random_numbers)
{
    Run *r = run("", "figure-data mask subsequent --size 3");
    ck_assert_int_eq(r->status, 0);
    const char *data = strstr(r->out, "\n1 0 0");   /* after the comment lines */
    ck_assert_ptr_nonnull(data);
    ck_assert_str_eq(data + 1, "1 0 0\n1 1 0\n1 1 1\n");
    static const char command[] = "# transformer figure-data mask subsequent --size 3\n";
    ck_assert_msg(strncmp(r->out, command, strlen(command)) == 0, "%s", r->out);
    r = run("", "random --bits --count 2");
    ck_assert_int_eq(r->status, 0);
    ck_assert_str_eq(r->out, "0xa15c02b7\n0x7b47f409\n");
    r = run("", "random --count 1");
    ck_assert_str_eq(r->out, "0.630310178\n");
    r = run("TRANSFORMER_MATMUL=reference", "time-matmul --size 8");
    ck_assert_int_eq(r->status, 0);
    ck_assert(strstr(r->out, "n=8 kernel=reference") != NULL);
    r = run("", "demo");
    ck_assert_int_eq(r->status, 0);
    ck_assert(strstr(r->out, "400 numbers, 210 ones") != NULL);
}
END_TEST

/* the copy-task chapter: a small copy model learns in seconds; every decoding must be exact. */
START_TEST(cli_copy_task_learns)
{
    char log_path[] = "/tmp/transformer-test-log-XXXXXX", command[256];
    int fd = mkstemp(log_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(command, sizeof command,
             "copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 --log %s", log_path);
    Run *r = run("", command);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->out);
    int exact = 0;
    for (const char *p = r->out; (p = strstr(p, " exact\n")) != NULL; p++) exact++;
    ck_assert_int_eq(exact, 8);
    ck_assert_ptr_null(strstr(r->out, "DIFFERENT"));
    ck_assert(strstr(r->out, "decoded  1  2  3  4  5  6  7  8  9 10  exact") != NULL);
    /* the log: a header and 20 rows; losses fall, validation ends below 0.1 */
    FILE *log = fopen(log_path, "r");
    ck_assert_ptr_nonnull(log);
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, log));
    ck_assert_str_eq(line, "epoch,step,train_loss,validation_loss,learning_rate,seconds,"
                           "tokens_per_second,validation_batch_mean\n");
    int rows = 0, epoch, step;
    double train, validation, lr, seconds, first_train = 0, last_validation = 1e9;
    while (fgets(line, sizeof line, log)) {
        double tokens_per_second, batch_mean;
        ck_assert_int_eq(sscanf(line, "%d,%d,%lf,%lf,%lf,%lf,%lf,%lf", &epoch, &step, &train,
                                &validation, &lr, &seconds, &tokens_per_second, &batch_mean),
                         8);
        ck_assert_double_gt(tokens_per_second, 0.0);
        ck_assert_double_eq(batch_mean, validation);   /* the copy task's batches are equal */
        ck_assert_int_eq(epoch, ++rows);
        ck_assert_int_eq(step, 20 * rows);
        if (rows == 1) first_train = train;
        last_validation = validation;
    }
    fclose(log);
    unlink(log_path);
    ck_assert_int_eq(rows, 20);
    ck_assert_double_gt(first_train, 2.0);
    ck_assert_double_lt(last_validation, 0.1);
}
END_TEST

/* Rule 3: a failed write of the results (here a full device) is an error, status 1, with one
   line saying so -- never a silent success. */
START_TEST(cli_reports_failed_writes)
{
    const char *binary = transformer_binary();
    static const char *const commands[] = {"random --count 100000", "figure-data mask batch",
                                           "demo", "--help"};
    for (int c = 0; c < 4; c++) {
        char err_path[] = "/tmp/transformer-test-err-XXXXXX", command[512], err[1024];
        int fd = mkstemp(err_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        snprintf(command, sizeof command, "%s %s >/dev/full 2>%s", binary, commands[c], err_path);
        int status = system(command);
        read_text(err_path, err, sizeof err);
        unlink(err_path);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status %d", commands[c], status);
        ck_assert_msg(strstr(err, "transformer: cannot write the results") == err, "%s: %s", commands[c], err);
        ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: %s", commands[c], err);
    }
}
END_TEST

Suite *cli_suite(void)
{
    Suite *suite = suite_create("command line");
    TCase *cli = tcase_create("command line");
    tcase_add_test(cli, cli_help_and_version);
    tcase_add_test(cli, cli_help_lists_what_the_parser_accepts);
    tcase_add_test(cli, cli_rejects_unknown_commands_and_options);
    tcase_add_test(cli, cli_follows_gnu_conventions);
    tcase_add_test(cli, cli_long_paths_get_one_line);
    tcase_add_test(cli, cli_rejects_bad_values);
    tcase_add_test(cli, cli_prints_figure_data_and_random_numbers);
    tcase_add_test(cli, cli_reports_failed_writes);
    tcase_add_test(cli, cli_copy_task_learns);
    tcase_add_test(cli, cli_benchmark_prints_its_line);
    tcase_add_test(cli, cli_copy_seed_chooses_the_run);
    tcase_set_timeout(cli, 60);
    suite_add_tcase(suite, cli);
    return suite;
}
