/* Corpus BLEU and its tokenizer, computed as sacreBLEU does -- generated from the book's
   chapters by notangle: edit the book, not this file. */
#include "bleu.h"
#include <stdlib.h>
#include <string.h>
/* <<bleu.c includes>> */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <wctype.h>
#include "utf8.h"
#include <stdint.h>

/* <<bleu.c definitions>> */
typedef struct {
    char *text;           /* NUL-terminated; NULL while empty */
    size_t length, capacity;
} TextBuffer;

static void text_put(TextBuffer *t, const char *bytes, size_t n)
{
    if (t->length + n + 1 > t->capacity)   /* most puts fit: no call */
        t->text = xgrow(t->text, &t->capacity, t->length + n + 1, 1);
    memcpy(t->text + t->length, bytes, n);
    t->length += n;
    t->text[t->length] = '\0';
}

static char *text_finish(TextBuffer *t)   /* the text, "" if nothing was put */
{
    if (t->text == NULL) text_put(t, "", 0);
    return t->text;
}

static char *replace_all(char *line, const char *from, const char *to)
{
    TextBuffer out = {0};
    size_t from_length = strlen(from), to_length = strlen(to);
    const char *rest = line;
    for (const char *hit; (hit = strstr(rest, from)) != NULL; rest = hit + from_length) {
        text_put(&out, rest, (size_t)(hit - rest));
        text_put(&out, to, to_length);
    }
    text_put(&out, rest, strlen(rest));
    free(line);
    return text_finish(&out);
}

static bool is_13a_symbol(unsigned char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&')
        || (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

static char *pad_symbols(char *line)
{
    TextBuffer out = {0};
    const char *padded[] = {" ", line, " "};
    for (int part = 0; part < 3; part++) {
        const char *copied = padded[part];   /* [copied, c) is unchanged and not yet written */
        const char *c = copied;
        for (; *c; c++)
            if (is_13a_symbol((unsigned char)*c)) {
                const char around[3] = {' ', *c, ' '};
                text_put(&out, copied, (size_t)(c - copied));
                text_put(&out, around, 3);
                copied = c + 1;
            }
        text_put(&out, copied, (size_t)(c - copied));
    }
    free(line);
    return text_finish(&out);
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_not_digit(unsigned char c) { return !is_digit(c); }
static bool is_period_or_comma(unsigned char c) { return c == '.' || c == ','; }
static bool is_hyphen(unsigned char c) { return c == '-'; }

typedef struct {
    bool (*first)(unsigned char), (*second)(unsigned char);
    const char *before, *between, *after;
} PairRule;

static const PairRule pair_rules[3] = {
    {is_not_digit, is_period_or_comma, "", " ", " "},   /* ([^0-9])([\.,]) -> \1 \2  */
    {is_period_or_comma, is_not_digit, " ", " ", ""},   /* ([\.,])([^0-9]) ->  \1 \2 */
    {is_digit, is_hyphen, "", " ", " "},                /* ([0-9])(-)      -> \1 \2  */
};

static char *apply_pair_rule(char *line, const PairRule *rule)
{
    TextBuffer out = {0};
    size_t copied = 0;   /* line[copied..i) is unchanged and not yet written */
    size_t i = 0;
    while (line[i]) {
        const unsigned char a = (unsigned char)line[i], b = (unsigned char)line[i + 1];
        if (b != '\0' && rule->first(a) && rule->second(b)) {
            text_put(&out, line + copied, i - copied);
            text_put(&out, rule->before, strlen(rule->before));
            text_put(&out, line + i, 1);
            text_put(&out, rule->between, strlen(rule->between));
            text_put(&out, line + i + 1, 1);
            text_put(&out, rule->after, strlen(rule->after));
            copied = i += 2;
        } else i++;
    }
    text_put(&out, line + copied, i - copied);
    free(line);
    return text_finish(&out);
}

static uint32_t character_at(const char *text, int *length)
{
    if ((unsigned char)text[0] < 0x80) return *length = 1, (unsigned char)text[0];
    uint32_t c;
    const char *problem;
    *length = utf8_decode(text, strnlen(text, 4), &c, &problem);
    if (problem) *length = 1, c = (unsigned char)text[0];
    return c;
}

static bool python_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0
        || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029
        || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Python's ' '.join(line.split()): split at Unicode whitespace, join with one space. */
static char *join_words(char *line)
{
    TextBuffer out = {0};
    bool gap = false;
    for (const char *p = line; *p; ) {
        int length;
        if (python_space(character_at(p, &length))) gap = true;
        else {
            if (gap && out.length > 0) text_put(&out, " ", 1);
            text_put(&out, p, (size_t)length);
            gap = false;
        }
        p += length;
    }
    free(line);
    return text_finish(&out);
}

char *bleu_tokenize_13a(const char *line)
{
    TextBuffer copy = {0};
    text_put(&copy, line, strlen(line));
    char *s = text_finish(&copy);
    s = replace_all(s, "<skipped>", "");
    s = replace_all(s, "-\n", "");
    s = replace_all(s, "\n", " ");
    if (strchr(s, '&')) {
        s = replace_all(s, "&quot;", "\"");
        s = replace_all(s, "&amp;", "&");
        s = replace_all(s, "&lt;", "<");
        s = replace_all(s, "&gt;", ">");
    }
    s = pad_symbols(s);
    for (int r = 0; r < 3; r++) s = apply_pair_rule(s, &pair_rules[r]);
    return join_words(s);
}

static bool case_ignorable(uint32_t c)
{
    static const uint32_t ranges[][2] = {
        {0x27, 0x27}, {0x2E, 0x2E}, {0x3A, 0x3A}, {0x5E, 0x5E}, {0x60, 0x60},
        {0xA8, 0xA8}, {0xAD, 0xAD}, {0xAF, 0xAF}, {0xB4, 0xB4}, {0xB7, 0xB8},
        {0x2B0, 0x36F}, {0x374, 0x375}, {0x37A, 0x37A}, {0x384, 0x385}, {0x387, 0x387},
        {0x1D2C, 0x1D6A}, {0x1D78, 0x1D78}, {0x1D9B, 0x1DFF}, {0x1FBD, 0x1FBD},
        {0x1FBF, 0x1FC1}, {0x1FCD, 0x1FCF}, {0x1FDD, 0x1FDF}, {0x1FED, 0x1FEF},
        {0x1FFD, 0x1FFE}, {0x200B, 0x200F}, {0x2018, 0x2019}, {0x2024, 0x2024},
        {0x2027, 0x2027}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F},
        {0x2071, 0x2071}, {0x207F, 0x207F}, {0x2090, 0x209C}, {0x20D0, 0x20F0},
        {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i][0] && c <= ranges[i][1]) return true;
    return false;
}

static bool is_cased(uint32_t c, locale_t utf8)
{
    const wint_t w = (wint_t)c;
    return towlower_l(w, utf8) != w || towupper_l(w, utf8) != w || iswlower_l(w, utf8)
        || iswupper_l(w, utf8);
}

static locale_t utf8_locale(void)   /* (locale_t)0 if the system has none */
{
    static locale_t utf8 = (locale_t)0;
    if (utf8 == (locale_t)0) utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    return utf8;
}

const char *bleu_lowercase_ready(Error *error)
{
    if (utf8_locale() != (locale_t)0) return NULL;
    return error_set(error, "cannot lowercase: no C.UTF-8 locale (%s)", strerror(errno));
}

char *bleu_lowercase(const char *line)
{
    const locale_t utf8 = utf8_locale();
    ENSURE(utf8 != (locale_t)0, "no C.UTF-8 locale (bleu_lowercase_ready says so)");
    const size_t bytes = strlen(line);
    uint32_t *c = xmalloc((bytes + 1) * sizeof *c);
    size_t n = 0;
    for (const char *p = line; *p; n++) {
        int length;
        c[n] = character_at(p, &length);
        p += length;
    }
    TextBuffer out = {0};
    for (size_t i = 0; i < n; i++) {
        char encoded[8];
        int length;
        if (c[i] == 0x130) length = utf8_encode('i', encoded)
                                    + utf8_encode(0x307, encoded + 1);
        else if (c[i] == 0x3A3) {
            /* <<Choose final or medial sigma>> */
            size_t before = i, after = i + 1;
            while (before > 0 && case_ignorable(c[before - 1])) before--;
            while (after < n && case_ignorable(c[after])) after++;
            const bool final = before > 0 && is_cased(c[before - 1], utf8)
                               && !(after < n && is_cased(c[after], utf8));
            length = utf8_encode(final ? 0x3C2 : 0x3C3, encoded);
        } else length = utf8_encode((uint32_t)towlower_l((wint_t)c[i], utf8), encoded);
        text_put(&out, encoded, (size_t)length);
    }
    free(c);
    return text_finish(&out);
}

char *bleu_preprocess(const char *line, bool lowercase)
{
    char *s = lowercase ? bleu_lowercase(line) : strcpy(xmalloc(strlen(line) + 1), line);
    size_t end = 0;   /* Python's rstrip(): cut after the last non-space character */
    for (size_t i = 0; s[i]; ) {
        int length;
        if (!python_space(character_at(s + i, &length))) end = i + (size_t)length;
        i += (size_t)length;
    }
    s[end] = '\0';
    char *words = bleu_tokenize_13a(s);
    free(s);
    return words;
}

typedef struct {
    char *line;        /* the preprocessed line, which the word table's words point into */
    uint32_t *ids;     /* its words as ids */
    size_t count;
} Words;

typedef struct {
    const char *text;            /* NULL: an empty slot */
    size_t length;
    uint64_t hash;               /* hash_word(text, length) */
    uint32_t id;
} WordSlot;

typedef struct {
    WordSlot *slot;
    size_t mask;                 /* the number of slots less one: a power of two less one */
    uint32_t count;              /* words seen, the next id */
} WordTable;

/* FNV-1a over a word's bytes and then its length. */
static uint64_t hash_word(const char *text, size_t length)
{
    uint64_t h = 14695981039346656037u;   /* FNV-1a's offset basis and prime */
    for (size_t i = 0; i < length; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211u;
    return (h ^ length) * 1099511628211u;
}

static WordTable word_table_new(size_t size)   /* SIZE: a power of two */
{
    WordTable words = {xmalloc(size * sizeof *words.slot), size - 1, 0};
    memset(words.slot, 0, size * sizeof *words.slot);
    return words;
}

static WordSlot *word_slot(const WordTable *words, const char *text, size_t length, uint64_t h)
{
    for (size_t i = h & words->mask;; i = (i + 1) & words->mask) {
        WordSlot *slot = &words->slot[i];
        if (!slot->text) return slot;
        if (slot->hash == h && slot->length == length && memcmp(slot->text, text, length) == 0)
            return slot;
    }
}

static void word_table_grow(WordTable *words)
{
    WordTable bigger = word_table_new(2 * (words->mask + 1));
    for (size_t i = 0; i <= words->mask; i++) {
        const WordSlot *old = &words->slot[i];
        if (old->text) *word_slot(&bigger, old->text, old->length, old->hash) = *old;
    }
    bigger.count = words->count;
    free(words->slot);
    *words = bigger;
}

static uint32_t word_id(WordTable *words, const char *text, size_t length)
{
    const uint64_t h = hash_word(text, length);
    WordSlot *slot = word_slot(words, text, length, h);
    if (slot->text) return slot->id;
    *slot = (WordSlot){text, length, h, words->count++};
    if (2 * (size_t)words->count > words->mask) word_table_grow(words);
    return words->count - 1;
}

static Words words_of(const char *sentence, bool lowercase, WordTable *words_seen)
{
    Words w = {bleu_preprocess(sentence, lowercase), NULL, 0};
    size_t spaces = 0;
    for (const char *p = w.line; *p; p++) spaces += *p == ' ';
    w.ids = xmalloc((spaces + 1) * sizeof *w.ids);
    for (const char *p = w.line; *p; ) {
        const size_t length = strcspn(p, " ");
        w.ids[w.count++] = word_id(words_seen, p, length);
        p += length + (p[length] == ' ');
    }
    return w;
}

typedef struct {
    uint32_t check;              /* the hash's high half */
    uint32_t start;              /* 1 + its first position in the hypothesis; 0: empty */
} NGramSlot;

typedef struct { uint32_t in_hypothesis, in_reference, most; } NGramCount;

typedef struct {
    NGramSlot *slot;
    size_t mask;                 /* the number of slots less one */
    const uint32_t *hypothesis;  /* the hypothesis's ids, where the slots' starts point */
    int n;                       /* the order */
} NGramTable;

static uint64_t hash_ngram(const uint32_t *ids, int n)
{
    uint64_t h = 0;
    for (int k = 0; k < n; k++) {
        h = (h ^ ids[k]) * 0x9E3779B97F4A7C15u;   /* 2^64 divided by the golden ratio */
        h ^= h >> 32;
    }
    return h;
}

static bool same_ids(const uint32_t *a, const uint32_t *b, int n)
{
    for (int k = 0; k < n; k++)
        if (a[k] != b[k]) return false;
    return true;
}

/* An empty table with room for COUNT n-grams at most half full. */
static NGramTable ngram_table(size_t count)
{
    size_t size = 2;
    while (size < 2 * count) size *= 2;
    return (NGramTable){xmalloc(size * sizeof(NGramSlot)), size - 1, NULL, 0};
}

/* The slot of the n-gram IDS[0..n-1]: its own, or the empty slot where it belongs. */
static NGramSlot *ngram_slot(const NGramTable *t, const uint32_t *ids)
{
    const uint64_t h = hash_ngram(ids, t->n);
    const uint32_t check = (uint32_t)(h >> 32);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        NGramSlot *slot = &t->slot[i];
        if (slot->start == 0) return slot->check = check, slot;
        if (slot->check == check && same_ids(t->hypothesis + slot->start - 1, ids, t->n))
            return slot;
    }
}

void bleu_add_segment(BleuStats *stats, const char *hypothesis,
                      const char *const *references, int n_refs, bool lowercase)
{
    ENSURE(n_refs >= 1, "a segment needs a reference, got %d", n_refs);
    WordTable words_seen = word_table_new(64);
    Words hyp = words_of(hypothesis, lowercase, &words_seen);
    Words *refs = xmalloc((size_t)n_refs * sizeof *refs);
    for (int r = 0; r < n_refs; r++) refs[r] = words_of(references[r], lowercase, &words_seen);
    /* <<Add the hypothesis length and the closest reference length>> */
    size_t closest = 0, closest_distance = SIZE_MAX;
    for (int r = 0; r < n_refs; r++) {
        const size_t len = refs[r].count;
        const size_t distance = len > hyp.count ? len - hyp.count : hyp.count - len;
        if (distance < closest_distance || (distance == closest_distance && len < closest))
            closest = len, closest_distance = distance;
    }
    stats->hyp_len += (long long)hyp.count;
    stats->ref_len += (long long)closest;
    NGramTable table = ngram_table(hyp.count);   /* one table, emptied for each order */
    table.hypothesis = hyp.ids;
    NGramCount *counts = xmalloc((hyp.count + 1) * sizeof *counts);
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        /* <<Add the clipped matches of order n>> */
        const size_t hyp_count = hyp.count >= (size_t)n ? hyp.count - (size_t)n + 1 : 0;
        table.n = n;
        memset(table.slot, 0, (table.mask + 1) * sizeof *table.slot);
        memset(counts, 0, hyp_count * sizeof *counts);
        for (size_t i = 0; i < hyp_count; i++) {
            NGramSlot *slot = ngram_slot(&table, hyp.ids + i);
            if (slot->start == 0) slot->start = (uint32_t)i + 1;
            counts[slot->start - 1].in_hypothesis++;
        }
        for (int r = 0; r < n_refs; r++) {
            const size_t count = refs[r].count >= (size_t)n ? refs[r].count - (size_t)n + 1 : 0;
            for (size_t i = 0; i < count; i++) {
                const NGramSlot *slot = ngram_slot(&table, refs[r].ids + i);
                if (slot->start != 0) counts[slot->start - 1].in_reference++;   /* else: no use */
            }
            for (size_t i = 0; i < hyp_count; i++) {
                if (counts[i].in_reference > counts[i].most) counts[i].most = counts[i].in_reference;
                counts[i].in_reference = 0;
            }
        }
        stats->total[n - 1] += (long long)hyp_count;
        for (size_t i = 0; i < hyp_count; i++)
            stats->correct[n - 1] += (long long)(counts[i].in_hypothesis < counts[i].most
                                                 ? counts[i].in_hypothesis : counts[i].most);
    }
    free(table.slot), free(counts), free(words_seen.slot);
    for (int r = 0; r < n_refs; r++) free(refs[r].line), free(refs[r].ids);
    free(hyp.line), free(hyp.ids), free(refs);
}

BleuScore bleu_compute(const BleuStats *stats, bool effective_order)
{
    BleuScore s = {.score = 0.0, .bp = 1.0, .stats = *stats};
    if (stats->hyp_len < stats->ref_len)
        s.bp = stats->hyp_len > 0
             ? exp(1.0 - (double)stats->ref_len / (double)stats->hyp_len) : 0.0;
    s.ratio = stats->ref_len > 0 ? (double)stats->hyp_len / (double)stats->ref_len : 0.0;
    bool any_match = false;
    for (int n = 0; n < BLEU_MAX_ORDER; n++)
        any_match = any_match || stats->correct[n] > 0;
    if (!any_match) return s;
    /* <<Compute the smoothed precisions and the order to average>> */
    double smooth = 1.0;
    int order = BLEU_MAX_ORDER;
    for (int n = 0; n < BLEU_MAX_ORDER; n++) {
        if (stats->total[n] == 0) break;
        if (effective_order) order = n + 1;
        if (stats->correct[n] == 0) {
            smooth *= 2.0;
            s.precisions[n] = 100.0 / (smooth * (double)stats->total[n]);
        } else s.precisions[n] = 100.0 * (double)stats->correct[n] / (double)stats->total[n];
    }
    double log_sum = 0.0;
    for (int n = 0; n < order; n++)
        log_sum += s.precisions[n] > 0.0 ? log(s.precisions[n]) : -9999999999.0;
    s.score = s.bp * exp(log_sum / order);
    return s;
}

BleuScore bleu_corpus(const char *const *hypotheses, const char *const *const *references,
                      int n_refs, long count, bool lowercase, bool effective_order)
{
    BleuStats stats = {0};
    const char **refs = xmalloc((size_t)n_refs * sizeof *refs);
    for (long i = 0; i < count; i++) {
        for (int r = 0; r < n_refs; r++) refs[r] = references[r][i];
        bleu_add_segment(&stats, hypotheses[i], refs, n_refs, lowercase);
    }
    free(refs);
    return bleu_compute(&stats, effective_order);
}

void bleu_format_score(char *buffer, size_t size, const BleuScore *s)
{
    snprintf(buffer, size, "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f "
             "hyp_len = %lld ref_len = %lld)", s->score, s->precisions[0],
             s->precisions[1], s->precisions[2], s->precisions[3], s->bp, s->ratio,
             s->stats.hyp_len, s->stats.ref_len);
}

void bleu_signature(char *buffer, size_t size, int n_refs, bool lowercase,
                    bool effective_order)
{
    snprintf(buffer, size, "nrefs:%d|case:%s|eff:%s|tok:13a|smooth:exp|version:%s",
             n_refs, lowercase ? "lc" : "mixed", effective_order ? "yes" : "no",
             BLEU_SACREBLEU_VERSION);
}

BleuScore bleu_resample(const BleuStats *segments, const long *index, long count)
{
    BleuStats sum = {0};
    for (long i = 0; i < count; i++) {
        const BleuStats *s = &segments[index[i]];
        sum.hyp_len += s->hyp_len, sum.ref_len += s->ref_len;
        for (int n = 0; n < BLEU_MAX_ORDER; n++)
            sum.correct[n] += s->correct[n], sum.total[n] += s->total[n];
    }
    return bleu_compute(&sum, false);
}

void bleu_bootstrap(const BleuStats *segments, long count, int resamples, uint64_t seed,
                    double *scores)
{
    Rng rng;
    rng_seed(&rng, seed, 0);
    long *index = xmalloc((size_t)(count > 0 ? count : 1) * sizeof *index);
    for (int k = 0; k < resamples; k++) {
        for (long i = 0; i < count; i++)
            index[i] = (long)(((uint64_t)rng_next(&rng) * (uint64_t)count) >> 32);
        scores[k] = bleu_resample(segments, index, count).score;
    }
    free(index);
}

static int compare_scores(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bleu_interval(double *scores, int n, double *mean, double *half_width)
{
    qsort(scores, (size_t)n, sizeof *scores, compare_scores);
    double sum = 0.0;
    for (int k = 0; k < n; k++) sum += scores[k];
    const int low = n / 40, high = n - 1 - n / 40;
    *mean = n > 0 ? sum / n : 0.0;
    *half_width = n > 0 ? 0.5 * (scores[high] - scores[low]) : 0.0;
}

double bleu_paired_p(const double *baseline, const double *system, int n, double difference)
{
    double mean = 0.0;
    for (int k = 0; k < n; k++) mean += fabs(system[k] - baseline[k]);
    mean = n > 0 ? mean / n : 0.0;
    int reached = 0;
    for (int k = 0; k < n; k++)
        reached += fabs(system[k] - baseline[k]) - mean >= difference;
    return (reached + 1.0) / (n + 1.0);
}

void bleu_format_interval(char *buffer, size_t size, const BleuScore *s, double mean,
                          double half_width)
{
    snprintf(buffer, size, "BLEU = %.2f (\xce\xbc = %.2f \xc2\xb1 %.2f) %.1f/%.1f/%.1f/%.1f "
             "(BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)", s->score, mean,
             half_width, s->precisions[0], s->precisions[1], s->precisions[2],
             s->precisions[3], s->bp, s->ratio, s->stats.hyp_len, s->stats.ref_len);
}

void bleu_signature_resampled(char *buffer, size_t size, int n_refs, bool lowercase,
                              int resamples, uint64_t seed)
{
    snprintf(buffer, size, "nrefs:%d|bs:%d|seed:%" PRIu64 "|case:%s|eff:no|tok:13a|"
             "smooth:exp|version:%s", n_refs, resamples, seed, lowercase ? "lc" : "mixed",
             BLEU_SACREBLEU_VERSION);
}

const char *bleu_read_lines(BleuLines *file, const char *path, Error *error)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL) return error_set(error, "cannot read %s: %s", path, strerror(errno));
    TextBuffer t = {0};
    char chunk[65536];
    for (size_t got; (got = fread(chunk, 1, sizeof chunk, in)) > 0; )
        text_put(&t, chunk, got);
    const int failure = ferror(in) ? errno : 0;
    fclose(in);
    char *text = text_finish(&t);
    if (failure) {
        free(text);
        return error_set(error, "cannot read %s: %s", path, strerror(failure));
    }
    /* <<Refuse a file that is not UTF-8 text>> */
    const size_t valid = utf8_valid_prefix(text, t.length);
    const char *nul = memchr(text, '\0', t.length);
    const size_t bad = nul && (size_t)(nul - text) < valid ? (size_t)(nul - text) : valid;
    if (bad < t.length) {
        long line = 1;
        size_t line_start = 0;
        for (size_t i = 0; i < bad; i++)
            if (text[i] == '\n' || (text[i] == '\r' && text[i + 1] != '\n'))
                line++, line_start = i + 1;
        if (text[bad] == '\0')   /* as every reader of lines says it (the text chapter) */
            error_set(error, "%s:%ld: a NUL byte at byte %zu", path, line,
                      bad - line_start + 1);
        else
            error_set(error, "%s, line %ld: not valid UTF-8 (byte 0x%02x at byte %zu of "
                      "the line)", path, line, (unsigned char)text[bad], bad - line_start + 1);
        free(text);
        return error->message;
    }
    file->text = text;
    file->count = 0;   /* lines end at LF, CR LF or CR, as read_line's do */
    for (size_t i = 0; i < t.length; i++)
        file->count += text[i] == '\n' || (text[i] == '\r' && text[i + 1] != '\n');
    if (t.length > 0 && text[t.length - 1] != '\n' && text[t.length - 1] != '\r')
        file->count++;
    file->lines = xmalloc((size_t)file->count * sizeof *file->lines);
    char *line = text;
    for (long i = 0; i < file->count; i++) {
        file->lines[i] = line;
        line += strcspn(line, "\r\n");
        if (*line == '\r' && line[1] == '\n') *line++ = '\0';
        if (*line == '\r' || *line == '\n') *line++ = '\0';
    }
    return NULL;
}

void bleu_lines_free(BleuLines *file)
{
    free(file->text);
    free(file->lines);
}
