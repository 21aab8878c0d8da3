/* fuzz-json.c -- the JSON reader of safetensors headers on any bytes: a text it accepts must
   make a tree that holds together (every member's index inside the array, counts equal to
   the members linked, keys exactly on an object's members), and be accepted again. */
#include <string.h>
#include "fuzz.h"
#include "json.h"

/* The values under v, v included, checked as the reader promises them; abort otherwise. */
static size_t walk(const Json *json, const JsonValue *v, int depth)
{
    if (depth > 64) abort();
    size_t seen = 1;
    int members = 0;
    for (const JsonValue *m = json_first(json, v); m; m = json_next(json, m), members++) {
        if ((v->type == JSON_OBJECT) != (m->key != NULL)) abort();
        if (v->type == JSON_OBJECT && json_member(json, v, m->key) == NULL) abort();
        seen += walk(json, m, depth + 1);
    }
    if (members != v->count || (members && v->type != JSON_ARRAY && v->type != JSON_OBJECT))
        abort();
    if ((v->type == JSON_STRING) != (v->text != NULL)) abort();
    return seen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Json json;
    const char *error = json_parse(&json, (const char *)data, size);
    if (error) {
        if (json.values || json.texts || strchr(error, '\n')) abort();
        return 0;
    }
    walk(&json, &json.values[0], 0);
    json_free(&json);
    return 0;
}
