/* A JSON reader: a document parsed into one array of values. Generated from the book's
   chapters by notangle: edit the book, not this file. */
#ifndef JSON_H
#define JSON_H
#include <stddef.h>

typedef enum {
    JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} JsonType;

typedef struct {
    JsonType type;
    const char *key;     /* the member's name in the object that holds it, else NULL */
    const char *text;    /* a string's characters, unescaped, NUL-terminated */
    double number;
    int count;           /* an array's elements or an object's members */
    int first, next;     /* indexes of the first member and of the one after this; -1: none */
} JsonValue;

typedef struct {
    JsonValue *values;   /* values[0] is the document */
    char *texts;         /* the unescaped strings and keys, one after another */
} Json;

/* <<json.h declarations>> */
/* Parse text[0 .. length) as one JSON value, with nothing but white space after it: NULL,
   or why the text is not JSON (json then holds nothing). */
const char *json_parse(Json *json, const char *text, size_t length);
/* The first member of an array or object, the member after member: NULL at the end. */
const JsonValue *json_first(const Json *json, const JsonValue *value);
const JsonValue *json_next(const Json *json, const JsonValue *member);
/* The first member of object named key, or NULL; the i-th element of an array, or NULL. */
const JsonValue *json_member(const Json *json, const JsonValue *object, const char *key);
const JsonValue *json_element(const Json *json, const JsonValue *array, int i);
void json_free(Json *json);
#endif
