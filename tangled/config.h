/* A model's configuration as the metadata of a file (a checkpoint, a model file), written
   and read by the table config_keys. Generated from the book's chapters by notangle: edit
   the book, not this file. */
#ifndef CONFIG_H
#define CONFIG_H
#include "model.h"
#include "safetensors.h"

/* <<config.h declarations>> */
typedef enum { CONFIG_CHECKPOINT, CONFIG_MODEL_FILE } ConfigFile;

/* One setting: its key and its text; absent: what the file means without the key (NULL:
   the key is required). */
typedef void ConfigPut(void *sink, const char *key, const char *value, const char *absent);

/* Each setting that FILE holds, in the table's order, to put(sink, ...). */
void config_write(const Config *config, ConfigFile file, ConfigPut *put, void *sink);
/* Read the settings that FILE of version VERSION holds (read from PATH into st) into
   config, the others at their defaults; NULL, or the first refusal (in st->error). */
const char *config_read(Config *config, ConfigFile file, int version, Safetensors *st,
                        const char *path);
#endif
