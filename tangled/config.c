/* Writing a model's configuration as metadata and reading it back, a setting a row of
   config_keys -- generated from the book's chapters by notangle: edit the book, not this
   file. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* <<config.c definitions>> */
static const char *config_key(const ConfigKey *k, ConfigFile file, char key[48])
{
    if (file == CONFIG_MODEL_FILE) return k->alias;
    snprintf(key, 48, "config.%s", k->name);
    return key;
}

static void config_text(const ConfigKey *k, const Config *config, ConfigFile file,
                        char *text, size_t size)
{
    const double value = config_get(config, k);
    if (k->type == CONFIG_INT) snprintf(text, size, "%d", (int)value);
    else if (k->type == CONFIG_FLOAT)
        snprintf(text, size, file == CONFIG_CHECKPOINT ? "%.9g" : "%g", value);
    else snprintf(text, size, "%s", k->words[value != 0]);
}

void config_write(const Config *config, ConfigFile file, ConfigPut *put, void *sink)
{
    const Config defaults = config_default(0, 0, 0);
    for (int i = 0; i < config_key_count; i++) {
        const ConfigKey *k = &config_keys[i];
        char name[48], value[48], absent[48];
        const char *key = config_key(k, file, name);
        if (key == NULL) continue;
        config_text(k, config, file, value, sizeof value);
        config_text(k, &defaults, file, absent, sizeof absent);
        put(sink, key, value, k->optional ? absent : NULL);
    }
}

static const char *read_number(Config *config, const ConfigKey *k, const char *key,
                               char *value, Safetensors *st, const char *path)
{
    char *end;
    const long number = strtol(value, &end, 10);
    if (!*value || *end || number < k->least || number > k->most)
        return safetensors_fail(&st->error, path,
                                "'%s' must be a whole number from %.0f to %.0f, not '%s'",
                                key, k->least, k->most,
                                safetensors_printable(value, value, 24));
    config_set(config, k, number);
    return NULL;
}

static const char *read_decimal(Config *config, const ConfigKey *k, const char *key,
                                char *value, Safetensors *st, const char *path)
{
    char *end;
    const float number = strtof(value, &end);
    const bool above = k->above_least ? number > k->least : number >= k->least;
    if (!*value || *end || !(above && number < k->most))
        return safetensors_fail(&st->error, path, k->above_least
                                ? "'%s' must be a number between %g and %g, not '%s'"
                                : "'%s' must be a number from %g to below %g, not '%s'",
                                key, k->least, k->most,
                                safetensors_printable(value, value, 24));
    config_set(config, k, number);
    return NULL;
}

static const char *read_word(Config *config, const ConfigKey *k, const char *key,
                             char *value, Safetensors *st, const char *path)
{
    if (strcmp(value, k->words[0]) != 0 && strcmp(value, k->words[1]) != 0)
        return safetensors_fail(&st->error, path, "'%s' must be '%s' or '%s', not '%s'", key,
                                k->words[0], k->words[1],
                                safetensors_printable(value, value, 44));
    config_set(config, k, strcmp(value, k->words[1]) == 0);
    return NULL;
}

static const char *read_setting(Config *config, const ConfigKey *k, const char *key,
                                ConfigFile file, Safetensors *st, const char *path)
{
    char value[64] = "";
    if (!safetensors_metadata(st, key, value, sizeof value) && k->optional) {
        const Config defaults = config_default(0, 0, 0);
        config_text(k, &defaults, file, value, sizeof value);
    }
    if (k->type == CONFIG_INT) return read_number(config, k, key, value, st, path);
    if (k->type == CONFIG_FLOAT) return read_decimal(config, k, key, value, st, path);
    return read_word(config, k, key, value, st, path);
}

const char *config_read(Config *config, ConfigFile file, int version, Safetensors *st,
                        const char *path)
{
    *config = config_default(0, 0, 0);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < config_key_count; i++) {
            const ConfigKey *k = &config_keys[i];
            const bool added = file == CONFIG_MODEL_FILE && k->since > 0;
            char name[48];
            const char *key = config_key(k, file, name), *error;
            if (key == NULL || added != (round == 1) || (added && version < k->since))
                continue;
            if ((error = read_setting(config, k, key, file, st, path))) return error;
        }
    return NULL;
}
