/* The vocabulary: hashing, building, saving and loading. Generated from the book's chapters
   by notangle: edit the book, not this file. */
#include "vocab.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

/* <<vocab.c definitions>> */
const char *const vocab_specials[VOCAB_SPECIALS] = {"<s>", "</s>", "<blank>", "<unk>"};

static uint32_t token_hash(const char *token)
{
    uint32_t hash = 2166136261u;
    for (const unsigned char *b = (const unsigned char *)token; *b; b++)
        hash = (hash ^ *b) * 16777619u;
    return hash;
}

/* The slot of TOKEN: where it is, or the empty slot where it would go. */
static int vocab_slot(const Vocab *vocab, const char *token)
{
    int s = (int)(token_hash(token) & (uint32_t)(vocab->slots - 1));
    while (vocab->slot[s] && strcmp(vocab->token[vocab->slot[s] - 1], token) != 0)
        s = (s + 1) & (vocab->slots - 1);
    return s;
}

/* Fill the hash table; the index of the first token that repeats an earlier one, or
   -1. */
static int vocab_index(Vocab *vocab)
{
    for (vocab->slots = 16; vocab->slots < 2 * vocab->size; vocab->slots *= 2) {}
    vocab->slot = xmalloc((size_t)vocab->slots * sizeof *vocab->slot);
    memset(vocab->slot, 0, (size_t)vocab->slots * sizeof *vocab->slot);
    for (int i = 0; i < vocab->size; i++) {
        const int s = vocab_slot(vocab, vocab->token[i]);
        if (vocab->slot[s]) return i;
        vocab->slot[s] = i + 1;
    }
    return -1;
}

int vocab_lookup(const Vocab *vocab, const char *token)
{
    const int s = vocab_slot(vocab, token);
    return vocab->slot[s] ? vocab->slot[s] - 1 : VOCAB_UNKNOWN;
}

const char *vocab_token(const Vocab *vocab, int index)
{
    ENSURE(index >= 0 && index < vocab->size, "token index %d of a vocabulary of %d",
           index, vocab->size);
    return vocab->token[index];
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    const char *token;
    long count;
} TokenCount;

static int more_frequent_first(const void *a, const void *b)
{
    const TokenCount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->token, y->token);
}

void vocab_build(Vocab *vocab, char *const *tokens, long count, int min_frequency)
{
    ENSURE(count >= 0 && min_frequency >= 1, "count %ld, min_frequency %d", count,
           min_frequency);
    memset(vocab, 0, sizeof *vocab);
    char **sorted = xmalloc((size_t)count * sizeof *sorted);
    if (count > 0) memcpy(sorted, tokens, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_strings);
    TokenCount *kept = xmalloc((size_t)count * sizeof *kept);
    long n_kept = 0;
    size_t bytes = 0;
    /* <<Count the runs of equal tokens and keep the frequent ones>> */
    for (long i = 0, run; i < count; i += run) {
        for (run = 1; i + run < count && strcmp(sorted[i], sorted[i + run]) == 0; run++) {}
        vocab->types++;
        bool special = false;
        for (int k = 0; k < VOCAB_SPECIALS; k++)
            special = special || strcmp(sorted[i], vocab_specials[k]) == 0;
        if (run < min_frequency || special) continue;
        kept[n_kept++] = (TokenCount){sorted[i], run};
        bytes += strlen(sorted[i]) + 1;
    }
    qsort(kept, (size_t)n_kept, sizeof *kept, more_frequent_first);
    ENSURE(n_kept <= INT32_MAX / 4, "a vocabulary of %ld tokens", n_kept);
    vocab->size = (int)n_kept + VOCAB_SPECIALS;
    vocab->token = xmalloc((size_t)vocab->size * sizeof *vocab->token);
    vocab->storage = xmalloc(bytes + 32);   /* 32: the specials */
    char *next = vocab->storage;
    for (int i = 0; i < vocab->size; i++) {
        const char *token = i < VOCAB_SPECIALS ? vocab_specials[i]
                                               : kept[i - VOCAB_SPECIALS].token;
        vocab->token[i] = strcpy(next, token);
        next += strlen(token) + 1;
    }
    ENSURE(vocab_index(vocab) < 0, "a vocabulary with a repeated token");
    free(sorted), free(kept);
}

const char *vocab_save(Vocab *vocab, const char *path)
{
    FILE *out = fopen(path, "w");
    bool written = out != NULL;
    for (int i = 0; written && i < vocab->size; i++)
        written = fputs(vocab->token[i], out) >= 0 && fputc('\n', out) != EOF;
    if (out && fclose(out) != 0) written = false;
    if (written) return NULL;
    return error_set(&vocab->error, "cannot write %s: %s", path, strerror(errno));
}

const char *vocab_load(Vocab *vocab, const char *path)
{
    memset(vocab, 0, sizeof *vocab);
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        return error_set(&vocab->error, "cannot open %s: %s", path, strerror(errno));
    }
    const char *problem = vocab_read(vocab, in, path);
    fclose(in);
    return problem;
}

const char *vocab_read(Vocab *vocab, FILE *in, const char *path)
{
    memset(vocab, 0, sizeof *vocab);
    LineReader reader = {0};
    size_t bytes = 0, byte_capacity = 0, token_capacity = 0;
    long length;
    const char *problem = NULL;
    while (problem == NULL && (length = read_line(in, &reader)) >= 0) {
        /* <<Check one line of a vocabulary file>> */
        char complaint[sizeof vocab->error.message] = "";
        if (length == 0) strcpy(complaint, "an empty line");
        else if (strpbrk(reader.text, " \t\r")) strcpy(complaint, "a token with a blank in it");
        else if (memchr(reader.text, '\0', (size_t)length)) strcpy(complaint, "a NUL byte");
        else if (length > TEXT_MAX_LINE_BYTES) strcpy(complaint, "a token over 1000 bytes");
        else if (utf8_check(reader.text, (size_t)length, complaint, sizeof complaint)) {}
        else if (vocab->size < VOCAB_SPECIALS && strcmp(reader.text, vocab_specials[vocab->size]))
            snprintf(complaint, sizeof complaint, "expected the special token %s",
                     vocab_specials[vocab->size]);
        else if (vocab->size == INT32_MAX / 4) strcpy(complaint, "too many tokens");
        if (complaint[0]) problem = located(&vocab->error, path, reader.number, complaint);
        if (problem) break;
        vocab->storage = xgrow(vocab->storage, &byte_capacity, bytes + (size_t)length + 1,
                              1);
        vocab->token = xgrow(vocab->token, &token_capacity, (size_t)vocab->size + 1,
                            sizeof *vocab->token);
        memcpy(vocab->storage + bytes, reader.text, (size_t)length + 1);
        vocab->token[vocab->size++] = (char *)bytes;   /* an offset for now */
        bytes += (size_t)length + 1;
    }
    if (problem == NULL && ferror(in))
        problem = located(&vocab->error, path, reader.number + 1, strerror(errno));
    if (problem == NULL && vocab->size < VOCAB_SPECIALS)
        problem = located(&vocab->error, path, reader.number + 1,
                          "the four special tokens are missing");
    free(reader.text);
    for (int i = 0; i < vocab->size; i++)
        vocab->token[i] = vocab->storage + (size_t)vocab->token[i];
    int repeated;
    if (problem == NULL && (repeated = vocab_index(vocab)) >= 0)
        problem = located(&vocab->error, path, repeated + 1,
                          "a token that is already listed");
    /* <<Note whether the vocabulary's tokens are subwords>> */
    for (int i = VOCAB_SPECIALS; problem == NULL && i < vocab->size; i++)
        vocab->subwords = vocab->subwords || vocab_continues_word(vocab->token[i]);
    return problem;
}

void vocab_free(Vocab *vocab)
{
    free(vocab->token), free(vocab->storage), free(vocab->slot);
    /* <<Free the vocabulary's recaser>> */
    recaser_free(&vocab->cases);
    vocab->token = NULL, vocab->storage = NULL, vocab->slot = NULL;
    vocab->size = vocab->slots = 0;
}

bool vocab_continues_word(const char *token)
{
    const size_t n = strlen(token);
    return n > 2 && strcmp(token + n - 2, "@@") == 0;
}

int vocab_encode(const Vocab *vocab, const char *word, int *ids, int max_ids)
{
    const size_t length = strlen(word);
    if (max_ids <= 0) return 0;
    if (!vocab->subwords || length > TEXT_MAX_LINE_BYTES) {
        ids[0] = vocab_lookup(vocab, word);
        return 1;
    }
    char piece[TEXT_MAX_LINE_BYTES + 3];
    int n = 0;
    for (size_t start = 0; start < length && n < max_ids;) {
        size_t end = length;
        int id = VOCAB_UNKNOWN;
        /* <<Find the longest token word[start .. end) that starts the rest of the word>> */
        for (; end > start; end--) {
            if (((unsigned char)word[end] & 0xC0) == 0x80) continue;   /* inside a character */
            memcpy(piece, word + start, end - start);
            strcpy(piece + (end - start), end < length ? "@@" : "");
            if ((id = vocab_lookup(vocab, piece)) >= VOCAB_SPECIALS) break;   /* not a special */
        }
        if (end == start) {
            id = VOCAB_UNKNOWN;
            for (end = start + 1; ((unsigned char)word[end] & 0xC0) == 0x80; end++) {}
        }
        ids[n++] = id;
        start = end;
    }
    return n;
}

size_t vocab_join_subwords(char *text, size_t length)
{
    size_t kept = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] == '@' && i + 1 < length && text[i + 1] == '@'
            && (i + 2 == length || text[i + 2] == ' ')) {
            i += 2;   /* the mark and its space */
            continue;
        }
        text[kept++] = text[i];
    }
    text[kept] = '\0';
    return kept;
}

/* The index of TEXT among the symbols, added if new; the table has room for all. */
static int symbol_number(Vocab *symbols, const char *text)
{
    const int s = vocab_slot(symbols, text);
    if (symbols->slot[s] == 0) {
        const size_t n = strlen(text) + 1;
        symbols->token[symbols->size] = memcpy(xmalloc(n), text, n);
        symbols->slot[s] = ++symbols->size;
    }
    return symbols->slot[s] - 1;
}

typedef struct {
    int left, right;   /* symbol numbers */
    long frequency;
} SymbolPair;

typedef struct {
    SymbolPair *pair;
    int count;
    size_t capacity;
    int *slot, slots;   /* a place + 1, or 0 */
} PairTable;

static int pair_slot(const PairTable *table, int left, int right)
{
    uint32_t hash = ((uint32_t)left * 2654435761u) ^ ((uint32_t)right * 40503u + 0x9E3779B9u);
    int s = (int)(hash & (uint32_t)(table->slots - 1));
    while (table->slot[s]) {
        const SymbolPair *p = &table->pair[table->slot[s] - 1];
        if (p->left == left && p->right == right) break;
        s = (s + 1) & (table->slots - 1);
    }
    return s;
}

/* Add frequency (negative to take away) to the pair (left, right), entering it if new. */
static void pair_add(PairTable *table, int left, int right, long frequency)
{
    if (2 * (table->count + 1) > table->slots) {   /* rebuild the hash table, twice the size */
        free(table->slot);
        table->slots = table->slots ? 2 * table->slots : 1024;
        table->slot = xmalloc((size_t)table->slots * sizeof *table->slot);
        memset(table->slot, 0, (size_t)table->slots * sizeof *table->slot);
        for (int i = 0; i < table->count; i++)
            table->slot[pair_slot(table, table->pair[i].left, table->pair[i].right)] = i + 1;
    }
    const int s = pair_slot(table, left, right);
    if (table->slot[s] == 0) {
        table->pair = xgrow(table->pair, &table->capacity, (size_t)table->count + 1,
                            sizeof *table->pair);
        table->pair[table->count] = (SymbolPair){left, right, 0};
        table->slot[s] = ++table->count;
    }
    table->pair[table->slot[s] - 1].frequency += frequency;
}

typedef struct {
    const char *text;
    long count;      /* occurrences in the text */
    int *symbol;     /* symbol[0 .. length) */
    int length;
} WordType;

static void add_pairs(PairTable *pairs, const WordType *type, long sign)
{
    for (int i = 0; i + 1 < type->length; i++)
        pair_add(pairs, type->symbol[i], type->symbol[i + 1], sign * type->count);
}

/* <<Merge the most frequent pair until there are size symbols>> */
/* Merge the most frequent pair until there are size symbols: each merge adds a symbol to
   symbols, rewrites the types[0 .. n_types) that contain the pair, and updates pairs. */
static void merge_pairs(Vocab *symbols, PairTable *pairs, WordType *types, long n_types,
                        int size)
{
    while (symbols->size < size) {
        int best = -1;
        for (int p = 0; p < pairs->count; p++)
            if (best < 0 || pairs->pair[p].frequency > pairs->pair[best].frequency) best = p;
        if (best < 0 || pairs->pair[best].frequency < 2) break;
        const int left = pairs->pair[best].left, right = pairs->pair[best].right;
        char merged[2 * TEXT_MAX_LINE_BYTES + 8];
        const size_t n = strlen(symbols->token[left]) - 2;   /* without its @@ */
        memcpy(merged, symbols->token[left], n);
        strcpy(merged + n, symbols->token[right]);
        const int symbol = symbol_number(symbols, merged);
        for (long t = 0; t < n_types; t++) {
            WordType *type = &types[t];
            int i = 0;
            while (i + 1 < type->length
                   && !(type->symbol[i] == left && type->symbol[i + 1] == right))
                i++;
            if (i + 1 >= type->length) continue;
            add_pairs(pairs, type, -1);
            int kept = 0;
            for (i = 0; i < type->length; i++)
                if (i + 1 < type->length && type->symbol[i] == left
                    && type->symbol[i + 1] == right)
                    type->symbol[kept++] = symbol, i++;
                else
                    type->symbol[kept++] = type->symbol[i];
            type->length = kept;
            add_pairs(pairs, type, +1);
        }
    }
}

void vocab_learn_subwords(Vocab *vocab, char *const *tokens, long count, int size)
{
    ENSURE(count >= 0 && size >= VOCAB_SPECIALS, "count %ld, size %d", count, size);
    /* <<Find the word types and their counts>> */
    char **sorted = xmalloc((size_t)(count > 0 ? count : 1) * sizeof *sorted);
    if (count > 0) memcpy(sorted, tokens, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_strings);
    WordType *types = xmalloc((size_t)(count > 0 ? count : 1) * sizeof *types);
    long n_types = 0, characters = 0;
    for (long i = 0, run; i < count; i += run) {
        for (run = 1; i + run < count && strcmp(sorted[i], sorted[i + run]) == 0; run++) {}
        types[n_types++] = (WordType){.text = sorted[i], .count = run};
        characters += (long)strlen(sorted[i]);
        ENSURE(strlen(sorted[i]) <= TEXT_MAX_LINE_BYTES, "a token of %zu bytes", strlen(sorted[i]));
    }
    /* <<Make a table of symbols with room for every character and every merge>> */
    Vocab symbols = {0};
    const long most_symbols = VOCAB_SPECIALS + characters + size;
    ENSURE(most_symbols < INT32_MAX / 4, "%ld symbols", most_symbols);
    for (symbols.slots = 16; symbols.slots < 2 * most_symbols; symbols.slots *= 2) {}
    symbols.slot = xmalloc((size_t)symbols.slots * sizeof *symbols.slot);
    memset(symbols.slot, 0, (size_t)symbols.slots * sizeof *symbols.slot);
    symbols.token = xmalloc((size_t)most_symbols * sizeof *symbols.token);
    for (int k = 0; k < VOCAB_SPECIALS; k++) {
        symbols.token[k] = (char *)vocab_specials[k];
        symbols.slot[vocab_slot(&symbols, vocab_specials[k])] = ++symbols.size;
    }
    /* <<Write each type as its characters, all but the last marked>> */
    int *row_symbols = xmalloc((size_t)(characters > 0 ? characters : 1) * sizeof *row_symbols);
    long used = 0;
    for (long t = 0; t < n_types; t++) {
        const char *text = types[t].text;
        types[t].symbol = row_symbols + used;
        for (size_t i = 0, n; text[i]; i += n) {
            char character[8];
            for (n = 1; n < 4 && ((unsigned char)text[i + n] & 0xC0) == 0x80; n++) {}
            memcpy(character, text + i, n);
            strcpy(character + n, text[i + n] ? "@@" : "");
            types[t].symbol[types[t].length++] = symbol_number(&symbols, character);
        }
        used += types[t].length;
    }
    PairTable pairs = {0};
    for (long t = 0; t < n_types; t++) add_pairs(&pairs, &types[t], +1);
    merge_pairs(&symbols, &pairs, types, n_types, size);
    /* <<Make the vocabulary of the pieces the greedy cut makes of the text>> */
    symbols.subwords = true;
    size_t piece_capacity = 0;
    char **pieces = NULL;
    long n_pieces = 0;
    for (long i = 0; i < count; i++) {
        int ids[TEXT_MAX_LINE_BYTES];
        const int n = vocab_encode(&symbols, tokens[i], ids, TEXT_MAX_LINE_BYTES);
        pieces = xgrow(pieces, &piece_capacity, (size_t)(n_pieces + n), sizeof *pieces);
        for (int k = 0; k < n; k++) pieces[n_pieces++] = symbols.token[ids[k]];
    }
    vocab_build(vocab, pieces, n_pieces, 1);
    vocab->subwords = true;
    free(pieces);
    for (int i = VOCAB_SPECIALS; i < symbols.size; i++) free(symbols.token[i]);
    free(symbols.token), free(symbols.slot), free(pairs.pair), free(pairs.slot);
    free(types), free(row_symbols), free(sorted);
}

void vocab_copy(Vocab *copy, const Vocab *vocab)
{
    memset(copy, 0, sizeof *copy);
    size_t bytes = 0;
    for (int i = 0; i < vocab->size; i++) bytes += strlen(vocab->token[i]) + 1;
    copy->storage = xmalloc(bytes + 1);
    copy->token = xmalloc((size_t)(vocab->size > 0 ? vocab->size : 1) * sizeof *copy->token);
    char *next = copy->storage;
    for (int i = 0; i < vocab->size; i++) {
        copy->token[i] = strcpy(next, vocab->token[i]);
        next += strlen(next) + 1;
    }
    copy->size = vocab->size, copy->types = vocab->types, copy->subwords = vocab->subwords;
    vocab_index(copy);
}

int vocab_number_sentence(int *ids, char *text, const Vocab *vocab, int max_tokens)
{
    int n = 0;
    ids[n++] = VOCAB_START;
    for (char *token = strtok(text, " "); token && n < max_tokens - 1;
         token = strtok(NULL, " "))
        n += vocab_encode(vocab, token, ids + n, max_tokens - 1 - n);
    ids[n++] = VOCAB_END;
    return n;
}
