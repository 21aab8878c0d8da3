/* Reading and writing tensors in the safetensors format -- generated from the book's
   chapters by notangle: edit the book, not this file. */
#include "safetensors.h"
#ifndef TRANSFORMER_BROWSER
#include <cJSON.h>
#endif
#include "json.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* <<safetensors.c helpers>> */
static size_t dtype_bytes(Dtype dtype)
{
    return dtype == DTYPE_BF16 ? 2 : 4;
}

/* The bytes the file holds for view i of part (their count in bytes): NULL for the floats
   themselves, or a bfloat16 copy, which the caller frees. */
static void *stored_bytes(const SafetensorsPart *part, int i, size_t *bytes)
{
    const size_t size = part->buffer->views[i].size;
    *bytes = size * (part->bf16 ? 2 : sizeof(float));
    if (!part->bf16) return NULL;
    const float *x = flat_view(part->buffer, i);
    uint16_t *rounded = xmalloc(size ? size * 2 : 1);
    for (size_t j = 0; j < size; j++) rounded[j] = bf16_from_float(x[j]);
    return rounded;
}

/* <<safetensors.c definitions>> */
static bool host_is_little_endian(void)
{
    const uint32_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* A whole number in [0, limit], as JSON numbers in a header must be. */
static bool is_count(const JsonValue *item, double limit)
{
    return item && item->type == JSON_NUMBER && item->number >= 0 && item->number <= limit
           && item->number == (double)(uint64_t)item->number;
}

const char *safetensors_vfail(Error *error, const char *path, const char *format,
                              va_list arguments)
{
    char reason[sizeof error->message / 2];
    vsnprintf(reason, sizeof reason, format, arguments);
    const int room = (int)(sizeof error->message - strlen(reason)) - 8;   /* ": ", "...", \0 */
    if ((int)strlen(path) <= room)
        snprintf(error->message, sizeof error->message, "%s: %s", path, reason);
    else   /* a path of any length: its start, then the reason */
        snprintf(error->message, sizeof error->message, "%.*s...: %s", room, path, reason);
    return error->message;
}

const char *safetensors_printable(const char *text, char *out, size_t size)
{
    size_t n = 0;   /* out may be text itself: each byte is read before it is written */
    for (; text[n] && n < size - 1; n++)
        out[n] = text[n] >= 0x20 && text[n] < 0x7f ? text[n] : '?';   /* printable ASCII */
    const bool longer = text[n] != '\0';
    out[n] = '\0';
    if (longer) strcpy(out + size - 4, "...");
    return out;
}

const char *safetensors_fail(Error *error, const char *path, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    safetensors_vfail(error, path, format, arguments);
    va_end(arguments);
    return error->message;
}

static int compare_places(const void *a, const void *b)
{
    const SafetensorsEntry *x = *(const SafetensorsEntry *const *)a;
    const SafetensorsEntry *y = *(const SafetensorsEntry *const *)b;
    if (x->data != y->data) return x->data < y->data ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

const SafetensorsEntry *safetensors_find(const Safetensors *file, const char *name)
{
    for (int i = 0; i < file->count; i++)
        if (strcmp(file->entries[i].name, name) == 0) return &file->entries[i];
    return NULL;
}

const char *safetensors_metadata_text(const Safetensors *file, const char *key)
{
    for (int i = 0; i < file->n_metadata; i++)
        if (strcmp(file->metadata[i][0], key) == 0) return file->metadata[i][1];
    return NULL;
}

bool safetensors_metadata(const Safetensors *file, const char *key, char *value, size_t size)
{
    const char *text = safetensors_metadata_text(file, key);
    const bool found = text && strlen(text) < size;
    if (found) strcpy(value, text);
    return found;
}

void safetensors_free(Safetensors *file)
{
    free(file->bytes);
    free(file->entries);
    for (int i = 0; i < file->n_metadata; i++)
        free(file->metadata[i][0]), free(file->metadata[i][1]);
    free(file->metadata);
    const Error error = file->error;
    memset(file, 0, sizeof *file);
    file->error = error;
}

const char *safetensors_load(Safetensors *file, const FlatBuffer *buffer, const char *path)
{
    return safetensors_load_prefixed(file, buffer, "", path);
}

const char *safetensors_load_prefixed(Safetensors *file, const FlatBuffer *buffer,
                                      const char *prefix, const char *path)
{
    for (int i = 0; i < buffer->count; i++) {
        const TensorView *view = &buffer->views[i];
        char name[2 * TENSOR_NAME_MAX];
        snprintf(name, sizeof name, "%s%s", prefix, view->name);
        const SafetensorsEntry *entry = safetensors_find(file, name);
        if (entry == NULL)
            return safetensors_fail(&file->error, path, "missing tensor '%s'", name);
        bool same = (entry->dtype == DTYPE_F32 || entry->dtype == DTYPE_BF16)
                    && entry->ndim == view->ndim;
        for (int d = 0; same && d < view->ndim; d++)
            same = entry->shape[d] == view->shape[d];
        if (!same)
            return safetensors_fail(&file->error, path,
                                    "tensor '%s' has the wrong dtype or shape", name);
        float *out = flat_view(buffer, i);
        if (entry->dtype == DTYPE_F32) memcpy(out, entry->data, view->size * sizeof(float));
        else
            for (size_t j = 0; j < view->size; j++) {
                uint16_t bits;
                memcpy(&bits, entry->data + 2 * j, 2);   /* the data need not be aligned */
                out[j] = float_from_bf16(bits);
            }
    }
    return NULL;
}

static void sync_directory(const char *path)
{
    char directory[4096];
    snprintf(directory, sizeof directory, "%s", path);
    char *slash = strrchr(directory, '/');
    if (slash == NULL) strcpy(directory, ".");
    else if (slash == directory) slash[1] = '\0';   /* a file in / */
    else *slash = '\0';
    int fd = open(directory, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* PATH's directory into directory (size bytes), and a pointer to its last component. */
static const char *split_path(const char *path, char *directory, size_t size)
{
    snprintf(directory, size, "%s", path);
    char *slash = strrchr(directory, '/');
    const char *base = slash ? path + (slash - directory) + 1 : path;
    if (slash == directory) slash[1] = '\0';   /* a file in / */
    else if (slash) *slash = '\0';
    else snprintf(directory, size, ".");
    return base;
}

void safetensors_remove_temporaries(const char *path)
{
    char directory[4200];
    const char *base = split_path(path, directory, sizeof directory);
    const size_t length = strlen(base);
    DIR *dir = opendir(directory);
    for (struct dirent *entry; dir && (entry = readdir(dir)) != NULL;) {
        const char *name = entry->d_name;
        if (strlen(name) != length + 7 || strncmp(name, base, length) != 0
            || name[length] != '.')
            continue;
        bool temporary = true;
        for (size_t i = length + 1; i < length + 7; i++)
            temporary = temporary && isalnum((unsigned char)name[i]);
        char full[8500];
        snprintf(full, sizeof full, "%s/%s", directory, name);
        if (temporary) unlink(full);
    }
    if (dir) closedir(dir);
}

#ifndef TRANSFORMER_BROWSER
const char *safetensors_can_write(const char *path, Error *error)
{
    error->message[0] = '\0';
    struct stat existing;
    if (lstat(path, &existing) == 0 && !S_ISREG(existing.st_mode))
        return safetensors_fail(error, path,
                                "not a regular file; refusing to replace it");
    char temporary[4096];
    if (snprintf(temporary, sizeof temporary, "%s.XXXXXX", path) >= (int)sizeof temporary)
        return safetensors_fail(error, path, "file name too long");
    const int fd = mkstemp(temporary);
    if (fd < 0)
        return safetensors_fail(error, path,
                                "cannot create a file beside it: %s", strerror(errno));
    close(fd);
    unlink(temporary);
    return NULL;
}
#else
const char *safetensors_can_write(const char *path, Error *error)
{
    return safetensors_fail(error, path, "the browser's build writes no files");
}
#endif

static const uint64_t fnv_offset = 0xcbf29ce484222325u, fnv_prime = 0x100000001b3u;

static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) hash = (hash ^ b[i]) * fnv_prime;
    return hash;
}

static uint64_t hash_entry(uint64_t hash, const char *key, const char *value)
{
    if (strcmp(key, "checksum") == 0) return hash;   /* the checksum does not hash itself */
    hash = fnv1a(hash, key, strlen(key));
    hash = fnv1a(hash, "=", 1);
    hash = fnv1a(hash, value, strlen(value));
    return fnv1a(hash, "\n", 1);
}

uint64_t safetensors_checksum_parts(const SafetensorsPart *parts, int n_parts,
                                    const char *const (*metadata)[2], int n_metadata)
{
    uint64_t hash = fnv_offset;
    for (int p = 0; p < n_parts; p++)
        for (int i = 0; i < parts[p].buffer->count; i++) {
            size_t bytes;
            void *stored = stored_bytes(&parts[p], i, &bytes);
            hash = fnv1a(hash, stored ? stored : flat_view(parts[p].buffer, i), bytes);
            free(stored);
        }
    for (int i = 0; i < n_metadata; i++) hash = hash_entry(hash, metadata[i][0], metadata[i][1]);
    return hash;
}

uint64_t safetensors_checksum(const Safetensors *file)
{
    uint64_t hash = fnv1a(fnv_offset, file->data, file->data_size);
    for (int i = 0; i < file->n_metadata; i++)
        hash = hash_entry(hash, file->metadata[i][0], file->metadata[i][1]);
    return hash;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp((*(const SafetensorsEntry *const *)a)->name,
                  (*(const SafetensorsEntry *const *)b)->name);
}

static int compare_pairs(const void *a, const void *b)
{
    const char *const *x = *(const char *const *const *)a;
    const char *const *y = *(const char *const *const *)b;
    const int by_key = strcmp(x[0], y[0]);
    return by_key ? by_key : strcmp(x[1], y[1]);
}

static const char *const dtype_names[3] = {"F32", "I32", "BF16"};   /* in Dtype's order */

static uint64_t content_checksum(const SafetensorsEntry *entries, int count,
                                 const char *const (*pairs)[2], int n_pairs)
{
    const SafetensorsEntry **tensors = xmalloc((size_t)(count + 1) * sizeof *tensors);
    for (int i = 0; i < count; i++) tensors[i] = &entries[i];
    qsort(tensors, (size_t)count, sizeof *tensors, compare_names);
    uint64_t hash = fnv_offset;
    for (int i = 0; i < count; i++) {
        const SafetensorsEntry *e = tensors[i];
        char shape[TENSOR_MAX_DIMS * 12 + 1] = "";
        for (int d = 0, used = 0; d < e->ndim; d++)
            used += snprintf(shape + used, sizeof shape - (size_t)used, d ? ",%d" : "%d",
                             e->shape[d]);
        hash = fnv1a(hash, e->name, strlen(e->name) + 1);
        hash = fnv1a(hash, dtype_names[e->dtype], strlen(dtype_names[e->dtype]) + 1);
        hash = fnv1a(hash, shape, strlen(shape) + 1);
        hash = fnv1a(hash, e->data, e->size * dtype_bytes(e->dtype));
    }
    free(tensors);
    const char *const **sorted = xmalloc((size_t)(n_pairs + 1) * sizeof *sorted);
    for (int i = 0; i < n_pairs; i++) sorted[i] = pairs[i];
    qsort(sorted, (size_t)n_pairs, sizeof *sorted, compare_pairs);
    for (int i = 0; i < n_pairs; i++)
        if (strcmp(sorted[i][0], "checksum") != 0) {
            hash = fnv1a(hash, sorted[i][0], strlen(sorted[i][0]) + 1);
            hash = fnv1a(hash, sorted[i][1], strlen(sorted[i][1]) + 1);
        }
    free(sorted);
    return hash;
}

uint64_t safetensors_content_checksum(const Safetensors *file)
{
    return content_checksum(file->entries, file->count,
                            (const char *const (*)[2])file->metadata, file->n_metadata);
}

uint64_t safetensors_content_checksum_parts(const SafetensorsPart *parts, int n_parts,
                                            const char *const (*metadata)[2],
                                            int n_metadata)
{
    int count = 0;
    for (int p = 0; p < n_parts; p++) count += parts[p].buffer->count;
    SafetensorsEntry *entries = xmalloc((size_t)(count + 1) * sizeof *entries);
    void **copies = xmalloc((size_t)(count + 1) * sizeof *copies);
    for (int p = 0, e = 0; p < n_parts; p++)
        for (int i = 0; i < parts[p].buffer->count; i++, e++) {
            const TensorView *view = &parts[p].buffer->views[i];
            SafetensorsEntry *entry = &entries[e];
            const int n = snprintf(entry->name, sizeof entry->name, "%s%s", parts[p].prefix,
                                   view->name);
            ENSURE(n < (int)sizeof entry->name, "tensor name too long: %s", view->name);
            entry->dtype = parts[p].bf16 ? DTYPE_BF16 : DTYPE_F32;
            entry->ndim = view->ndim, entry->size = view->size;
            memcpy(entry->shape, view->shape, sizeof entry->shape);
            size_t bytes;
            copies[e] = stored_bytes(&parts[p], i, &bytes);
            entry->data = copies[e] ? copies[e] : (const void *)flat_view(parts[p].buffer, i);
        }
    const uint64_t hash = content_checksum(entries, count, metadata, n_metadata);
    for (int e = 0; e < count; e++) free(copies[e]);
    free(copies), free(entries);
    return hash;
}

/* <<safetensors.c entry check>> */
/* Check one entry and fill entry: NULL, or what is wrong with it */
static const char *check_entry(const Safetensors *file, const Json *json, const JsonValue *item,
                               SafetensorsEntry *entry, const unsigned char *data,
                               size_t data_size)
{
    const char *problem = NULL;
    /* <<Check one entry and fill entry, or set problem>> */
    const JsonValue *dtype = json_member(json, item, "dtype");
    const JsonValue *shape = json_member(json, item, "shape");
    const JsonValue *offsets = json_member(json, item, "data_offsets");
    memset(entry, 0, sizeof *entry);
    if (strlen(item->key) >= TENSOR_NAME_MAX) problem = "name too long";
    else if (!dtype || dtype->type != JSON_STRING) problem = "no dtype";
    else if (strcmp(dtype->text, "F32") == 0) entry->dtype = DTYPE_F32;
    else if (strcmp(dtype->text, "I32") == 0) entry->dtype = DTYPE_I32;
    else if (strcmp(dtype->text, "BF16") == 0) entry->dtype = DTYPE_BF16;
    else problem = "unsupported dtype (only F32, BF16 and I32)";
    if (!problem && (!shape || shape->type != JSON_ARRAY || shape->count > TENSOR_MAX_DIMS))
        problem = "bad shape";
    if (!problem && (!offsets || offsets->type != JSON_ARRAY || offsets->count != 2))
        problem = "bad data_offsets";
    if (!problem) {
        strcpy(entry->name, item->key);
        entry->size = 1;
        const size_t room = data_size / dtype_bytes(entry->dtype);   /* the numbers it holds */
        const JsonValue *s = json_first(json, shape);
        for (; s && !problem; s = json_next(json, s)) {
            const int n = is_count(s, INT32_MAX) ? (int)s->number : -1;
            if (n < 0 || (n > 0 && entry->size > room / (size_t)n))
                problem = "bad shape (or larger than the file)";
            else entry->size *= (size_t)(entry->shape[entry->ndim++] = n);
        }
        const JsonValue *begin = json_element(json, offsets, 0);
        const JsonValue *end = json_element(json, offsets, 1);
        if (!problem && !(is_count(begin, (double)data_size) && is_count(end, (double)data_size)
                          && begin->number <= end->number))
            problem = "data_offsets outside the data (truncated file?)";
        else if (!problem && (size_t)(end->number - begin->number)
                             != entry->size * dtype_bytes(entry->dtype))
            problem = "data_offsets disagree with the shape";
        if (!problem) entry->data = data + (size_t)begin->number;
    }
    for (int i = 0; i < file->count && !problem; i++)   /* a name twice: which one is meant? */
        if (strcmp(file->entries[i].name, entry->name) == 0) problem = "named twice";
    return problem;
}

/* <<safetensors.c reading steps>> */
/* Read the whole file into file->bytes, its length into size */
static const char *read_whole_file(Safetensors *file, const char *path, size_t *size)
{
    /* <<Read the whole file into file->bytes>> */
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        return safetensors_fail(&file->error, path, "cannot open: %s", strerror(errno));
    size_t length = 0, capacity = 0;
    file->bytes = xgrow(NULL, &capacity, 1 << 16, 1);
    for (size_t got; (got = fread(file->bytes + length, 1, capacity - length, in)) > 0; ) {
        length += got;
        file->bytes = xgrow(file->bytes, &capacity, length + 1, 1);   /* room to read on */
    }
    const int read_error = ferror(in) ? errno : 0;   /* a directory, say: EISDIR */
    fclose(in);
    if (read_error) return safetensors_fail(&file->error, path,
                                            "cannot read: %s", strerror(read_error));
    *size = length;
    return NULL;
}

static char *copy_text(const char *text)
{
    const size_t n = strlen(text) + 1;
    return memcpy(xmalloc(n), text, n);
}

/* Keep the text members of the metadata object as file->metadata. */
static void read_metadata(Safetensors *file, const Json *json, const JsonValue *object)
{
    file->metadata = xmalloc((size_t)(object->count + 1) * sizeof *file->metadata);
    for (const JsonValue *item = json_first(json, object); item; item = json_next(json, item))
        if (item->type == JSON_STRING) {
            file->metadata[file->n_metadata][0] = copy_text(item->key);
            file->metadata[file->n_metadata++][1] = copy_text(item->text);
        }
}

/* Read every tensor's entry from the header */
static const char *read_entries(Safetensors *file, const char *path, const Json *header,
                                const unsigned char *data, size_t data_size)
{
    /* <<Read every tensor's entry from the header>> */
    const JsonValue *object = &header->values[0];
    file->entries = xmalloc((size_t)(object->count + 1) * sizeof *file->entries);
    for (const JsonValue *item = json_first(header, object); item;
         item = json_next(header, item)) {
        if (strcmp(item->key, "__metadata__") == 0) {
            if (file->metadata)
                return safetensors_fail(&file->error, path,
                                        "the header has '__metadata__' twice");
            read_metadata(file, header, item);
            continue;
        }
        SafetensorsEntry *entry = &file->entries[file->count];
        const char *problem = check_entry(file, header, item, entry, data, data_size);
        if (problem) {
            char name[48];
            return safetensors_fail(&file->error, path, "tensor '%s': %s",
                                    safetensors_printable(item->key, name, sizeof name),
                                    problem);
        }
        file->count++;
    }
    return NULL;
}

/* Refuse tensors that overlap or leave bytes of the data unused */
static const char *check_tiling(Safetensors *file, const char *path)
{
    const unsigned char *data = file->data;
    const size_t data_size = file->data_size;
    /* <<Refuse tensors that overlap or leave bytes of the data unused>> */
    const SafetensorsEntry **order = xmalloc((size_t)(file->count + 1) * sizeof *order);
    for (int i = 0; i < file->count; i++) order[i] = &file->entries[i];
    qsort(order, (size_t)file->count, sizeof *order, compare_places);
    size_t covered = 0;   /* the data up to here belongs to the tensors seen so far */
    for (int i = 0; i < file->count && covered != SIZE_MAX; i++)
        if ((size_t)(order[i]->data - data) == covered)
            covered += order[i]->size * dtype_bytes(order[i]->dtype);
        else covered = SIZE_MAX;
    free(order);
    if (covered == SIZE_MAX)
        return safetensors_fail(&file->error, path,
                                "tensors overlap, or leave a gap between them");
    if (covered != data_size)
        return safetensors_fail(&file->error, path,
                                "%zu bytes after the last tensor (two files glued together?)",
                                data_size - covered);
    return NULL;
}

/* <<safetensors.c reading>> */
static const char *read_file(Safetensors *file, const char *path)
{
    size_t length = 0;
    const char *error = read_whole_file(file, path, &length);
    if (error) return error;
    /* <<Read the header length and parse the header>> */
    ENSURE(host_is_little_endian(), "this program assumes a little-endian host");
    if (length < 8)
        return safetensors_fail(&file->error, path,
                                "too short for a safetensors file (%zu bytes)", length);
    uint64_t header_length = 0;
    for (int i = 7; i >= 0; i--) header_length = header_length << 8 | file->bytes[i];
    if (header_length > length - 8)
        return safetensors_fail(&file->error, path,
                                "header of %llu bytes does not fit in %zu bytes (truncated?)",
                                (unsigned long long)header_length, length);
    const unsigned char *data = file->bytes + 8 + header_length;
    const size_t data_size = length - 8 - (size_t)header_length;
    Json header;
    const char *why = json_parse(&header, (const char *)file->bytes + 8, (size_t)header_length);
    if (why == NULL && header.values[0].type != JSON_OBJECT) {
        json_free(&header);
        why = "JSON, but not an object";
    }
    if (why)
        return safetensors_fail(&file->error, path,
                                "the header is not a JSON object (%s)", why);
    error = read_entries(file, path, &header, data, data_size);
    json_free(&header);
    if (error) return error;
    file->data = data, file->data_size = data_size;
    return check_tiling(file, path);
}

const char *safetensors_read(Safetensors *file, const char *path)
{
    memset(file, 0, sizeof *file);
    const char *error = read_file(file, path);
    if (error) safetensors_free(file);   /* the message stays */
    return error;
}

/* <<safetensors.c writing steps>> */
#ifndef TRANSFORMER_BROWSER
/* Build the header, tensors in layout order */
static char *header_json(const SafetensorsPart *parts, int n_parts,
                         const char *const (*metadata)[2], int n_metadata)
{
    /* <<Build the header, tensors in layout order>> */
    cJSON *header = cJSON_CreateObject();
    if (n_metadata > 0) {
        cJSON *meta = cJSON_AddObjectToObject(header, "__metadata__");
        for (int i = 0; i < n_metadata; i++)
            cJSON_AddStringToObject(meta, metadata[i][0], metadata[i][1]);
    }
    size_t offset = 0;
    for (int p = 0; p < n_parts; p++)
    for (int i = 0; i < parts[p].buffer->count; i++) {
        const TensorView *view = &parts[p].buffer->views[i];
        char name[2 * TENSOR_NAME_MAX];
        snprintf(name, sizeof name, "%s%s", parts[p].prefix, view->name);
        cJSON *entry = cJSON_AddObjectToObject(header, name);
        cJSON_AddStringToObject(entry, "dtype", parts[p].bf16 ? "BF16" : "F32");
        cJSON *shape = cJSON_AddArrayToObject(entry, "shape");
        for (int d = 0; d < view->ndim; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber(view->shape[d]));
        cJSON *offsets = cJSON_AddArrayToObject(entry, "data_offsets");
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
        offset += view->size * (parts[p].bf16 ? 2 : sizeof(float));
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
    }
    char *json = cJSON_PrintUnformatted(header);
    cJSON_Delete(header);
    return json;
}
#else
static char *header_json(const SafetensorsPart *parts, int n_parts,
                         const char *const (*metadata)[2], int n_metadata)
{
    ENSURE(false, "the browser's build writes no safetensors files (%d parts, %d metadata)",
           n_parts, n_metadata);
}
#endif

#ifndef TRANSFORMER_BROWSER
/* Write header and data to a temporary file, sync it, and rename it */
static const char *write_atomically(const char *path, const char *json,
                                    const SafetensorsPart *parts, int n_parts, Error *error)
{
    const size_t json_length = strlen(json), padded = (json_length + 7) / 8 * 8;
    /* <<Write header and data to a temporary file, sync it, and rename it>> */
    /* <<Refuse to replace anything but a regular file>> */
    struct stat existing;
    if (lstat(path, &existing) == 0 && !S_ISREG(existing.st_mode)) {
        return safetensors_fail(error, path, "not a regular file; refusing to replace it");
    }
    char temporary[4096];
    if (snprintf(temporary, sizeof temporary, "%s.XXXXXX", path) >= (int)sizeof temporary) {
        return safetensors_fail(error, path, "file name too long");
    }
    const int fd = mkstemp(temporary);   /* a new file of a name no other writer has */
    const mode_t mask = umask(0);
    umask(mask);
    FILE *out = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (out == NULL) {
        const int failure = errno;
        if (fd >= 0) close(fd), unlink(temporary);
        return safetensors_fail(error, path, "cannot create a temporary file beside it: %s",
                                strerror(failure));
    }
    unsigned char length_bytes[8];
    for (int i = 0; i < 8; i++) length_bytes[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int failed = 0;   /* the errno of the first failure */
    if (fwrite(length_bytes, 1, 8, out) != 8 || fwrite(json, 1, json_length, out) != json_length)
        failed = errno;
    for (size_t i = json_length; !failed && i < padded; i++)
        if (fputc(' ', out) == EOF) failed = errno;
    for (int p = 0; p < n_parts; p++)
    for (int i = 0; !failed && i < parts[p].buffer->count; i++) {
        size_t bytes;
        void *stored = stored_bytes(&parts[p], i, &bytes);
        if (fwrite(stored ? stored : flat_view(parts[p].buffer, i), 1, bytes, out) != bytes)
            failed = errno;
        free(stored);
    }
    if (!failed && (fflush(out) != 0 || fsync(fileno(out)) != 0)) failed = errno;
    if (fclose(out) != 0 && !failed) failed = errno;
    if (!failed && rename(temporary, path) != 0) failed = errno;
    if (failed) {
        unlink(temporary);
        return safetensors_fail(error, path,
                                "cannot write: %s", strerror(failed ? failed : EIO));
    }
    sync_directory(path);
    return NULL;
}
#else
static const char *write_atomically(const char *path, const char *json,
                                    const SafetensorsPart *parts, int n_parts, Error *error)
{
    (void)json, (void)parts, (void)n_parts;
    return safetensors_fail(error, path, "the browser's build writes no files");
}
#endif

/* <<safetensors.c writing>> */
const char *safetensors_write(const char *path, const FlatBuffer *buffer,
                              const char *const (*metadata)[2], int n_metadata,
                              Error *error)
{
    const SafetensorsPart part = {"", buffer, false};
    return safetensors_write_parts(path, &part, 1, metadata, n_metadata, error);
}

const char *safetensors_write_parts(const char *path, const SafetensorsPart *parts,
                                    int n_parts, const char *const (*metadata)[2],
                                    int n_metadata, Error *error)
{
    error->message[0] = '\0';
    ENSURE(host_is_little_endian(), "this program assumes a little-endian host");
    char *json = header_json(parts, n_parts, metadata, n_metadata);
    const char *failed = write_atomically(path, json, parts, n_parts, error);
    free(json);
    return failed;
}
