/* The translator: open, translate lines, close. Generated from the book's chapters by
   notangle: edit the book, not this file. */
#include "translator.h"
#include <stdlib.h>
#include <string.h>
#include "data.h"
#include "modelfile.h"

/* <<The translator's state>> */
struct Translator {
    Model model;
    Vocab src_vocab, tgt_vocab;
    int beam_size, batch_limit, max_len;
    bool recase;                      /* give the output its capital letters */
    int window;                       /* lines read, then sorted by length: 4 batches */
    DecodeSettings settings;
    KVCache cache;
    Beam beam;
    int *numbered, *lengths_in;       /* [window][max_len], [window]: the numbered lines */
    int *order, *starts;              /* [window]: the window by length; [max_len + 2] */
    int *src;                         /* [batch_limit][max_len]: a batch's sources, padded */
    uint8_t *src_keep;                /* [batch_limit][max_len]: their padding mask */
    int *batch_out, *batch_lengths;   /* [batch_limit][max_len], [batch_limit] */
    int *out, *lengths;               /* [window][max_len], [window]: outputs by line */
    TextLine *tokens, *text;          /* one line tokenized; one translation detokenized */
    char *storage;                    /* the last call's translations, one after another */
    size_t storage_capacity, *offset, offset_capacity;
    bool failed_output;               /* the error is of a line's translation, not the line */
    bool borrows_vocabs;              /* the vocabularies are a training run's: not freed */
    Error error;                      /* why the last call failed */
};

/* <<translator.c definitions>> */
/* <<Lay out the translator's buffers>> */
/* Lay out what decoding needs: for t->model, with settings s. */
static void translator_setup(Translator *t, const TranslatorSettings *s)
{
    const Config *config = &t->model.config;
    const int max_len = t->max_len = config->max_len, batch_limit = s->batch_limit;
    t->beam_size = s->beam_size, t->batch_limit = batch_limit;
    t->recase = !s->lowercase && t->tgt_vocab.cases.count > 0;
    const int window = t->window = 4 * batch_limit;
    model_prepare(&t->model, batch_limit, max_len, 1);
    decoder_cache_init(&t->cache, &t->model, batch_limit * s->beam_size, max_len, max_len - 1);
    beam_init(&t->beam, batch_limit, s->beam_size, max_len, config->tgt_vocab);
    t->settings = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK, max_len);
    t->settings.alpha = (float)s->alpha;
    t->numbered = xmalloc((size_t)window * max_len * sizeof *t->numbered);
    t->lengths_in = xmalloc((size_t)window * sizeof *t->lengths_in);
    t->order = xmalloc((size_t)window * sizeof *t->order);
    t->starts = xmalloc((size_t)(max_len + 2) * sizeof *t->starts);
    t->src = xmalloc((size_t)batch_limit * max_len * sizeof *t->src);
    t->src_keep = xmalloc((size_t)batch_limit * max_len);
    t->batch_out = xmalloc((size_t)batch_limit * max_len * sizeof *t->batch_out);
    t->batch_lengths = xmalloc((size_t)batch_limit * sizeof *t->batch_lengths);
    t->out = xmalloc((size_t)window * max_len * sizeof *t->out);
    t->lengths = xmalloc((size_t)window * sizeof *t->lengths);
    t->tokens = xmalloc(sizeof *t->tokens), t->text = xmalloc(sizeof *t->text);
}

Translator *translator_open(const char *path, const TranslatorSettings *s, Error *error)
{
    Translator *t = xmalloc(sizeof *t);
    memset(t, 0, sizeof *t);
    Model model;
    Safetensors file;
    const char *message = translation_model_load(path, &model, &t->src_vocab, &t->tgt_vocab,
                                                 &file);
    if (message) {   /* the loader freed all but the message */
        error_set(error, "%s", message);
        free(t);
        return NULL;
    }
    safetensors_free(&file);
    /* <<Round the loaded weights to bfloat16 once, if asked>> */
    if (compute.precision == PRECISION_BF16)
        bf16_weights_use(model.parameters.data, model.parameters.total);
    t->model = model;
    translator_setup(t, s);
    return t;
}

void translator_close(Translator *t)
{
    free(t->numbered), free(t->lengths_in), free(t->order), free(t->starts), free(t->src);
    free(t->src_keep), free(t->batch_out), free(t->batch_lengths), free(t->out);
    free(t->lengths), free(t->tokens), free(t->text), free(t->storage), free(t->offset);
    beam_free(&t->beam);
    decoder_cache_free(&t->cache);
    if (!t->borrows_vocabs) vocab_free(&t->src_vocab), vocab_free(&t->tgt_vocab);
    model_free(&t->model);
    free(t);
}

const char *translator_error(const Translator *t) { return t->error.message; }
bool translator_output_failed(const Translator *t) { return t->failed_output; }
int translator_window(const Translator *t) { return t->window; }

/* <<Read, tokenize and number up to a window of lines>> */
/* Read, tokenize and number up to a window of lines: how many can be translated. */
static int number_window(Translator *t, const char *const *lines, const size_t *sizes,
                         int count)
{
    const TextOptions german = {TEXT_GERMAN, true};
    for (int w = 0; w < count; w++) {
        const char *error = tokenize_line(german, lines[w], sizes[w], t->tokens);
        if (error && t->tokens->blank) {
            t->lengths_in[w] = 0;   /* a blank line, kept */
            continue;
        }
        if (error) {   /* the lines before it are still translated */
            error_set(&t->error, "%s", error);
            return w;
        }
        t->lengths_in[w] = vocab_number_sentence(t->numbered + (size_t)w * t->max_len,
                                                 t->tokens->text, &t->src_vocab, t->max_len);
    }
    return count;
}

/* <<Order the window's lines by length>> */
/* Order the window's lines by length: order[0 .. count) */
static void order_by_length(Translator *t, int count)
{
    const int max_len = t->max_len;
    int *starts = t->starts;
    memset(starts, 0, (size_t)(max_len + 2) * sizeof *starts);
    for (int w = 0; w < count; w++) starts[t->lengths_in[w] + 1]++;
    for (int n = 1; n <= max_len + 1; n++) starts[n] += starts[n - 1];
    for (int w = 0; w < count; w++) t->order[starts[t->lengths_in[w]]++] = w;
}

/* <<Gather the batch's sources, padded to the longest>> */
/* Gather the batch's sources, padded to the longest: the lines order[first ..
   first + batch), with their mask. */
static SourceBatch gather_batch(Translator *t, int first, int batch)
{
    int src_len = 1;
    for (int b = 0; b < batch; b++)
        if (t->lengths_in[t->order[first + b]] > src_len)
            src_len = t->lengths_in[t->order[first + b]];
    for (int b = 0; b < batch; b++) {
        const int w = t->order[first + b];
        int *row = t->src + (size_t)b * src_len;
        memcpy(row, t->numbered + (size_t)w * t->max_len,
               (size_t)t->lengths_in[w] * sizeof *row);
        for (int i = t->lengths_in[w]; i < src_len; i++) row[i] = VOCAB_BLANK;
    }
    return source_batch(t->src, t->src_keep, batch, src_len, VOCAB_BLANK);
}

/* <<Decode the window's lines, in batches of similar lengths>> */
/* Decode the window's lines, in batches of similar lengths: out and lengths by line. */
static void decode_window(Translator *t, int count)
{
    const int max_len = t->max_len;
    int blanks = 0;   /* the blank lines come first in the order: nothing to decode */
    while (blanks < count && t->lengths_in[t->order[blanks]] == 0)
        t->lengths[t->order[blanks++]] = 0;
    for (int first = blanks; first < count; first += t->batch_limit) {
        const int batch = count - first < t->batch_limit ? count - first : t->batch_limit;
        const SourceBatch sources = gather_batch(t, first, batch);
        if (t->beam_size == 1)
            greedy_translate(&t->model, &t->cache, t->batch_out, t->batch_lengths, NULL,
                             &sources, &t->settings);
        else
            beam_search(&t->model, &t->cache, &t->beam, t->batch_out, t->batch_lengths, NULL,
                        &sources, &t->settings);
        for (int b = 0; b < batch; b++) {   /* each output to its line's place */
            const int w = t->order[first + b];
            memcpy(t->out + (size_t)w * max_len, t->batch_out + (size_t)b * max_len,
                   (size_t)max_len * sizeof *t->out);
            t->lengths[w] = t->batch_lengths[b];
        }
    }
}

/* <<Turn each output into text>> */
/* Keep text, of length bytes, as the translation of line: at its offset in storage. */
static void keep_text(Translator *t, int line, const char *text, size_t length, size_t *used)
{
    t->storage = xgrow(t->storage, &t->storage_capacity, *used + length + 1, 1);
    memcpy(t->storage + *used, text, length + 1);
    t->offset[line] = *used;
    *used += length + 1;
}

/* Turn each output into text: the window's count lines, lines first .. of the call. Returns
   how many were written (count, or the first that the detokenizer refuses). */
static int write_window(Translator *t, int count, int first, size_t *used)
{
    char joined[TEXT_MAX_TOKENIZED_BYTES + 1];
    for (int b = 0; b < count; b++) {
        const int *row = t->out + (size_t)b * t->max_len;
        size_t length = 0;
        joined[0] = '\0';
        for (int i = 1; i < t->lengths[b] && row[i] != VOCAB_END; i++) {
            const char *word = vocab_token(&t->tgt_vocab, row[i]);
            const size_t n = strlen(word);
            if (length + n + 2 > sizeof joined) break;
            if (length) joined[length++] = ' ';
            memcpy(joined + length, word, n + 1);
            length += n;
        }
        if (t->tgt_vocab.subwords) length = vocab_join_subwords(joined, length);
        if (t->recase) recase_line(&t->tgt_vocab.cases, joined);
        if (length == 0) {   /* a blank line, or the model ended at once: still one line */
            keep_text(t, first + b, "", 0, used);
            continue;
        }
        if (detokenize_line(TEXT_ENGLISH, joined, length, t->text)) {
            error_set(&t->error, "%s", t->text->error.message);
            t->failed_output = true;
            return b;
        }
        keep_text(t, first + b, t->text->text, strlen(t->text->text), used);
    }
    return count;
}

int translator_translate(Translator *t, const char *const *lines, const size_t *sizes,
                         int count, const char **out)
{
    t->error.message[0] = '\0', t->failed_output = false;
    t->offset = xgrow(t->offset, &t->offset_capacity, (size_t)count + 1, sizeof *t->offset);
    size_t used = 0;   /* bytes of storage written */
    int done = 0;
    while (done < count) {
        const int asked = count - done < t->window ? count - done : t->window;
        const int read = number_window(t, lines + done, sizes + done, asked);
        order_by_length(t, read);
        decode_window(t, read);
        const int written = write_window(t, read, done, &used);
        done += written;
        if (written < asked) break;
    }
    for (int i = 0; i < done; i++) out[i] = t->storage + t->offset[i];
    return done;
}

const char *translator_pair(Translator *t, const char *line, size_t size, Batch *pair)
{
    const char *english;
    if (translator_translate(t, &line, &size, 1, &english) < 1) return t->error.message;
    if (t->lengths_in[0] == 0) return t->tokens->error.message;   /* blank */
    batch_init(pair, 1, t->lengths_in[0], t->lengths[0] - 1);
    batch_fill(pair, t->numbered, t->out, VOCAB_BLANK);
    return NULL;
}

Model *translator_model(Translator *t) { return &t->model; }

const Vocab *translator_vocab(const Translator *t, bool target)
{
    return target ? &t->tgt_vocab : &t->src_vocab;
}

Translator *translator_open_run(const Model *model, const Vocab *src_vocab,
                                const Vocab *tgt_vocab, const TranslatorSettings *s)
{
    Translator *t = xmalloc(sizeof *t);
    memset(t, 0, sizeof *t);
    model_init(&t->model, model->config);
    t->src_vocab = *src_vocab, t->tgt_vocab = *tgt_vocab, t->borrows_vocabs = true;
    translator_setup(t, s);
    return t;
}

void translator_take_weights(Translator *t, const Model *model)
{
    memcpy(t->model.parameters.data, model->parameters.data,
           model->parameters.total * sizeof *model->parameters.data);
}
