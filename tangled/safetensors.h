/* Reading and writing the safetensors format. Generated from the book's chapters by
   notangle: edit the book, not this file. */
#ifndef SAFETENSORS_H
#define SAFETENSORS_H
#include <stdarg.h>
#include "tensor.h"

/* <<safetensors.h declarations>> */
typedef enum { DTYPE_F32, DTYPE_I32, DTYPE_BF16 } Dtype;

typedef struct {
    char name[TENSOR_NAME_MAX];
    Dtype dtype;
    int ndim;
    int shape[TENSOR_MAX_DIMS];
    size_t size;              /* elements */
    const unsigned char *data;
} SafetensorsEntry;

typedef struct {
    unsigned char *bytes;     /* the whole file */
    SafetensorsEntry *entries;
    int count;
    char *(*metadata)[2];     /* [n_metadata]: the __metadata__ object's text members, key
                                 and value, in the file's order; NULL if it has none */
    int n_metadata;
    const unsigned char *data;   /* the data section: after the header, to the end */
    size_t data_size;
    Error error;              /* why the reading refused the file */
} Safetensors;

/* Read PATH; NULL on success, else a one-line message naming the file (in file->error),
   with nothing else left allocated. */
const char *safetensors_read(Safetensors *file, const char *path);
const SafetensorsEntry *safetensors_find(const Safetensors *file, const char *name);
/* The metadata value of KEY, copied into value (size bytes); false if absent. */
bool safetensors_metadata(const Safetensors *file, const char *key, char *value,
                          size_t size);
/* The metadata value of KEY itself, or NULL if absent: for values of any length. */
const char *safetensors_metadata_text(const Safetensors *file, const char *key);
/* Free what file holds; a reading's error stays to be read. */
void safetensors_free(Safetensors *file);
/* Put "PATH: reason" in error, the path cut short (with "...") when the whole would not
   fit, so that a path of any length gives one whole line; return the message. */
const char *safetensors_vfail(Error *error, const char *path, const char *format,
                              va_list arguments);
/* The same with the arguments themselves: what every reader of these files (checkpoints,
   model files) returns when it refuses one. */
const char *safetensors_fail(Error *error, const char *path, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* TEXT (read from a file) fit for a one-line message in out (size bytes, at least 4):
   bytes other than printable ASCII shown as '?', cut short with "..." when too long;
   returns out. */
const char *safetensors_printable(const char *text, char *out, size_t size);

/* Copy every view of BUFFER from FILE; NULL on success, else a one-line message. */
const char *safetensors_load(Safetensors *file, const FlatBuffer *buffer, const char *path);
/* The same for tensors named PREFIX followed by the view's name. */
const char *safetensors_load_prefixed(Safetensors *file, const FlatBuffer *buffer,
                                      const char *prefix, const char *path);

typedef struct {
    const char *prefix;          /* put before every view's name */
    const FlatBuffer *buffer;
    bool bf16;                   /* store the numbers as bfloat16, rounded to nearest */
} SafetensorsPart;

/* Write every view of every part, and METADATA (n_metadata key/value pairs), to PATH
   atomically; NULL on success, else a one-line message (in error). */
const char *safetensors_write_parts(const char *path, const SafetensorsPart *parts,
                                    int n_parts, const char *const (*metadata)[2],
                                    int n_metadata, Error *error);
/* The same for one buffer, with no prefix. */
const char *safetensors_write(const char *path, const FlatBuffer *buffer,
                              const char *const (*metadata)[2], int n_metadata,
                              Error *error);

/* Remove PATH.XXXXXX, the temporary files of saves of PATH that were interrupted. */
void safetensors_remove_temporaries(const char *path);
/* Whether PATH could be saved now: it is a regular file or absent, and a file can be
   created beside it. NULL, or a one-line message (in error). */
const char *safetensors_can_write(const char *path, Error *error);

/* The 64-bit FNV-1a checksum of the data the writer puts in a file for PARTS, followed by
   the METADATA pairs but one named "checksum", in their order. */
uint64_t safetensors_checksum_parts(const SafetensorsPart *parts, int n_parts,
                                    const char *const (*metadata)[2], int n_metadata);
/* The same of a file that was read: its data section, then its metadata as listed. */
uint64_t safetensors_checksum(const Safetensors *file);

/* The 64-bit FNV-1a checksum of the contents of a file: every tensor in the byte order of
   the names (name, NUL, dtype, NUL, shape "2,3", NUL, bytes), then every metadata pair but
   "checksum" in the byte order of the keys (key, NUL, value, NUL). */
uint64_t safetensors_content_checksum(const Safetensors *file);
/* The same of the file the writer makes of PARTS and METADATA. */
uint64_t safetensors_content_checksum_parts(const SafetensorsPart *parts, int n_parts,
                                            const char *const (*metadata)[2],
                                            int n_metadata);
#endif
