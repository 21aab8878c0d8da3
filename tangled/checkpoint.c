/* Checkpoints: the weights and the whole training state in one file, written and read
   back -- generated from the book's chapters by notangle: edit the book, not this file. */
#include "checkpoint.h"
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"

/* <<checkpoint.c definitions>> */
static const char checkpoint_magic[] = "annotated-transformer-c checkpoint";
enum { CHECKPOINT_VERSION = 1 };

enum { METADATA_MAX = 48 };
typedef struct {
    int count;
    char key[METADATA_MAX][32];
    char value[METADATA_MAX][72];
} Metadata;

static void metadata_add(Metadata *meta, const char *key, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void metadata_add(Metadata *meta, const char *key, const char *format, ...)
{
    ENSURE(meta->count < METADATA_MAX, "too many metadata entries");
    snprintf(meta->key[meta->count], sizeof meta->key[0], "%s", key);
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(meta->value[meta->count], sizeof meta->value[0], format, arguments);
    va_end(arguments);
    meta->count++;
}

static void add_setting(void *meta, const char *key, const char *value, const char *absent)
{
    if (absent == NULL || strcmp(value, absent) != 0) metadata_add(meta, key, "%s", value);
}

static void describe_adam(Metadata *meta, const Adam *adam)
{
    metadata_add(meta, "adam.beta1", "%.17g", adam->beta1);
    metadata_add(meta, "adam.beta2", "%.17g", adam->beta2);
    metadata_add(meta, "adam.eps", "%.17g", adam->eps);
}

static void describe_model(Metadata *meta, const Config *c, const Adam *adam)
{
    config_write(c, CONFIG_CHECKPOINT, add_setting, meta);
    describe_adam(meta, adam);
}

const char *checkpoint_save(const char *path, const Model *model, const Adam *adam,
                            const TrainingProgress *progress,
                            const char *const (*recipe)[2], int n_recipe,
                            Error *error)
{
    error->message[0] = '\0';
    /* <<Refuse to save parameters that are not finite>> */
    for (size_t i = 0; i < model->parameters.total; i++)
        if (!isfinite(model->parameters.data[i])) {
            snprintf(error->message, sizeof error->message,
                     "%s: not saved: the parameters are not finite; the last checkpoint is kept",
                     path);
            return error->message;
        }
    Metadata meta;   /* 5 kB on the stack: no state shared between saves */
    meta.count = 0;
    metadata_add(&meta, "magic", "%s", checkpoint_magic);
    metadata_add(&meta, "version", "%d", CHECKPOINT_VERSION);
    describe_model(&meta, &model->config, adam);
    for (int i = 0; i < n_recipe; i++)
        metadata_add(&meta, recipe[i][0], "%s", recipe[i][1]);
    /* <<Describe the progress of training>> */
    metadata_add(&meta, "progress.step", "%ld", adam->step);
    metadata_add(&meta, "progress.epoch", "%d", progress->epoch);
    metadata_add(&meta, "progress.batch", "%d", progress->batch);
    metadata_add(&meta, "progress.loss_sum", "%a", progress->loss_sum);
    metadata_add(&meta, "best_validation", "%.17g", progress->best_validation);
    metadata_add(&meta, "best_epoch", "%d", progress->best_epoch);
    const Rng *streams[2] = {&progress->data_rng, &progress->dropout_rng};
    const char *stream_keys[2][2] = {{"rng.data.state", "rng.data.increment"},
                                     {"rng.dropout.state", "rng.dropout.increment"}};
    for (int s = 0; s < 2; s++) {
        metadata_add(&meta, stream_keys[s][0], "%016" PRIx64, streams[s]->state);
        metadata_add(&meta, stream_keys[s][1], "%016" PRIx64, streams[s]->increment);
    }
    if (progress->last_epoch)
        metadata_add(&meta, "progress.last_epoch", "%d", progress->last_epoch);
    /* <<Note the number of threads>> */
    metadata_add(&meta, "run.threads", "%d", compute.threads);
    metadata_add(&meta, "run.precision", "%s", precision_name(compute.precision));
    const SafetensorsPart parts[3] = {
        {"", &model->parameters, false}, {"adam.m.", &adam->m, false},
        {"adam.v.", &adam->v, false}};
    /* <<Hash the parts and the metadata, and add the checksum>> */
    const char *listed[METADATA_MAX][2];
    for (int i = 0; i < meta.count; i++) listed[i][0] = meta.key[i], listed[i][1] = meta.value[i];
    metadata_add(&meta, "checksum", "%016" PRIx64,
                 safetensors_checksum_parts(parts, 3, (const char *const (*)[2])listed,
                                            meta.count));
    const char *pairs[METADATA_MAX][2];
    for (int i = 0; i < meta.count; i++) pairs[i][0] = meta.key[i], pairs[i][1] = meta.value[i];
    return safetensors_write_parts(path, parts, 3, (const char *const (*)[2])pairs,
                                   meta.count, error);
}

/* <<checkpoint.c loading steps>> */
/* Check the magic, the version and the checksum */
static const char *check_identity(Safetensors *file, const char *path)
{
    char value[128];
    /* <<Check the magic and the version>> */
    if (!safetensors_metadata(file, "magic", value, sizeof value)
        || strcmp(value, checkpoint_magic) != 0)
        return safetensors_fail(&file->error, path,
                                "not a checkpoint of this program (no magic '%s')",
                                checkpoint_magic);
    if (!safetensors_metadata(file, "version", value, sizeof value)
        || strtol(value, NULL, 10) != CHECKPOINT_VERSION)
        return safetensors_fail(&file->error, path,
                                "checkpoint version '%s'; this program reads version %d",
                                safetensors_printable(value, value, 24), CHECKPOINT_VERSION);
    /* <<Check the checksum>> */
    char expected[32];
    snprintf(expected, sizeof expected, "%016" PRIx64, safetensors_checksum(file));
    if (!safetensors_metadata(file, "checksum", value, sizeof value)
        || strcmp(value, expected) != 0)
        return safetensors_fail(&file->error, path, "checksum mismatch: the file is corrupt");
    return NULL;
}

/* Compare the file's KEY with this run's value OURS; absent: what a missing key means (NULL:
   none) */
static const char *check_entry(Safetensors *file, const char *path, const char *key,
                               const char *ours, const char *absent)
{
    char value[128];
    if (!safetensors_metadata(file, key, value, sizeof value))
        strcpy(value, absent ? absent : "");
    if (strcmp(value, ours) != 0)
        return safetensors_fail(
            &file->error, path, "%s is %s in the checkpoint but %s in this run", key,
            *value ? safetensors_printable(value, value, 80) : "missing", ours);
    return NULL;
}

typedef struct { Safetensors *file; const char *path, *error; } RunCheck;

static void check_setting(void *check, const char *key, const char *value, const char *absent)
{
    RunCheck *c = check;
    if (c->error == NULL) c->error = check_entry(c->file, c->path, key, value, absent);
}

/* Check that the file's configuration and recipe are this run's */
static const char *check_same_run(Safetensors *file, const char *path, const Model *model,
                                  const Adam *adam, const char *const (*recipe)[2],
                                  int n_recipe)
{
    RunCheck check = {file, path, NULL};
    config_write(&model->config, CONFIG_CHECKPOINT, check_setting, &check);
    if (check.error) return check.error;
    Metadata run;
    run.count = 0;
    describe_adam(&run, adam);
    for (int i = 0; i < n_recipe; i++) metadata_add(&run, recipe[i][0], "%s", recipe[i][1]);
    for (int i = 0; i < run.count; i++)
        if ((check.error = check_entry(file, path, run.key[i], run.value[i], NULL)))
            return check.error;
    return NULL;
}

/* Read the step, the position and the generators */
static const char *read_progress(Safetensors *file, const char *path, Adam *adam,
                                 TrainingProgress *progress)
{
    char value[128];
    /* <<Read the step, the position and the generators>> */
    long long integers[3];
    const char *integer_keys[3] = {"progress.step", "progress.epoch", "progress.batch"};
    for (int i = 0; i < 3; i++) {
        char *end;
        if (!safetensors_metadata(file, integer_keys[i], value, sizeof value)) *value = '\0';
        integers[i] = strtoll(value, &end, 10);
        if (*value == '\0' || *end != '\0' || integers[i] < 0 || integers[i] > INT_MAX)
            return safetensors_fail(&file->error, path, "bad or missing '%s'",
                                    integer_keys[i]);
    }
    char *end;
    if (!safetensors_metadata(file, "progress.loss_sum", value, sizeof value)) *value = '\0';
    double loss_sum = strtod(value, &end);
    if (*value == '\0' || *end != '\0' || !isfinite(loss_sum) || loss_sum < 0)
        return safetensors_fail(&file->error, path, "bad 'progress.loss_sum'");
    if (integers[1] < 1 || integers[2] > integers[0])
        return safetensors_fail(&file->error, path,
                                "epoch %lld, batch %lld and step %lld do not fit together",
                                integers[1], integers[2], integers[0]);
    Rng streams[2];
    const char *stream_keys[4] = {"rng.data.state", "rng.data.increment",
                                  "rng.dropout.state", "rng.dropout.increment"};
    for (int i = 0; i < 4; i++) {
        if (!safetensors_metadata(file, stream_keys[i], value, sizeof value)) *value = '\0';
        const uint64_t number = strtoull(value, &end, 16);
        if (strlen(value) != 16 || *end != '\0' || (i % 2 == 1 && number % 2 == 0))
            return safetensors_fail(&file->error, path, "bad or missing '%s'",
                                    stream_keys[i]);
        if (i % 2 == 0) streams[i / 2].state = number;
        else streams[i / 2].increment = number;
    }
    adam->step = integers[0];
    progress->epoch = (int)integers[1], progress->batch = (int)integers[2];
    progress->loss_sum = loss_sum;
    progress->data_rng = streams[0], progress->dropout_rng = streams[1];
    /* <<Read the best validation loss and its epoch>> */
    progress->best_validation = INFINITY, progress->best_epoch = progress->epoch - 1;
    if (safetensors_metadata(file, "best_validation", value, sizeof value)) {
        progress->best_validation = strtod(value, &end);
        if (*value == '\0' || *end != '\0' || isnan(progress->best_validation))
            return safetensors_fail(&file->error, path, "bad 'best_validation'");
    }
    if (safetensors_metadata(file, "best_epoch", value, sizeof value)) {
        const long epoch = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || epoch < 0 || epoch > integers[1])
            return safetensors_fail(&file->error, path, "bad 'best_epoch'");
        progress->best_epoch = (int)epoch;
    }
    progress->last_epoch = 0;   /* absent: the settings' last epoch */
    if (safetensors_metadata(file, "progress.last_epoch", value, sizeof value)) {
        const long number = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || number < 1 || number > INT_MAX)
            return safetensors_fail(&file->error, path, "bad 'progress.last_epoch'");
        progress->last_epoch = (int)number;
    }
    return NULL;
}

/* <<checkpoint.c loading>> */
const char *checkpoint_load(const char *path, Model *model, Adam *adam,
                            TrainingProgress *progress, const char *const (*recipe)[2],
                            int n_recipe, Safetensors *file)
{
    const char *error = safetensors_read(file, path);
    if (error || (error = check_identity(file, path))
        || (error = check_same_run(file, path, model, adam, recipe, n_recipe)))
        return error;
    const char *prefixes[3] = {"", "adam.m.", "adam.v."};
    const FlatBuffer *buffers[3] = {&model->parameters, &adam->m, &adam->v};
    for (int p = 0; p < 3; p++)
        if ((error = safetensors_load_prefixed(file, buffers[p], prefixes[p], path)))
            return error;
    if ((error = read_progress(file, path, adam, progress))) return error;
    char value[128];
    /* <<Warn if the checkpoint was written with another number of threads>> */
    if (safetensors_metadata(file, "run.threads", value, sizeof value)
        && strtol(value, NULL, 10) != compute.threads)
        fprintf(stderr, "transformer: warning: %s was written by a run with %s thread%s and this "
                        "one has %d: it continues, but not bit for bit\n", path, value,
                strcmp(value, "1") == 0 ? "" : "s", compute.threads);
    if (safetensors_metadata(file, "run.precision", value, sizeof value)
        && strcmp(value, precision_name(compute.precision)) != 0)
        fprintf(stderr, "transformer: warning: %s was written by a run in %s and this one "
                        "computes in %s: it continues, but not bit for bit\n", path, value,
                precision_name(compute.precision));
    return NULL;
}
