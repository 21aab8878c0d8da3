/* A JSON reader -- generated from the book's chapters by notangle: edit the book, not this
   file. */
#include "json.h"
#include <stdlib.h>
#include <string.h>
#include "tensor.h"
#include "utf8.h"

enum { JSON_DEPTH_MAX = 64 };

typedef struct {
    const char *at, *end;   /* the text not yet read */
    JsonValue *values;
    size_t count, capacity;
    char *texts;
    size_t used;            /* bytes of texts filled */
    int depth;
    const char *error;
} JsonParser;

/* <<json.c definitions>> */
static int refuse(JsonParser *p, const char *reason)
{
    if (p->error == NULL) p->error = reason;
    return -1;
}

static int new_value(JsonParser *p, JsonType type)
{
    p->values = xgrow(p->values, &p->capacity, p->count + 1, sizeof *p->values);
    p->values[p->count] = (JsonValue){.type = type, .first = -1, .next = -1};
    return (int)p->count++;
}

static void skip_space(JsonParser *p)
{
    while (p->at < p->end
           && (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r'))
        p->at++;
}

static int parse_value(JsonParser *p);

static int parse_word(JsonParser *p, const char *word, JsonType type)
{
    const size_t n = strlen(word);
    if ((size_t)(p->end - p->at) < n || memcmp(p->at, word, n) != 0)
        return refuse(p, "not a JSON value");
    p->at += n;
    return new_value(p, type);
}

/* The UTF-16 unit of the four hex digits at p->at, or -1. */
static long hex_unit(JsonParser *p)
{
    if (p->end - p->at < 4) return -1;
    long unit = 0;
    for (int i = 0; i < 4; i++) {
        const char c = *p->at++;
        const int digit = c >= '0' && c <= '9' ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) return -1;
        unit = unit * 16 + digit;
    }
    return unit;
}

/* After "\u": the code point of the escape (and of its low half), or -1. */
static long escaped_point(JsonParser *p)
{
    const long high = hex_unit(p);
    if (high < 0xD800 || high > 0xDFFF) return high == 0 ? -1 : high;
    if (high > 0xDBFF || p->end - p->at < 2 || memcmp(p->at, "\\u", 2) != 0) return -1;
    p->at += 2;
    const long low = hex_unit(p);
    if (low < 0xDC00 || low > 0xDFFF) return -1;
    return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
}

/* The character the escape \c stands for, or -1 (\u apart). */
static int unescaped(char c)
{
    switch (c) {
    case '"': case '\\': case '/': return c;
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return -1;
    }
}

/* The string at p->at (its opening quote), unescaped into p->texts, or NULL. */
static const char *parse_string(JsonParser *p)
{
    char *start = p->texts + p->used, *out = start;
    for (p->at++; p->at < p->end && *p->at != '"'; ) {
        const unsigned char c = (unsigned char)*p->at++;
        if (c < 0x20) return refuse(p, "a control character in a string"), NULL;
        if (c != '\\') *out++ = (char)c;
        else if (p->at == p->end) break;
        else if (*p->at == 'u') {
            p->at++;
            const long point = escaped_point(p);
            if (point < 0) return refuse(p, "a bad \\u escape"), NULL;
            out += utf8_encode((uint32_t)point, out);
        } else if (unescaped(*p->at) >= 0) {
            *out++ = (char)unescaped(*p->at++);
        } else return refuse(p, "an unknown escape in a string"), NULL;
    }
    if (p->at == p->end) return refuse(p, "a string without its closing quote"), NULL;
    p->at++;
    *out++ = '\0';
    p->used = (size_t)(out - p->texts);
    return start;
}

static const char *skip_digits(const char *s, const char *end)
{
    while (s < end && *s >= '0' && *s <= '9') s++;
    return s;
}

static int parse_number(JsonParser *p)
{
    const char *s = p->at + (p->at < p->end && *p->at == '-');
    const char *digits = s;
    s = s < p->end && *s == '0' ? s + 1 : skip_digits(s, p->end);
    bool ok = s > digits;
    if (ok && s < p->end && *s == '.') {
        digits = ++s;
        s = skip_digits(s, p->end);
        ok = s > digits;
    }
    if (ok && s < p->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < p->end && (*s == '+' || *s == '-')) s++;
        digits = s;
        s = skip_digits(s, p->end);
        ok = s > digits;
    }
    char copy[64];
    if (!ok) return refuse(p, "not a JSON value");
    if ((size_t)(s - p->at) >= sizeof copy) return refuse(p, "a number too long");
    memcpy(copy, p->at, (size_t)(s - p->at));
    copy[s - p->at] = '\0';
    const int v = new_value(p, JSON_NUMBER);
    p->values[v].number = strtod(copy, NULL);
    p->at = s;
    return v;
}

static int parse_members(JsonParser *p, JsonType type, char close)
{
    if (++p->depth > JSON_DEPTH_MAX) return refuse(p, "nested too deeply");
    const int self = new_value(p, type);
    int last = -1;
    p->at++;
    skip_space(p);
    if (p->at < p->end && *p->at == close) {
        p->at++, p->depth--;
        return self;
    }
    for (;;) {
        const char *key = NULL;
        skip_space(p);
        if (type == JSON_OBJECT) {
            if (p->at == p->end || *p->at != '"') return refuse(p, "a name expected");
            if ((key = parse_string(p)) == NULL) return -1;
            skip_space(p);
            if (p->at == p->end || *p->at++ != ':') return refuse(p, "':' expected");
        }
        const int member = parse_value(p);
        if (member < 0) return -1;
        p->values[member].key = key;
        if (last < 0) p->values[self].first = member;
        else p->values[last].next = member;
        last = member;
        p->values[self].count++;
        skip_space(p);
        if (p->at < p->end && *p->at == ',') p->at++;
        else if (p->at < p->end && *p->at == close) {
            p->at++, p->depth--;
            return self;
        } else return refuse(p, "',' or a closing bracket expected");
    }
}

static int parse_value(JsonParser *p)
{
    skip_space(p);
    if (p->at == p->end) return refuse(p, "a value expected");
    switch (*p->at) {
    case '{': return parse_members(p, JSON_OBJECT, '}');
    case '[': return parse_members(p, JSON_ARRAY, ']');
    case 't': return parse_word(p, "true", JSON_TRUE);
    case 'f': return parse_word(p, "false", JSON_FALSE);
    case 'n': return parse_word(p, "null", JSON_NULL);
    case '"': {
        const char *text = parse_string(p);
        if (text == NULL) return -1;
        const int v = new_value(p, JSON_STRING);
        p->values[v].text = text;
        return v;
    }
    default: return parse_number(p);
    }
}

const char *json_parse(Json *json, const char *text, size_t length)
{
    JsonParser p = {.at = text, .end = text + length, .texts = xmalloc(length + 1)};
    if (parse_value(&p) >= 0) {
        skip_space(&p);
        if (p.at != p.end) refuse(&p, "more text after the value");
    }
    json->values = p.values, json->texts = p.texts;
    if (p.error) json_free(json);
    return p.error;
}

void json_free(Json *json)
{
    free(json->values), free(json->texts);
    json->values = NULL, json->texts = NULL;
}

const JsonValue *json_first(const Json *json, const JsonValue *value)
{
    return value->first < 0 ? NULL : &json->values[value->first];
}

const JsonValue *json_next(const Json *json, const JsonValue *member)
{
    return member->next < 0 ? NULL : &json->values[member->next];
}

const JsonValue *json_member(const Json *json, const JsonValue *object, const char *key)
{
    const JsonValue *m = object->type == JSON_OBJECT ? json_first(json, object) : NULL;
    while (m && strcmp(m->key, key) != 0) m = json_next(json, m);
    return m;
}

const JsonValue *json_element(const Json *json, const JsonValue *array, int i)
{
    const JsonValue *m = array->type == JSON_ARRAY ? json_first(json, array) : NULL;
    while (m && i-- > 0) m = json_next(json, m);
    return m;
}
