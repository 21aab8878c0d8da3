/* Text to tokens and back, and tokens to numbers through vocabularies -- generated from the
   book's chapters by notangle: edit the book, not this file. */
#include "text.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

/* <<text.c definitions>> */
static const char *refuse_line(TextLine *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static const char *refuse_line(TextLine *result, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(result->error.message, sizeof result->error.message, format, arguments);
    va_end(arguments);
    result->text[0] = '\0', result->count = 0;
    return result->error.message;
}

/* Decode line[0..length) into point[], *count code points. NULL, or why not. */
static const char *decode_utf8(const char *line, size_t length, uint32_t *point,
                               int *count, TextLine *result)
{
    char message[sizeof result->error.message];
    *count = 0;
    if (utf8_check(line, length, message, sizeof message))
        return refuse_line(result, "%s", message);
    int n = 0;
    for (size_t i = 0; i < length; n++) {
        const char *valid;   /* NULL: checked above */
        i += (size_t)utf8_decode(line + i, length - i, &point[n], &valid);
    }
    *count = n;
    return NULL;
}

static bool is_space(uint32_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xA0 || c == 0x1680
        || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F
        || c == 0x205F || c == 0x3000;
}

static bool is_invisible(uint32_t c)
{
    return c < 0x20 || (c >= 0x7F && c < 0xA0) || (c >= 0x200B && c <= 0x200F)
        || c == 0x2060 || c == 0xFEFF;
}

static bool is_number(uint32_t c)
{
    return (c >= '0' && c <= '9') || c == 0xB2 || c == 0xB3 || c == 0xB9
        || (c >= 0xBC && c <= 0xBE);
}

static bool is_letter(uint32_t c)
{
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c < 0x100) return c == 0xAA || c == 0xB5 || c == 0xBA
                          || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
    return !is_space(c) && !is_invisible(c)
        && !(c >= 0x2000 && c <= 0x2BFF)     /* punctuation, arrows, mathematics */
        && !(c >= 0x2E00 && c <= 0x2E7F)     /* more punctuation */
        && !(c >= 0x3000 && c <= 0x303F)     /* CJK punctuation */
        && !(c >= 0xFE30 && c <= 0xFE6F) && !(c >= 0xFF01 && c <= 0xFF20)
        && !(c >= 0x1F000 && c <= 0x1FAFF);  /* emoji and other pictures */
}

static uint32_t to_lowercase(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ? c + 0x20 : c;
}

static bool is_lowercase(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || c == 0xAA || c == 0xB5 || c == 0xBA
        || (c >= 0xDF && c <= 0xFF && c != 0xF7);
}

typedef struct {
    uint32_t *point;
    int count, capacity;
} Points;

static void put(Points *p, uint32_t c)
{
    ENSURE(p->count < p->capacity, "a line grew beyond %d code points", p->capacity);
    p->point[p->count++] = c;
}

static void put_space(Points *p)
{
    if (p->count > 0 && p->point[p->count - 1] != ' ') put(p, ' ');
}

static void put_spaced(Points *p, uint32_t c)
{
    put(p, ' '), put(p, c), put(p, ' ');
}

static void normalize_characters(const uint32_t *in, int n, TextOptions options,
                                 Points *out)
{
    for (int i = 0; i < n; i++) {
        const uint32_t c = options.lowercase ? to_lowercase(in[i]) : in[i];
        const uint32_t before = i > 0 ? in[i - 1] : 0, after = i + 1 < n ? in[i + 1] : 0;
        /* <<Replace the character c>> */
        if (c == '&' && i + 4 < n && in[i + 1] == 'a' && in[i + 2] == 'm' && in[i + 3] == 'p'
            && in[i + 4] == ';')
            put(out, '&'), i += 4;
        else if (c == 0xA0 && before >= '0' && before <= '9' && after >= '0' && after <= '9')
            put(out, options.language == TEXT_GERMAN ? ',' : '.');    /* 12 500 */
        else if (is_space(c)) put_space(out);
        else if (is_invisible(c)) continue;
        else if ((c == '\'' || c == '`') && (after == '\'' || after == '`'))
            put_space(out), put(out, '"'), put(out, ' '), i++;
        else if (c == 0x201E || c == 0x201C || c == 0x201D || c == 0x201A)   /* double quotes, */
            put(out, '"');                                                   /* single low one */
        else if (c == 0x2018 || c == 0x2019)                                 /* single quotes */
            put(out, is_letter(before) && is_letter(after) ? '\'' : '"');
        else if (c == '`' || c == 0xB4) put(out, '\'');                      /* grave, acute */
        else if (c == 0x2013) put(out, '-');                                 /* en dash */
        else if (c == 0x2014) put_space(out), put(out, '-'), put(out, ' ');  /* em dash */
        else if (c == 0x2026) put(out, '.'), put(out, '.'), put(out, '.');   /* ellipsis */
        else put(out, c);
        if (out->count >= 2 && out->point[out->count - 1] == '\''
            && out->point[out->count - 2] == '\'')
            out->count--, out->point[out->count - 1] = '"';
    }
    if (out->count > 0 && out->point[out->count - 1] == ' ') out->count--;
}

/* Move p[to] to p[from], shifting p[from .. to) one place right (or, when to < from,
   p[to + 1 .. from] one place left). */
static void rotate(uint32_t *p, int from, int to)
{
    const uint32_t moved = p[to];
    if (to > from) memmove(p + from + 1, p + from, (size_t)(to - from) * sizeof *p);
    else memmove(p + to, p + to + 1, (size_t)(from - to) * sizeof *p);
    p[from] = moved;
}

static void move_quotes(uint32_t *p, int n, TextLanguage language)
{
    if (language == TEXT_ENGLISH) {
        for (int i = 0; i < n; i++) {
            int end = i;
            if (p[i] != '"') continue;
            while (end + 1 < n && (p[end + 1] == ',' || p[end + 1] == '.')) end++;
            rotate(p, end, i);
            i = end;
        }
        return;
    }
    for (int i = 0; i + 1 < n; i++)
        if (p[i] == ',' && p[i + 1] == '"') p[i] = '"', p[i + 1] = ',', i++;
    for (int i = 0; i < n; i++) {
        int end = i;
        if (p[i] != '.') continue;
        while (end + 1 < n && p[end + 1] == '.') end++;
        if (end + 1 < n && p[end + 1] == '"') rotate(p, i, ++end);
        i = end;
    }
}

static void separate_punctuation(const uint32_t *in, int n, TextLanguage language,
                                 Points *out)
{
    for (int i = 0; i < n; i++) {
        const uint32_t c = in[i], before = i > 0 ? in[i - 1] : 0;
        const uint32_t after = i + 1 < n ? in[i + 1] : 0;
        if (c == ' ' || c == '-' || is_letter(c) || is_number(c)) {
            put(out, c);
        } else if (c == '.') {
            /* <<Make a run of two or more full stops a token>> */
            int end = i;
            while (end + 1 < n && in[end + 1] == '.') end++;
            if (end > i) put(out, ' ');
            for (int k = i; k <= end; k++) put(out, '.');
            if (end > i) put(out, ' ');
            i = end;
        } else if (c == ',') {
            /* <<Split a comma off unless it is inside a number>> */
            if ((before && !is_number(before)) || (after && !is_number(after)) || (before && !after))
                put_spaced(out, ',');
            else
                put(out, ',');
        } else if (c == '\'' && language == TEXT_ENGLISH) {
            /* <<Split an English apostrophe>> */
            const bool letter_before = is_letter(before), letter_after = is_letter(after);
            if ((letter_before && letter_after) || (is_number(before) && after == 's'))
                put(out, ' '), put(out, c);
            else if ((before && after && !letter_before && !letter_after)
                     || (before && !letter_before && !is_number(before) && letter_after)
                     || (letter_before && after && !letter_after))
                put_spaced(out, c);
            else
                put(out, c);
        } else {
            put_spaced(out, c);   /* any other punctuation, and German apostrophes */
        }
    }
}

static bool in_list(const char *word, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(word, *list) == 0) return true;
    return false;
}

static int abbreviation(const uint32_t *word, int length, TextLanguage language)
{
    static const char *const english[] = {
        "Mr", "Mrs", "Ms", "Dr", "Prof", "Rev", "St", "Sr", "Jr", "Gen", "Capt", "Lt",
        "Col", "Sgt", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Oct",
        "Nov", "Dec", "Nr", "v", "vs", "i.e", "e.g", NULL};
    static const char *const english_before_numbers[] = {"No", "Art", "pp", NULL};
    static const char *const german[] = {
        "Nr", "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mio", "Mrd", "bzw", "usw", "vgl",
        "ca", "pp", "etc", "evtl", "ggf", "sog", "usf", "zzt", "dgl", "ff", "v", "vs",
        NULL};
    char text[8];
    if (length >= (int)sizeof text) return 0;
    for (int k = 0; k < length; k++) {
        if (word[k] >= 0x80) return 0;
        text[k] = (char)word[k];
    }
    text[length] = '\0';
    if (language == TEXT_ENGLISH)
        return (length == 1 && text[0] >= 'A' && text[0] <= 'Z') || in_list(text, english)
               ? 1 : in_list(text, english_before_numbers) ? 2 : 0;
    const bool number = strspn(text, "0123456789") == (size_t)length && length <= 2
                        && text[0] != '0';
    const bool roman = strspn(text, "ivx") == (size_t)length
                       || strspn(text, "IVX") == (size_t)length;
    return (length == 1 && is_letter(word[0])) || number || (roman && length <= 5)
           || in_list(text, german);
}

static void put_utf8(char *text, size_t *used, size_t size, uint32_t c)
{
    char bytes[4];
    const int n = utf8_encode(c, bytes);
    ENSURE(*used + (size_t)n < size, "a tokenized line grew beyond %zu bytes", size);
    for (int k = 0; k < n; k++) text[(*used)++] = bytes[k];
}

static void write_tokens(const uint32_t *in, int n, TextLanguage language,
                         TextLine *result)
{
    size_t used = 0;
    int count = 0;
    for (int i = 0; i < n; ) {
        while (i < n && in[i] == ' ') i++;
        if (i == n) break;
        int end = i, next;
        while (end < n && in[end] != ' ') end++;
        for (next = end; next < n && in[next] == ' '; next++) {}
        /* <<Decide whether a final full stop is a token of its own>> */
        int keep = end;   /* the word is in[i .. keep), then in[keep] and in[keep + 1 .. end) */
        const int length = end - i;
        bool only_periods = true, has_period = false, has_letter = false;
        for (int k = i; k < end; k++) {
            only_periods = only_periods && in[k] == '.';
            if (k < end - 1) has_period |= in[k] == '.', has_letter |= is_letter(in[k]);
        }
        if (length >= 2 && in[end - 1] == '.' && !only_periods) {
            const int kind = abbreviation(in + i, length - 1, language);
            const uint32_t following = next < n ? in[next] : 0;
            if (!(has_period && has_letter) && kind != 1 && !is_lowercase(following)
                && !(kind == 2 && following >= '0' && following <= '9'))
                keep = end - 1;
        } else if (length >= 2 && next == n && in[end - 2] == '.' && in[end - 1] == '\'') {
            keep = end - 2;
        }
        const int cut[4] = {i, keep, keep < end ? keep + 1 : end, end};
        for (int part = 0; part < 3; part++) {
            if (cut[part] == cut[part + 1]) continue;
            if (count++ > 0) put_utf8(result->text, &used, sizeof result->text, ' ');
            for (int k = cut[part]; k < cut[part + 1]; k++)
                put_utf8(result->text, &used, sizeof result->text, in[k]);
        }
        i = end;
    }
    result->text[used] = '\0';
    result->count = count;
}

const char *tokenize_line(TextOptions options, const char *line, size_t length,
                          TextLine *result)
{
    enum { N = TEXT_MAX_LINE_BYTES };
    result->blank = false;
    if (length > N)
        return refuse_line(result, "line too long: %zu bytes (at most %d)", length, N);
    const char *nul = memchr(line, '\0', length);
    if (nul) return refuse_line(result, "a NUL byte at byte %td", nul - line + 1);
    uint32_t decoded[N], normal[2 * N + 2], spaced[6 * N + 6];
    int n;
    if (decode_utf8(line, length, decoded, &n, result)) return result->error.message;
    Points a = {normal, 0, 2 * N + 2}, b = {spaced, 0, 6 * N + 6};
    normalize_characters(decoded, n, options, &a);
    move_quotes(a.point, a.count, options.language);
    separate_punctuation(a.point, a.count, options.language, &b);
    write_tokens(b.point, b.count, options.language, result);
    if (result->count) return NULL;
    refuse_line(result, "empty line");
    result->blank = true;   /* empty, or only spaces: a caller may keep it as a blank line */
    return result->error.message;
}

long read_line(FILE *in, LineReader *reader)
{
    size_t n = 0;
    int c;
    for (;;) {
        reader->text = xgrow(reader->text, &reader->capacity, n + 2, 1);   /* c and a NUL */
        if ((c = getc_unlocked(in)) == EOF || c == '\n' || c == '\r') break;
        reader->text[n++] = (char)c;
    }
    if (c == EOF && n == 0) return -1;
    if (c == '\r') {   /* CR LF is one line end */
        const int next = getc_unlocked(in);
        if (next != '\n' && next != EOF) ungetc(next, in);
    }
    reader->text[n] = '\0';
    reader->number++;
    return (long)n;
}

const char *located(Error *error, const char *name, long line, const char *message)
{
    int room = (int)(sizeof error->message - strlen(message)) - 32;   /* ":LINE: ...", NUL */
    if (room < 0) room = 0;
    if ((int)strlen(name) <= room) return error_set(error, "%s:%ld: %s", name, line, message);
    return error_set(error, "%.*s...:%ld: %s", room, name, line, message);
}

void line_window_init(LineWindow *w, int capacity)
{
    *w = (LineWindow){.capacity = capacity, .first = 1};
    w->readers = xmalloc((size_t)capacity * sizeof *w->readers);
    memset(w->readers, 0, (size_t)capacity * sizeof *w->readers);
    w->lines = xmalloc((size_t)capacity * sizeof *w->lines);
    w->sizes = xmalloc((size_t)capacity * sizeof *w->sizes);
    w->cut_from = xmalloc((size_t)capacity * sizeof *w->cut_from);
}

int line_window_fill(LineWindow *w, FILE *in, size_t max_bytes)
{
    w->first += w->count, w->count = 0;
    while (w->count < w->capacity) {
        char **text = &w->readers[w->count].text;
        long length = read_line(in, &w->readers[w->count]);
        if (length < 0) return ferror(in) ? -1 : w->count;
        w->cut_from[w->count] = 0;
        if ((size_t)length > max_bytes) {   /* back off to the first byte of a character */
            size_t cut = max_bytes;
            while (cut > 0 && ((unsigned char)(*text)[cut] & 0xC0) == 0x80) cut--;
            w->cut_from[w->count] = length;
            (*text)[cut] = '\0', length = (long)cut;
        }
        w->lines[w->count] = *text, w->sizes[w->count++] = (size_t)length;
    }
    return w->count;
}

void line_window_free(LineWindow *w)
{
    for (int i = 0; i < w->capacity; i++) free(w->readers[i].text);
    free(w->readers), free(w->lines), free(w->sizes), free(w->cut_from);
}

const char *tokenize_file(const char *path, TextOptions options, TokenizedFile *file)
{
    memset(file, 0, sizeof *file);
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        return error_set(&file->error, "cannot open %s: %s", path, strerror(errno));
    }
    TextLine line;   /* 2.5 kB on the stack: no state shared between calls or threads */
    LineReader reader = {0};
    size_t bytes = 0, byte_capacity = 0, token_capacity = 0, line_capacity = 0;
    long length;
    const char *problem = NULL;
    while (problem == NULL && (length = read_line(in, &reader)) >= 0) {
        if (tokenize_line(options, reader.text, (size_t)length, &line))
            problem = located(&file->error, path, reader.number, line.error.message);
        else {
            /* <<Append the line's tokens to the file's>> */
            const size_t size = strlen(line.text) + 1;
            file->storage = xgrow(file->storage, &byte_capacity, bytes + size, 1);
            file->line_start = xgrow(file->line_start, &line_capacity, (size_t)file->lines + 2,
                                    sizeof *file->line_start);
            file->token = xgrow(file->token, &token_capacity, (size_t)(file->count + line.count),
                               sizeof *file->token);
            file->line_start[file->lines++] = file->count;
            memcpy(file->storage + bytes, line.text, size);
            for (size_t k = 0, start = 0; k < size; k++) {
                if (line.text[k] != ' ' && line.text[k] != '\0') continue;
                file->storage[bytes + k] = '\0';
                file->token[file->count++] = (char *)(bytes + start);   /* an offset for now */
                start = k + 1;
            }
            bytes += size;
        }
    }
    if (problem == NULL && ferror(in))
        problem = located(&file->error, path, reader.number + 1, strerror(errno));
    fclose(in);
    free(reader.text);
    if (problem) {
        tokenized_file_free(file);   /* all but the message */
        return problem;
    }
    if (file->line_start) file->line_start[file->lines] = file->count;
    for (long t = 0; t < file->count; t++)
        file->token[t] = file->storage + (size_t)file->token[t];
    return NULL;
}

void tokenized_file_free(TokenizedFile *file)
{
    free(file->token), free(file->line_start), free(file->storage);
    file->token = NULL, file->line_start = NULL, file->storage = NULL;
    file->lines = file->count = 0;
}

/* The tokens of a Moses line: XML escapes undone, separated by single spaces. */
static void unescape_moses(const char *line, char *out, size_t size)
{
    static const char *const escape[][2] = {
        {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&apos;", "'"}, {"&quot;", "\""},
        {"&#91;", "["}, {"&#93;", "]"}, {"&#124;", "|"}};
    size_t used = 0;
    while (*line && used + 1 < size) {
        size_t k = 0;
        while (k < 8 && strncmp(line, escape[k][0], strlen(escape[k][0])) != 0) k++;
        if (*line == ' ' || *line == '\t') {
            if (used > 0 && out[used - 1] != ' ') out[used++] = ' ';
            line++;
        } else if (k < 8) {
            out[used++] = escape[k][1][0];
            line += strlen(escape[k][0]);
        } else {
            out[used++] = *line++;
        }
    }
    if (used > 0 && out[used - 1] == ' ') used--;
    out[used] = '\0';
}

const char *tokenization_agreement(FILE *raw, const char *raw_name, FILE *reference,
                                   const char *reference_name, TextOptions options,
                                   FILE *differences, Agreement *result)
{
    memset(result, 0, sizeof *result);
    LineReader ours = {0}, theirs = {0};
    TextLine line;   /* on the stack: no state shared between calls or threads */
    char expected[4 * TEXT_MAX_TOKENIZED_BYTES];
    const char *problem = NULL;
    long length;
    while (problem == NULL && (length = read_line(raw, &ours)) >= 0) {
        if (read_line(reference, &theirs) < 0)
            problem = located(&result->error, reference_name, theirs.number + 1,
                              "the reference has fewer lines");
        else if (tokenize_line(options, ours.text, (size_t)length, &line))
            problem = located(&result->error, raw_name, ours.number, line.error.message);
        else {
            unescape_moses(theirs.text, expected, sizeof expected);
            const bool same = strcmp(line.text, expected) == 0;
            result->lines++, result->identical += same;
            if (!same && differences)
                fprintf(differences, "line %ld\n  ours: %s\n  ref:  %s\n", ours.number,
                        line.text, expected);
        }
    }
    if (problem == NULL && read_line(reference, &theirs) >= 0)
        problem = located(&result->error, reference_name, theirs.number,
                          "the reference has more lines");
    free(ours.text), free(theirs.text);
    return problem;
}

/* What the detokenizer's rules remember from one token to the next. */
typedef struct {
    TextLanguage language;
    const char *line;                 /* the tokens, line[0 .. length) */
    size_t length;
    int apostrophes;                  /* those that stand alone in the line */
    char last;                        /* the last byte of the token before */
    bool glue_next;                   /* no space before the next token */
    bool double_open, single_open;    /* inside a quotation */
} Joining;

/* <<Decide how the token joins its neighbours>> */
/* Decide how the token joins its neighbours: true when it joins the token before; sets
   j->glue_next when the token after, which starts at j->line[next], joins it. */
static bool decide_joins(Joining *j, const char *token, size_t next)
{
    static const char *const closing[] = {".", ",", "!", "?", ";", ":", "%", ")", "]", "}",
                                          "...", NULL};
    static const char *const opening[] = {"(", "[", "{", "$", "#", NULL};
    static const char *const clitics[] = {"s", "re", "ve", "ll", "m", "d", "t", "em", NULL};
    const char *line = j->line;
    const size_t length = j->length;
    bool glue = j->glue_next;
    j->glue_next = false;
    if (strcmp(token, ":") == 0 && j->last >= '0' && j->last <= '9' && next < length
        && line[next] >= '0' && line[next] <= '9') {
        glue = j->glue_next = true;   /* 11:27 */
    } else if (in_list(token, closing)) {
        glue = true;
    } else if (in_list(token, opening)) {
        j->glue_next = true;
    } else if (strcmp(token, "\"") == 0) {
        if (j->double_open) glue = true;
        else j->glue_next = true;
        j->double_open = !j->double_open;
    } else if (strcmp(token, "'") == 0 && j->apostrophes % 2 == 1) {
        /* <<Join an odd apostrophe to the word before, or to a clitic after it>> */
        size_t after = next;   /* the next token is line[next .. after) */
        while (after < length && line[after] != ' ' && line[after] != '\t') after++;
        char word[4] = "";
        if (after - next < sizeof word) {
            memcpy(word, line + next, after - next);
            word[after - next] = '\0';
        }
        if (in_list(word, clitics)) j->glue_next = true;   /* they 're */
        else glue = true;                                  /* the dogs' bowls, 4' wide */
    } else if (strcmp(token, "'") == 0) {
        if (j->single_open) glue = true;
        else j->glue_next = true;
        j->single_open = !j->single_open;
    } else if (j->language == TEXT_ENGLISH && token[0] == '\''
               && (unsigned char)token[1] < 0x80 && is_letter((unsigned char)token[1])) {
        glue = true;   /* 's 're 't */
    }
    return glue;
}

const char *detokenize_line(TextLanguage language, const char *line, size_t length,
                            TextLine *result)
{
    if (length > TEXT_MAX_TOKENIZED_BYTES)
        return refuse_line(result, "line too long: %zu bytes (at most %d)", length,
                      TEXT_MAX_TOKENIZED_BYTES);
    const char *nul = memchr(line, '\0', length);   /* refused as the tokenizer does */
    if (nul) return refuse_line(result, "a NUL byte at byte %td", nul - line + 1);
    uint32_t point[TEXT_MAX_TOKENIZED_BYTES];
    int n;
    if (decode_utf8(line, length, point, &n, result)) return result->error.message;
    /* <<Count the apostrophes that stand alone>> */
    int apostrophes = 0;
    for (size_t i = 0; i < length; i++)
        apostrophes += line[i] == '\'' && (i == 0 || line[i - 1] == ' ')
                       && (i + 1 == length || line[i + 1] == ' ');
    Joining joining = {language, line, length, apostrophes, '\0', true, false, false};
    char token[TEXT_MAX_TOKENIZED_BYTES + 1];
    size_t used = 0;
    int count = 0;
    for (size_t i = 0, end, next; i < length; i = end) {
        /* <<Find the token line[i .. end) and the start next of the one after it>> */
        while (i < length && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i == length) break;
        for (end = i; end < length && line[end] != ' ' && line[end] != '\t'; end++) {}
        for (next = end; next < length && (line[next] == ' ' || line[next] == '\t'); next++) {}
        memcpy(token, line + i, end - i);
        token[end - i] = '\0';
        if (!decide_joins(&joining, token, next)) result->text[used++] = ' ';
        memcpy(result->text + used, token, end - i);
        used += end - i;
        joining.last = token[end - i - 1];
        count++;
    }
    result->text[used] = '\0';
    result->count = count;
    return count ? NULL : refuse_line(result, "empty line");
}
