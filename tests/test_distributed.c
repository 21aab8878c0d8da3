/* test_distributed.c -- data-parallel training (the chapter on many machines): the dropout of a share of the
   batch, the projection's parameter counts, and runs of two processes under mpirun against
   one process. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "tests.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "figure.h"
#include "model.h"
#include "safetensors.h"
#include "translator.h"

/* mpirun with two processes of one thread each, allowed to run as root (CI runs as root),
   on two slots even where the machine has fewer cores. */
#define MPIRUN2 "OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " \
                "mpirun -np 2 --oversubscribe"
#define ONE "OMP_NUM_THREADS=1"
#define SMALL_COPY "copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40"

/* Largest |a - b| over the parameters (not Adam's moments) of two checkpoints: the biases
   of the attentions' key projections (linears.1.bias) in key_biases, the others returned. */
static double parameter_difference(const char *a_path, const char *b_path, double *key_biases)
{
    *key_biases = 0.0;
    Safetensors a, b;
    ck_assert_msg(safetensors_read(&a, a_path) == NULL, "%s", a.error.message);
    ck_assert_msg(safetensors_read(&b, b_path) == NULL, "%s", b.error.message);
    ck_assert_int_eq(a.count, b.count);
    double largest = 0.0;
    int compared = 0;
    for (int i = 0; i < a.count; i++) {
        if (strncmp(a.entries[i].name, "adam.", 5) == 0) continue;
        const SafetensorsEntry *other = safetensors_find(&b, a.entries[i].name);
        ck_assert_ptr_nonnull(other);
        ck_assert_uint_eq(other->size, a.entries[i].size);
        const float *x = (const float *)(const void *)a.entries[i].data;
        const float *y = (const float *)(const void *)other->data;
        const char *key_bias = "linears.1.bias";
        const size_t length = strlen(a.entries[i].name), suffix = strlen(key_bias);
        double *worst = length > suffix
                        && strcmp(a.entries[i].name + length - suffix, key_bias) == 0
                        ? key_biases : &largest;
        for (size_t j = 0; j < a.entries[i].size; j++) {
            const double d = fabs((double)x[j] - y[j]);
            if (!(d <= *worst)) *worst = d;   /* a NaN counts as the largest */
        }
        compared++;
    }
    ck_assert_int_gt(compared, 10);
    safetensors_free(&a), safetensors_free(&b);
    return largest;
}

/* Each MPI test runs in a fresh directory of its own (Check forks a process for each test),
   so that runs of the suite side by side do not share files; the program is named by its
   absolute path. */
static char scratch[] = "/tmp/transformer-distributed-XXXXXX";

static void enter_scratch(void)
{
    char binary[4096];
    ck_assert_ptr_nonnull(realpath(transformer_binary(), binary));
    ck_assert_int_eq(setenv("TRANSFORMER", binary, 1), 0);
    ck_assert_ptr_nonnull(mkdtemp(scratch));
    ck_assert_int_eq(chdir(scratch), 0);
}

static void leave_scratch(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", scratch);
    ck_assert_int_eq(chdir("/"), 0);
    ck_assert_int_eq(system(command), 0);
}

/* Two ranks of the rows [0, 2) and [2, 4) draw, row for row, the dropout patterns that one
   forward pass over the four rows draws, and leave the stream where it leaves it: the
   log-probabilities agree row for row (to 1e-5, rounding of matrix products of another
   height), and the streams exactly. Without the skipped draws the rows of the second rank
   would get other patterns and differ by far more. */
START_TEST(dropout_of_a_share_is_the_whole_batch_s)
{
    Config config = config_default(11, 11, 2);
    config.d_model = 16, config.d_ff = 32, config.heads = 2, config.max_len = 8;
    config.dropout = 0.3f;
    Model model;
    model_init(&model, config);
    Rng init;
    rng_seed(&init, 5, 1);
    model_initialize_parameters(&model, &init);
    model_prepare(&model, 4, 6, 5);
    enum { B = 4, S = 6, T = 5, V = 11 };
    int src[B * S], tgt[B * T];
    Rng data;
    rng_seed(&data, 9, 2);
    for (int i = 0; i < B * S; i++) src[i] = 1 + (int)(rng_next(&data) % 10);
    for (int i = 0; i < B * T; i++) tgt[i] = 1 + (int)(rng_next(&data) % 10);
    uint8_t src_keep[B * S], tgt_keep[B * T * T];
    padding_mask(src_keep, src, B, S, 0);
    target_mask(tgt_keep, tgt, B, T, 0);
    Rng whole_stream;
    rng_seed(&whole_stream, 3, 3);
    const Rng start = whole_stream;
    static float whole[B * T * V];
    const Dropout whole_dropout = {&whole_stream, 0, 0};
    memcpy(whole, test_forward(&model, src, tgt, src_keep, tgt_keep, B, S, T, &whole_dropout),
           sizeof whole);
    for (int first = 0; first < B; first += 2) {
        Rng share_stream = start;   /* every rank starts from the same stream */
        const Dropout share = {&share_stream, first, B - first - 2};
        const float *part = test_forward(&model, src + first * S, tgt + first * T,
                                         src_keep + first * S, tgt_keep + first * T * T, 2,
                                         S, T, &share);
        for (int i = 0; i < 2 * T * V; i++)
            ck_assert_msg(fabsf(part[i] - whole[first * T * V + i]) <= 1e-5f,
                          "rows from %d, value %d: %g against %g", first, i, part[i],
                          whole[first * T * V + i]);
        /* and ends where the whole batch ended */
        ck_assert_uint_eq(share_stream.state, whole_stream.state);
    }
    model_free(&model);
}
END_TEST

/* The projection's parameter count (the chapter on many machines) is the model's own, for the two models it
   projects and a post-norm model with a tied generator; its translator is the shipped one. */
START_TEST(projected_parameter_counts_are_the_models)
{
    Config configs[3] = {config_default(8315, 6384, 6), scaling_translator(),
                         config_default(300, 300, 2)};
    configs[2].norm = NORM_POST, configs[2].tie_generator = 1, configs[2].d_model = 64;
    configs[2].d_ff = 96, configs[2].heads = 4;
    for (int i = 0; i < 3; i++) {
        Model model;
        model_init(&model, configs[i]);
        ck_assert_uint_eq(parameter_count_of(&configs[i]), model_parameter_count(&model));
        model_free(&model);
    }
    /* the translator's configuration is that of the model file that ships with the book */
    static const TranslatorSettings greedy = {1, 1, 2.0, false};
    Error error;
    Translator *shipped = translator_open("data/multi30k-de-en.safetensors", &greedy, &error);
    ck_assert_msg(shipped != NULL, "%s", error.message);
    const Config *c = &translator_model(shipped)->config;
    ck_assert_int_eq(c->src_vocab, configs[1].src_vocab);
    ck_assert_int_eq(c->tgt_vocab, configs[1].tgt_vocab);
    ck_assert_int_eq(c->layers, configs[1].layers);
    ck_assert_int_eq(c->d_model, configs[1].d_model);
    ck_assert_int_eq(c->d_ff, configs[1].d_ff);
    ck_assert_int_eq(c->heads, configs[1].heads);
    ck_assert_int_eq(c->norm, configs[1].norm);
    ck_assert(c->tie_source == configs[1].tie_source && c->tie_generator == configs[1].tie_generator);
    ck_assert_uint_eq(model_parameter_count(translator_model(shipped)),
                      parameter_count_of(&configs[1]));
    translator_close(shipped);
}
END_TEST

/* Two ranks, each half of every batch of 40, against one process with batches of 40:
   after 10 steps (with dropout) the parameters agree within 1e-6 (they are of order 0.1 to
   1; the sums are rounded in another order: the chapter on many machines, "Why the sum is the gradient of one
   process"), and the log, to its six decimals, is the same. The exception are the biases of
   the key projections, whose gradient is zero in exact arithmetic (a softmax does not change
   when the same number is added to all its scores) and only rounding noise in practice, which
   Adam turns into steps of up to about the learning rate: they agree within twice the sum of
   the 10 rates, 2 * 5.5e-4 (0.5 / sqrt(32) * k / 400^1.5 for step k = 1, 1, 2, ..., 9). */
START_TEST(two_ranks_train_like_one_process)
{
    enter_scratch();
    Run *r = run(ONE, SMALL_COPY " --epochs 1 --batches 10 --stop-after 10"
                      " --checkpoint distributed-one.st --log distributed-one.csv");
    ck_assert_msg(r->status == 0, "%s", r->err);
    r = run(MPIRUN2, SMALL_COPY " --epochs 1 --batches 10 --stop-after 10"
                     " --checkpoint distributed-two.st --log distributed-two.csv");
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_msg(strstr(r->out, "data parallel: 2 processes, 10 steps") != NULL, "%s", r->out);
    double key_biases;
    const double difference = parameter_difference("distributed-one.st",
                                                   "distributed-two.st", &key_biases);
    ck_assert_msg(difference <= 1e-6, "the parameters differ by %g", difference);
    ck_assert_msg(key_biases <= 1.1e-3, "the key biases differ by %g", key_biases);
    char one[4096], two[4096];
    read_text("distributed-one.csv", one, sizeof one);
    read_text("distributed-two.csv", two, sizeof two);
    /* epoch, step, the two losses and the rate: the columns before the time */
    for (char *line = one, *other = two; *line; ) {
        char *cut = line;
        for (int comma = 0; comma < 5 && cut; comma++) cut = strchr(cut + 1, ',');
        ck_assert_ptr_nonnull(cut);
        ck_assert_msg(strncmp(line, other, (size_t)(cut - line)) == 0, "%.*s against %.*s",
                      (int)(cut - line), line, (int)(cut - line), other);
        line = strchr(line, '\n'), other = strchr(other, '\n');
        if (!line || !other) break;
        line++, other++;
    }
    leave_scratch();
}
END_TEST

/* The small copy model trained to the end by two ranks decodes exactly what one process
   decodes: the lines of the examples are the same. */
START_TEST(two_ranks_decode_like_one_process)
{
    enter_scratch();
    static char one[65536];
    Run *r = run(ONE, SMALL_COPY);
    ck_assert_msg(r->status == 0, "%s", r->err);
    memcpy(one, r->out, sizeof one);
    r = run(MPIRUN2, SMALL_COPY);
    ck_assert_msg(r->status == 0, "%s", r->err);
    const char *decoded_one = strstr(one, "  source"), *decoded_two = strstr(r->out, "  source");
    ck_assert_ptr_nonnull(decoded_one);
    ck_assert_ptr_nonnull(decoded_two);
    const char *end_two = strstr(decoded_two, "data parallel");
    ck_assert_ptr_nonnull(end_two);
    ck_assert_uint_eq(strlen(decoded_one), (size_t)(end_two - decoded_two));
    ck_assert_msg(strncmp(decoded_one, decoded_two, strlen(decoded_one)) == 0, "%s\nagainst\n%s",
                  decoded_one, decoded_two);
    leave_scratch();
}
END_TEST

/* A checkpoint written by two ranks at step 10 and resumed by two ranks to step 20 gives,
   byte for byte, the checkpoint of two ranks that ran 20 steps without stopping. */
START_TEST(two_rank_checkpoint_resumes_identically)
{
    enter_scratch();
    Run *r = run(MPIRUN2, SMALL_COPY " --epochs 2 --batches 15 --stop-after 20"
                          " --checkpoint distributed-straight.st");
    ck_assert_msg(r->status == 0, "%s", r->err);
    r = run(MPIRUN2, SMALL_COPY " --epochs 2 --batches 15 --stop-after 10"
                     " --checkpoint distributed-resumed.st");
    ck_assert_msg(r->status == 0, "%s", r->err);
    r = run(MPIRUN2, SMALL_COPY " --epochs 2 --batches 15 --stop-after 20"
                     " --resume distributed-resumed.st");
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_msg(strstr(r->out, "resuming distributed-resumed.st at step 10") != NULL,
                  "%s", r->out);
    ck_assert_int_eq(system("cmp -s distributed-straight.st "
                            "distributed-resumed.st"), 0);
    leave_scratch();
}
END_TEST

/* Killing one of two ranks with SIGKILL in the middle of a long run ends the whole job
   within 30 seconds, with a non-zero status and mpirun's message naming the killed rank. */
START_TEST(killed_rank_ends_the_job)
{
    enter_scratch();
    char script[2048];
    snprintf(script, sizeof script,
             "K=distributed-kill; rm -f $K.out $K.status;"
             " (" MPIRUN2 " %s " SMALL_COPY " --epochs 1000 > $K.out 2>&1 &"
             " echo $! > $K.pid; wait $!; echo $? > $K.status) &"
             " for i in $(seq 300); do sleep 0.1;"
             "   grep -q 'data parallel' $K.out 2>/dev/null && break; done;"
             " victim=$(for d in /proc/[0-9]*; do p=${d#/proc/};"
             "   tr '\\0' ' ' < $d/cmdline 2>/dev/null"
             "   | grep -q 'copy --d-model 32 --d-ff 64 --heads 2' || continue;"
             "   [ \"$(readlink $d/cwd)\" = \"$PWD\" ] || continue;"
             "   tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null"
             "   | grep -qx 'OMPI_COMM_WORLD_RANK=1' && echo $p; done | head -1);"
             " test -n \"$victim\" || { kill $(cat $K.pid); exit 3; }; kill -9 $victim; start=$(date +%%s);"
             " while [ ! -s $K.status ]; do sleep 0.2;"
             "   if [ $(( $(date +%%s) - start )) -gt 30 ]; then"
             "     kill $(cat $K.pid); exit 4; fi; done;"
             " test \"$(cat $K.status)\" -ne 0 || exit 5;"
             " grep -q 'signal 9' $K.out || exit 6",
             transformer_binary());
    const int status = system(script);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "status %d (3: no rank 1 found, 4: the job did not end within 30 s, 5: "
                  "it ended with status 0, 6: no message about the signal)",
                  WEXITSTATUS(status));
    leave_scratch();
}
END_TEST

Suite *distributed_suite(void)
{
    Suite *suite = suite_create("distributed");
    TCase *hooks = tcase_create("hooks");
    tcase_add_test(hooks, dropout_of_a_share_is_the_whole_batch_s);
    tcase_add_test(hooks, projected_parameter_counts_are_the_models);
    suite_add_tcase(suite, hooks);
    /* MPI_TESTS=no: a program built without MPI (make MPI=no, the sanitizers' build) */
    const char *mpi_tests = getenv("MPI_TESTS");
    if (mpi_tests && strcmp(mpi_tests, "no") == 0) return suite;
    TCase *mpi = tcase_create("mpi");
    tcase_set_timeout(mpi, 300);
    tcase_add_test(mpi, two_ranks_train_like_one_process);
    tcase_add_test(mpi, two_ranks_decode_like_one_process);
    tcase_add_test(mpi, two_rank_checkpoint_resumes_identically);
    tcase_add_test(mpi, killed_rank_ends_the_job);
    suite_add_tcase(suite, mpi);
    return suite;
}
