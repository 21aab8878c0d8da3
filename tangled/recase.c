/* The recaser: learning its table, its text, and recasing a line of tokens. Generated from
   the book's chapters by notangle: edit the book, not this file. */
#include "recase.h"
#include <stdlib.h>
#include <string.h>

/* <<recase.c definitions>> */
/* The tokenizer's lowercasing on UTF-8 bytes, in place: A-Z and U+00C0-U+00DE but U+00D7. */
static void lowercase_bytes(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p += 32;
        else if (*p == 0xC3 && p[1] >= 0x80 && p[1] <= 0x9E && p[1] != 0x97) *++p += 32;
        else if (*p == 0xC3 && p[1]) p++;
}

/* Raise the letter at s (the inverse of the above, for a-z and U+00E0-U+00FE but U+00F7);
   whether s starts with a letter or digit, which ends the search for the first word. */
static bool raise_first(char *s)
{
    unsigned char *p = (unsigned char *)s;
    if (*p >= 'a' && *p <= 'z') *p -= 32;
    else if (*p == 0xC3 && p[1] >= 0xA0 && p[1] <= 0xBE && p[1] != 0xB7) p[1] -= 32;
    else return (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
                || (*p >= 0xC3 && *p != 0xE2);   /* not Latin-1's signs, not punctuation */
    return true;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void recaser_learn(Recaser *r, const TokenizedFile *file, long lines)
{
    if (lines > file->lines) lines = file->lines;
    const long first = 0, last = file->line_start[lines];
    size_t bytes = 0;
    for (long i = first; i < last; i++) bytes += 2 * strlen(file->token[i]) + 2;
    char **vote = xmalloc((size_t)(last - first + 1) * sizeof *vote);
    char *text = xmalloc(bytes + 1), *end = text;
    long votes = 0;
    /* <<Collect a vote for each token that does not start its line>> */
    for (long line = 0; line < lines; line++)
        for (long i = file->line_start[line] + 1; i < file->line_start[line + 1]; i++) {
            const size_t n = strlen(file->token[i]);
            vote[votes++] = end;
            memcpy(end, file->token[i], n), end[n] = '\0';
            lowercase_bytes(end);
            end[n] = '\t';
            memcpy(end + n + 1, file->token[i], n + 1);
            end += 2 * n + 2;
        }
    qsort(vote, (size_t)votes, sizeof *vote, compare_strings);
    /* <<Keep each word whose winning form is not its lowercase form>> */
    memset(r, 0, sizeof *r);
    r->word = xmalloc((size_t)(votes + 1) * sizeof *r->word);
    r->form = xmalloc((size_t)(votes + 1) * sizeof *r->form);
    r->storage = xmalloc(bytes + 1);
    char *kept = r->storage;
    for (long i = 0; i < votes;) {
        const size_t n = strcspn(vote[i], "\t");   /* the word's length, and its form's */
        const char *best = NULL;
        long best_count = 0, j = i;
        while (j < votes && strncmp(vote[j], vote[i], n + 1) == 0) {
            long run = 1;
            while (j + run < votes && strcmp(vote[j + run], vote[j]) == 0) run++;
            const char *form = vote[j] + n + 1;
            if (run > best_count || (run == best_count && strncmp(form, vote[i], n) == 0))
                best = form, best_count = run;
            j += run;
        }
        if (strncmp(best, vote[i], n) != 0) {
            r->word[r->count] = memcpy(kept, vote[i], n), kept[n] = '\0', kept += n + 1;
            r->form[r->count++] = strcpy(kept, best), kept += n + 1;
        }
        i = j;
    }
    free(vote), free(text);
}

void recaser_free(Recaser *r)
{
    free(r->word), free(r->form), free(r->storage);
    memset(r, 0, sizeof *r);
}

char *recaser_text(const Recaser *r)
{
    size_t bytes = 1;
    for (int i = 0; i < r->count; i++) bytes += 2 * strlen(r->word[i]) + 2;
    char *text = xmalloc(bytes), *end = text;
    *end = '\0';
    for (int i = 0; i < r->count; i++) end += sprintf(end, "%s %s\n", r->word[i], r->form[i]);
    return text;
}

const char *recaser_read(Recaser *r, const char *text, Error *error)
{
    memset(r, 0, sizeof *r);
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    r->word = xmalloc((size_t)(lines + 1) * sizeof *r->word);
    r->form = xmalloc((size_t)(lines + 1) * sizeof *r->form);
    r->storage = strcpy(xmalloc(strlen(text) + 1), text);
    char *line = r->storage, lowered[TEXT_MAX_TOKENIZED_BYTES + 1];
    for (int n = 1; *line; n++) {
        char *newline = strchr(line, '\n'), *space = strchr(line, ' ');
        const char *problem = NULL;
        if (!newline) problem = "has no newline";
        else if (!space || space > newline || space == line) problem = "is not 'word form'";
        else {
            *newline = '\0', *space = '\0';
            snprintf(lowered, sizeof lowered, "%s", space + 1);
            lowercase_bytes(lowered);
            if (strcmp(lowered, line) != 0) problem = "has a form that is not its word";
            else if (r->count && strcmp(r->word[r->count - 1], line) >= 0)
                problem = "is out of order";
        }
        if (problem) {
            recaser_free(r);
            return error_set(error, "recaser line %d %s", n, problem);
        }
        r->word[r->count] = line, r->form[r->count++] = space + 1;
        line = newline + 1;
    }
    return NULL;
}

static int compare_word(const void *key, const void *entry)
{
    return strcmp(key, *(char *const *)entry);
}

void recase_line(const Recaser *r, char *line)
{
    bool first = true;
    for (char *token = line; *token;) {
        const size_t n = strcspn(token, " ");
        const char after = token[n];
        token[n] = '\0';
        char **found = r->count ? bsearch(token, r->word, (size_t)r->count, sizeof *r->word,
                                          compare_word) : NULL;
        if (found) memcpy(token, r->form[found - r->word], n);
        if (first && raise_first(token)) first = false;
        token[n] = after;
        token += n + (after == ' ');
    }
}
