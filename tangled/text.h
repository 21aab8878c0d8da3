/* Text to tokens, and tokens to integers. Generated from the book's chapters by notangle:
   edit the book, not this file. */
#ifndef TEXT_H
#define TEXT_H
#include <stdio.h>
#include "tensor.h"

/* <<text.h declarations>> */
enum {
    TEXT_MAX_LINE_BYTES = 1000,                          /* a raw line, without newline */
    TEXT_MAX_TOKENIZED_BYTES = 2 * TEXT_MAX_LINE_BYTES   /* its tokens and their spaces */
};
typedef enum { TEXT_ENGLISH, TEXT_GERMAN } TextLanguage;
typedef struct {
    TextLanguage language;
    bool lowercase;
} TextOptions;

/* The result of tokenizing or detokenizing one line. */
typedef struct {
    char text[TEXT_MAX_TOKENIZED_BYTES + 1];   /* tokens separated by single spaces */
    int count;                                 /* how many tokens */
    Error error;                               /* why the line was refused */
    bool blank;                                /* refused only for having no tokens */
} TextLine;

/* Tokenize line[0..length), one line of text without its newline, into result->text.
   NULL on success, else a one-line message in result->error, which the caller prefixes
   with the file and line number. */
const char *tokenize_line(TextOptions options, const char *line, size_t length,
                          TextLine *result);

typedef struct {
    char *text;
    size_t capacity;
    long number;   /* of the line last read, from 1 */
} LineReader;

/* Read the next line of IN without its end (LF, CR LF or CR): its length, or -1 at the end
   of the input or at a read error (ferror(in) tells which). Free reader->text at the end. */
long read_line(FILE *in, LineReader *reader);
/* "NAME:LINE: message" in error, the start of a name too long to fit; return the message. */
const char *located(Error *error, const char *name, long line, const char *message);

typedef struct {
    int capacity, count;    /* lines it holds; lines the last fill read */
    long first;             /* the number of the last fill's first line, from 1 */
    LineReader *readers;    /* [capacity]: a buffer a line */
    char **lines;           /* [capacity]: the lines, without their ends */
    size_t *sizes;          /* [capacity]: their bytes */
    long *cut_from;         /* [capacity]: a line's bytes before the fill cut it; 0: not cut */
} LineWindow;

void line_window_init(LineWindow *window, int capacity);
/* Read the next lines of IN into the window, up to its capacity, cutting each line of more
   than max_bytes to at most max_bytes at the start of a character: the lines read, 0 at the
   end of the input, -1 at a read error. */
int line_window_fill(LineWindow *window, FILE *in, size_t max_bytes);
void line_window_free(LineWindow *window);

typedef struct {
    long lines, count;  /* lines read and tokens in them */
    char **token;       /* token[0 .. count): NUL-terminated */
    long *line_start;   /* line l has token[line_start[l] .. line_start[l + 1]) */
    char *storage;      /* the tokens' text */
    Error error;
} TokenizedFile;

/* Tokenize every line of the file at PATH. NULL on success, else "PATH:LINE: message" in
   file->error, with nothing else left allocated. */
const char *tokenize_file(const char *path, TextOptions options, TokenizedFile *file);
/* Free the file's tokens; its error stays to be read. */
void tokenized_file_free(TokenizedFile *file);

typedef struct {
    long lines, identical;
    Error error;
} Agreement;

/* Tokenize each line of RAW and compare its tokens with the same line of REFERENCE, the
   output of the Moses tokenizer (its XML escapes undone, its spacing ignored). The lines
   that differ are printed to DIFFERENCES unless it is NULL. NULL, or "NAME:LINE: ...". */
const char *tokenization_agreement(FILE *raw, const char *raw_name, FILE *reference,
                                   const char *reference_name, TextOptions options,
                                   FILE *differences, Agreement *result);

/* Join the tokens of line[0..length) back into text ("a dog ." -> "a dog."). NULL on
   success, else a one-line message in result->error. */
const char *detokenize_line(TextLanguage language, const char *line, size_t length,
                            TextLine *result);
#endif
