/* Errors, flat buffers, random numbers, matrix products and threads, for every other
   file -- generated from the book's chapters by notangle: edit the book, not this file. */
#include "tensor.h"
/* <<tensor.c includes>> */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifndef TRANSFORMER_BROWSER
#include <cblas.h>
#else
enum CBLAS_ORDER { CblasRowMajor = 101 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

static void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                        enum CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta,
                        float *c, int ldc)
{
    (void)order;   /* always row-major here */
    matmul_reference(m, n, k, alpha, (MatmulOperand){a, lda, ta == CblasTrans},
                     (MatmulOperand){b, ldb, tb == CblasTrans}, beta, c, ldc);
}

/* y = alpha op(A) x + beta y, A rows x cols row-major: y as one row (incy is 1 here). */
static void cblas_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, int rows,
                        int cols, float alpha, const float *a, int lda, const float *x,
                        int incx, float beta, float *y, int incy)
{
    (void)order;
    ENSURE(incy == 1, "cblas_sgemv with incy %d", incy);
    const int n = trans == CblasTrans ? cols : rows, k = trans == CblasTrans ? rows : cols;
    const MatmulOperand x_row = incx == 1 ? matrix(x, k) : transposed(x, incx);
    const MatmulOperand a_t = trans == CblasTrans ? matrix(a, lda) : transposed(a, lda);
    matmul_reference(1, n, k, alpha, x_row, a_t, beta, y, n);
}

static void openblas_set_num_threads(int n) { (void)n; }
#endif
#include <time.h>

#ifndef TRANSFORMER_BROWSER
#include <immintrin.h>
#endif

#ifndef TRANSFORMER_BROWSER
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>   /* dnnl_status2str */
#endif

/* <<tensor.c definitions>> */
void fail_at(const char *file, int line, const char *condition, const char *format, ...)
{
    va_list arguments;
    fflush(stdout);
    fprintf(stderr, "%s:%d: internal error: %s: ", file, line, condition);
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fputc('\n', stderr);
    abort();
}

void die(const char *format, ...)
{
    va_list arguments;
    fflush(stdout);
    fputs("transformer: ", stderr);
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fputc('\n', stderr);
    exit(EXIT_FAILURE);
}

const char *error_set(Error *error, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
    return error->message;
}

void *xmalloc_at(size_t bytes, const char *file, int line)
{
    void *memory = malloc(bytes ? bytes : 1);
    if (memory == NULL)
        die("out of memory allocating %zu bytes (%s:%d)", bytes, file, line);
    return memory;
}

void *xgrow(void *memory, size_t *capacity, size_t needed, size_t item)
{
    if (needed <= *capacity) return memory;
    size_t bigger = *capacity ? *capacity : 64;
    while (bigger < needed) bigger *= 2;
    void *moved = realloc(memory, bigger * item);
    if (moved == NULL) die("out of memory growing an array to %zu bytes", bigger * item);
    *capacity = bigger;
    return moved;
}

enum { FLAT_ALIGN = 16 };   /* floats: 64 bytes, one cache line */

int flat_add(FlatBuffer *buffer, const char *name, int ndim, const int *shape)
{
    ENSURE(buffer->data == NULL, "view %s added after the buffer was allocated", name);
    ENSURE(ndim >= 1 && ndim <= TENSOR_MAX_DIMS, "view %s has %d dimensions", name, ndim);
    ENSURE(strlen(name) < TENSOR_NAME_MAX, "view name too long: %s", name);
    ENSURE(flat_find(buffer, name) < 0, "view %s added twice", name);
    /* <<Grow the table of views if it is full>> */
    buffer->views = xgrow(buffer->views, &buffer->capacity, (size_t)buffer->count + 1,
                          sizeof *buffer->views);
    TensorView *view = &buffer->views[buffer->count];
    memset(view, 0, sizeof *view);
    strcpy(view->name, name);
    view->ndim = ndim;
    view->size = 1;
    for (int i = 0; i < ndim; i++) {
        ENSURE(shape[i] > 0, "view %s: dimension %d is %d", name, i, shape[i]);
        ENSURE(view->size <= SIZE_MAX / sizeof(float) / 2 / (size_t)shape[i],
               "view %s is too large for memory", name);
        view->shape[i] = shape[i];
        view->size *= (size_t)shape[i];
    }
    view->offset = (buffer->total + FLAT_ALIGN - 1) / FLAT_ALIGN * FLAT_ALIGN;
    buffer->total = view->offset + view->size;
    return buffer->count++;
}

void flat_allocate(FlatBuffer *buffer)
{
    ENSURE(buffer->data == NULL, "buffer allocated twice");
    size_t floats = (buffer->total + FLAT_ALIGN - 1) / FLAT_ALIGN * FLAT_ALIGN;
    size_t bytes = (floats ? floats : FLAT_ALIGN) * sizeof(float);
    buffer->data = aligned_alloc(FLAT_ALIGN * sizeof(float), bytes);
    if (buffer->data == NULL)
        die("out of memory allocating a buffer of %zu bytes", bytes);
    memset(buffer->data, 0, bytes);
}

void flat_allocate_like(FlatBuffer *buffer, const FlatBuffer *layout)
{
    ENSURE(buffer->count == 0 && buffer->data == NULL, "buffer already laid out");
    for (int i = 0; i < layout->count; i++) {
        const TensorView *view = &layout->views[i];
        flat_add(buffer, view->name, view->ndim, view->shape);
    }
    flat_allocate(buffer);
}

int flat_find(const FlatBuffer *buffer, const char *name)
{
    for (int i = 0; i < buffer->count; i++)
        if (strcmp(buffer->views[i].name, name) == 0) return i;
    return -1;
}

float *flat_view(const FlatBuffer *buffer, int index)
{
    ENSURE(buffer->data != NULL, "view of a buffer that is not allocated");
    ENSURE(index >= 0 && index < buffer->count,
           "view index %d of %d", index, buffer->count);
    return buffer->data + buffer->views[index].offset;
}

void flat_free(FlatBuffer *buffer)
{
    free(buffer->views);
    free(buffer->data);
    memset(buffer, 0, sizeof *buffer);
}

void rng_seed(Rng *rng, uint64_t seed, uint64_t stream)
{
    rng->state = 0;
    rng->increment = (stream << 1) | 1u;
    rng_next(rng);
    rng->state += seed;
    rng_next(rng);
}

float rng_uniform(Rng *rng)
{
    return (float)(rng_next(rng) >> 8) * 0x1p-24f;
}

float rng_uniform_between(Rng *rng, float low, float high)
{
    return low + (high - low) * rng_uniform(rng);
}

float rng_normal(Rng *rng)
{
    const double two_pi = 6.283185307179586;
    double u1 = (double)((rng_next(rng) >> 8) + 1) * 0x1p-24;   /* (0, 1] */
    double u2 = (double)(rng_next(rng) >> 8) * 0x1p-24;         /* [0, 1) */
    return (float)(sqrt(-2.0 * log(u1)) * cos(two_pi * u2));
}

/* Element (row, col) of op(x). */
static inline float element(MatmulOperand x, int row, int col)
{
    return x.transposed ? x.data[(size_t)col * x.ld + row] : x.data[(size_t)row * x.ld + col];
}

static bool matrices_overlap(const float *x, int x_rows, int x_cols, int ldx,
                             const float *y, int y_rows, int y_cols, int ldy)
{
    if (x_rows == 0 || x_cols == 0 || y_rows == 0 || y_cols == 0) return false;
    uintptr_t x_first = (uintptr_t)x, y_first = (uintptr_t)y;
    uintptr_t x_end = x_first + ((size_t)(x_rows - 1) * ldx + x_cols) * sizeof(float);
    uintptr_t y_end = y_first + ((size_t)(y_rows - 1) * ldy + y_cols) * sizeof(float);
    return x_first < y_end && y_first < x_end;
}

/* Stop the program on a product whose sizes, leading dimensions or memory are wrong. */
static void check_product(int m, int n, int k, MatmulOperand a, MatmulOperand b,
                          const float *c, int ldc)
{
    /* <<Check the shapes and leading dimensions of a matrix product>> */
    ENSURE(m >= 0 && n >= 0 && k >= 0, "product sizes m=%d n=%d k=%d", m, n, k);
    ENSURE(a.ld >= (a.transposed ? m : k) && a.ld >= 1, "leading dimension lda=%d too small",
           a.ld);
    ENSURE(b.ld >= (b.transposed ? k : n) && b.ld >= 1, "leading dimension ldb=%d too small",
           b.ld);
    ENSURE(ldc >= n && ldc >= 1, "leading dimension ldc=%d too small for n=%d", ldc, n);
    ENSURE(!matrices_overlap(c, m, n, ldc, a.data, a.transposed ? k : m, a.transposed ? m : k,
                             a.ld)
           && !matrices_overlap(c, m, n, ldc, b.data, b.transposed ? n : k, b.transposed ? k : n,
                                b.ld),
           "the product's result overlaps an operand");
}

void matmul_reference(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                      float beta, float *c, int ldc)
{
    check_product(m, n, k, a, b, c, ldc);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int p = 0; alpha != 0.0f && p < k; p++)
                sum += element(a, i, p) * element(b, p, j);
            float *c_ij = &c[(size_t)i * ldc + j];
            *c_ij = alpha * sum + (beta == 0.0f ? 0.0f : beta * *c_ij);
        }
}

/* c[m][n] = beta * c, where beta == 0 stores zeros (0 * NaN would be NaN). */
static void scale_matrix(int m, int n, float beta, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        float *row = c + (size_t)i * ldc;
        if (beta == 0.0f)
            memset(row, 0, (size_t)n * sizeof *row);
        else
            for (int j = 0; j < n; j++) row[j] *= beta;
    }
}

void matmul_blas(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                 float beta, float *c, int ldc)
{
    check_product(m, n, k, a, b, c, ldc);
    if (m == 0 || n == 0) return;
    /* <<Keep the rules of BLAS that libraries break: $\alpha = 0$, $k = 0$, $\beta = 0$>> */
    if (alpha == 0.0f || k == 0) {   /* C = beta C; A and B are not read */
        if (beta != 1.0f) scale_matrix(m, n, beta, c, ldc);
        return;
    }
    /* <<Split a large product between the threads, if there are several>> */
    if (compute.split_products && compute.threads > 1 && !omp_in_parallel()
        && (double)m * n * k >= MATMUL_SPLIT_WORK) {
        matmul_blas_split(m, n, k, alpha, a, b, beta, c, ldc);
        return;
    }
    /* <<Clear the result when $\beta = 0$, whatever it held>> */
    if (beta == 0.0f) scale_matrix(m, n, 0.0f, c, ldc);
    /* <<Multiply a single row by the kernel table's product of one row>> */
    if (m == 1) {   /* c[0][j] = alpha sum_p a[p] op(b)[p][j] + beta c[0][j] */
        tensor_kernels[compute.kernel_set].row_product(n, k, alpha, a, b, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
                b.transposed ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, c, ldc);
}

ComputeSettings compute = {
    .matmul = MATMUL_BLAS,
    /* <<Initial values of the compute settings>> */
    .log = NULL,
    .threads = 1,
    .split_products = true,
    .kernel_set = KERNELS_FAST,
    .precision = PRECISION_FP32,
    .bf16_min_work = 1e6,
};

void matmul(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b, float beta,
            float *c, int ldc)
{
    /* <<Note the product's shape when a log is kept>> */
    if (compute.log)
        #pragma omp critical(matmul_log)
        matmul_log_add(compute.log, (MatmulShape){a.transposed, b.transposed, beta != 0.0f,
                                                  m, n, k});
    if (compute.matmul == MATMUL_REFERENCE)
        matmul_reference(m, n, k, alpha, a, b, beta, c, ldc);
    /* <<Otherwise send a large product to bfloat16 arithmetic, if asked>> */
    else if (compute.precision == PRECISION_BF16 && !omp_in_parallel()
             && (double)m * n * k >= compute.bf16_min_work)
        matmul_bf16(m, n, k, alpha, a, b, beta, c, ldc);
    else
        matmul_blas(m, n, k, alpha, a, b, beta, c, ldc);
}

double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void matmul_log_add(MatmulLog *log, MatmulShape shape)
{
    log->shapes = xgrow(log->shapes, &log->capacity, (size_t)log->count + 1,
                        sizeof *log->shapes);
    log->shapes[log->count++] = shape;
}

double matmul_log_flops(const MatmulLog *log)
{
    double flops = 0.0;
    for (int i = 0; i < log->count; i++)
        flops += 2.0 * log->shapes[i].m * log->shapes[i].n * log->shapes[i].k;
    return flops;
}

void matmul_log_free(MatmulLog *log)
{
    free(log->shapes);
    memset(log, 0, sizeof *log);
}

void set_threads(int n)
{
    ENSURE(n >= 1 && n <= MAX_THREADS, "%d threads", n);
    compute.threads = n;
    omp_set_num_threads(n);
    openblas_set_num_threads(compute.split_products ? 1 : n);
}

void matmul_blas_split(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc)
{
    const bool by_columns = n >= m;
    const int size = by_columns ? n : m, parts = compute.threads;
    #pragma omp parallel for num_threads(parts) schedule(static)
    for (int part = 0; part < parts; part++) {
        /* ranges start at multiples of 16, the width of the kernels' tiles */
        const int first = (int)((long long)size * part / parts) / 16 * 16;
        const int end = part + 1 == parts ? size
                                          : (int)((long long)size * (part + 1) / parts) / 16 * 16;
        if (end <= first) continue;
        if (by_columns) {   /* columns [first, end) of op(b) and of c */
            MatmulOperand part_b = b;
            part_b.data += b.transposed ? (size_t)first * b.ld : (size_t)first;
            matmul_blas(m, end - first, k, alpha, a, part_b, beta, c + first, ldc);
        } else {            /* rows [first, end) of op(a) and of c */
            MatmulOperand part_a = a;
            part_a.data += a.transposed ? (size_t)first : (size_t)first * a.ld;
            matmul_blas(end - first, n, k, alpha, part_a, b, beta, c + (size_t)first * ldc,
                        ldc);
        }
    }
}

void row_product_sgemm(int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc)
{
    cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
                b.transposed ? CblasTrans : CblasNoTrans,
                1, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, c, ldc);
}

void row_product_sgemv(int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc)
{
    cblas_sgemv(CblasRowMajor, b.transposed ? CblasNoTrans : CblasTrans,
                b.transposed ? n : k, b.transposed ? k : n, alpha, b.data, b.ld, a.data,
                a.transposed ? a.ld : 1, beta, c, 1);
}

const TensorKernels tensor_kernels[KERNEL_SETS] = {
    [KERNELS_FAST] = {.row_product = row_product_sgemv},
    [KERNELS_REFERENCE] = {.row_product = row_product_sgemm},
};

void rng_advance(Rng *rng, uint64_t delta)
{
    uint64_t multiplier = 6364136223846793005ULL, increment = rng->increment;
    uint64_t total_multiplier = 1, total_increment = 0;
    for (; delta > 0; delta >>= 1) {   /* square-and-multiply on the affine map */
        if (delta & 1) {
            total_multiplier *= multiplier;
            total_increment = total_increment * multiplier + increment;
        }
        increment = (multiplier + 1) * increment;
        multiplier *= multiplier;
    }
    rng->state = total_multiplier * rng->state + total_increment;
}

#ifndef TRANSFORMER_BROWSER
/* out[0..n) = bfloat16 of x[0..n), 32 at a time with VCVTNE2PS2BF16. */
__attribute__((target("avx512f,avx512bf16")))
static void bf16_round_row_avx512(uint16_t *out, const float *x, size_t n)
{
    size_t j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + j + 16),
                                                  _mm512_loadu_ps(x + j));
        _mm512_storeu_si512((void *)(out + j), (__m512i)pair);
    }
    for (; j < n; j++) out[j] = bf16_from_float(x[j]);
}
#endif

static void bf16_round_row(uint16_t *out, const float *x, size_t n)
{
#ifndef TRANSFORMER_BROWSER
    if (__builtin_cpu_supports("avx512bf16")) {
        bf16_round_row_avx512(out, x, n);
        return;
    }
#endif
    for (size_t j = 0; j < n; j++) out[j] = bf16_from_float(x[j]);
}

/* out[rows][cols] = bfloat16 of x[rows][cols] (row stride ld). */
static void bf16_round_matrix(uint16_t *out, const float *x, int rows, int cols, int ld)
{
    PARALLEL_FOR((size_t)rows * cols)
    for (int r = 0; r < rows; r++)
        bf16_round_row(out + (size_t)r * cols, x + (size_t)r * ld, (size_t)cols);
}

typedef struct Bf16Product Bf16Product;   /* one product's primitive, below */

enum { BF16_HELD = 3 };   /* at most held at once: a layer's two inputs and a gradient */
typedef struct {
    const float *x;              /* NULL: a free slot; else the operand x[rows][cols]... */
    int rows, cols, holds;       /* ...held by this many callers */
    bool rounded;                /* its bfloat16 copy made (at its first product) */
    uint16_t *copy;
    size_t capacity;
} Bf16Held;

typedef struct {
    const float *weights;        /* NULL: no copy; else the float parameters... */
    size_t weight_count;
    uint16_t *weights_bf16;      /* ...and their bfloat16 copy */
    size_t weights_capacity;
    uint16_t *scratch[2];        /* rounded operands a and b */
    size_t scratch_capacity[2];
    Bf16Held held[BF16_HELD];    /* operands rounded once for several products */
    void *scratchpad;            /* oneDNN's working memory, shared by the products */
    size_t scratchpad_size;
#ifndef TRANSFORMER_BROWSER   /* no oneDNN in the browser */
    dnnl_engine_t engine;
    dnnl_stream_t stream;
#endif
    Bf16Product *products;       /* every product met so far */
    int product_count;
    size_t product_capacity;
} Bf16State;

static Bf16State bf16;

/* Make sure *buffer holds n numbers of 16 bits. */
static void bf16_reserve(uint16_t **buffer, size_t *capacity, size_t n)
{
    if (n <= *capacity) return;
    free(*buffer);
    *buffer = xmalloc(n * sizeof **buffer);
    *capacity = n;
}

void bf16_weights_use(const float *weights, size_t n)
{
    bf16_reserve(&bf16.weights_bf16, &bf16.weights_capacity, n);
    PARALLEL_FOR(n)
    for (int block = 0; block < PARALLEL_BLOCKS; block++) {
        const size_t first = n * block / PARALLEL_BLOCKS, end = n * (block + 1) / PARALLEL_BLOCKS;
        bf16_round_row(bf16.weights_bf16 + first, weights + first, end - first);
    }
    bf16.weights = weights, bf16.weight_count = n;
}

void bf16_weights_forget(void)
{
    bf16.weights = NULL, bf16.weight_count = 0;
}

static const uint16_t *bf16_operand(const float *x, int rows, int cols, int *ld, int which)
{
    const uintptr_t first = (uintptr_t)x, weights = (uintptr_t)bf16.weights;
    const uintptr_t end = first + ((size_t)(rows - 1) * *ld + cols) * sizeof(float);
    if (bf16.weights && first >= weights
        && end <= weights + bf16.weight_count * sizeof(float))
        return bf16.weights_bf16 + (x - bf16.weights);
    /* <<Read a held operand from its copy, rounded at its first product>> */
    for (int i = 0; i < BF16_HELD; i++) {
        Bf16Held *h = &bf16.held[i];
        if (h->x != x || h->rows != rows || h->cols != cols || *ld != cols) continue;
        if (!h->rounded) {
            bf16_reserve(&h->copy, &h->capacity, (size_t)rows * cols);
            bf16_round_matrix(h->copy, x, rows, cols, cols);
            h->rounded = true;
        }
        return h->copy;
    }
    bf16_reserve(&bf16.scratch[which], &bf16.scratch_capacity[which], (size_t)rows * cols);
    bf16_round_matrix(bf16.scratch[which], x, rows, cols, *ld);
    *ld = cols;
    return bf16.scratch[which];
}

void bf16_operand_hold(const float *x, int rows, int cols)
{
    if (omp_in_parallel()) return;   /* products there stay in float, and this state is shared */
    Bf16Held *free_slot = NULL;
    for (int i = 0; i < BF16_HELD; i++) {
        Bf16Held *h = &bf16.held[i];
        if (h->x == x) {
            ENSURE(h->rows == rows && h->cols == cols, "an operand held with two shapes");
            h->holds++;
            return;
        }
        if (h->x == NULL && free_slot == NULL) free_slot = h;
    }
    ENSURE(free_slot != NULL, "more than %d bfloat16 operands held", BF16_HELD);
    free_slot->x = x, free_slot->rows = rows, free_slot->cols = cols;
    free_slot->holds = 1, free_slot->rounded = false;
}

void bf16_operand_release(const float *x)
{
    if (omp_in_parallel()) return;
    for (int i = 0; i < BF16_HELD; i++) {
        Bf16Held *h = &bf16.held[i];
        if (h->x != x) continue;
        if (--h->holds == 0) h->x = NULL;
        return;
    }
    ENSURE(false, "a bfloat16 operand released that was not held");
}

#ifndef TRANSFORMER_BROWSER
struct Bf16Product {
    bool transpose_a, transpose_b;
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    dnnl_primitive_t primitive;
    dnnl_memory_t a, b, c, scratchpad;
};
#endif

#ifndef TRANSFORMER_BROWSER
#define DNNL_CHECK(call)                                                            \
    do {                                                                            \
        dnnl_status_t status_ = (call);                                             \
        ENSURE(status_ == dnnl_success, "oneDNN: %s", dnnl_status2str(status_));    \
    } while (0)

static void bf16_describe(dnnl_memory_desc_t *desc, int rows, int cols, bool transpose,
                          int ld, dnnl_data_type_t type)
{
    const dnnl_dims_t dims = {rows, cols};
    const dnnl_dims_t strides = {transpose ? 1 : ld, transpose ? ld : 1};
    DNNL_CHECK(dnnl_memory_desc_init_by_strides(desc, 2, dims, type, strides));
}

static void bf16_make_product(Bf16Product *p)
{
    dnnl_memory_desc_t a, b, c;
    bf16_describe(&a, p->m, p->k, p->transpose_a, p->lda, dnnl_bf16);
    bf16_describe(&b, p->k, p->n, p->transpose_b, p->ldb, dnnl_bf16);
    bf16_describe(&c, p->m, p->n, false, p->ldc, dnnl_f32);
    dnnl_matmul_desc_t desc;
    DNNL_CHECK(dnnl_matmul_desc_init(&desc, &a, &b, NULL, &c));
    dnnl_primitive_attr_t attributes;
    DNNL_CHECK(dnnl_primitive_attr_create(&attributes));
    DNNL_CHECK(dnnl_primitive_attr_set_scratchpad_mode(attributes, dnnl_scratchpad_mode_user));
    if (p->alpha != 1.0f)
        DNNL_CHECK(dnnl_primitive_attr_set_output_scales(attributes, 1, 0, &p->alpha));
    if (p->beta != 0.0f) {
        dnnl_post_ops_t post_ops;
        DNNL_CHECK(dnnl_post_ops_create(&post_ops));
        DNNL_CHECK(dnnl_post_ops_append_sum(post_ops, p->beta));
        DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attributes, post_ops));
        dnnl_post_ops_destroy(post_ops);
    }
    dnnl_primitive_desc_t primitive_desc;
    DNNL_CHECK(dnnl_primitive_desc_create(&primitive_desc, &desc, attributes, bf16.engine,
                                          NULL));
    DNNL_CHECK(dnnl_primitive_create(&p->primitive, primitive_desc));
    /* <<Make room for the product's scratchpad>> */
    const dnnl_memory_desc_t *scratchpad =
        dnnl_primitive_desc_query_md(primitive_desc, dnnl_query_scratchpad_md, 0);
    const size_t bytes = dnnl_memory_desc_get_size(scratchpad);
    if (bytes > bf16.scratchpad_size) {
        free(bf16.scratchpad);
        bf16.scratchpad = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (bf16.scratchpad == NULL) die("out of memory allocating %zu bytes", bytes);
        bf16.scratchpad_size = bytes;
    }
    DNNL_CHECK(dnnl_memory_create(&p->scratchpad, scratchpad, bf16.engine, DNNL_MEMORY_NONE));
    dnnl_primitive_desc_destroy(primitive_desc);
    dnnl_primitive_attr_destroy(attributes);
    DNNL_CHECK(dnnl_memory_create(&p->a, &a, bf16.engine, DNNL_MEMORY_NONE));
    DNNL_CHECK(dnnl_memory_create(&p->b, &b, bf16.engine, DNNL_MEMORY_NONE));
    DNNL_CHECK(dnnl_memory_create(&p->c, &c, bf16.engine, DNNL_MEMORY_NONE));
}
#endif

#ifndef TRANSFORMER_BROWSER
static Bf16Product *bf16_product(Bf16Product key)
{
    for (int i = 0; i < bf16.product_count; i++) {
        const Bf16Product *p = &bf16.products[i];
        if (p->transpose_a == key.transpose_a && p->transpose_b == key.transpose_b
            && p->m == key.m && p->n == key.n && p->k == key.k && p->lda == key.lda
            && p->ldb == key.ldb && p->ldc == key.ldc && p->alpha == key.alpha
            && p->beta == key.beta)
            return &bf16.products[i];
    }
    if (bf16.engine == NULL) {
        DNNL_CHECK(dnnl_engine_create(&bf16.engine, dnnl_cpu, 0));
        DNNL_CHECK(dnnl_stream_create(&bf16.stream, bf16.engine, dnnl_stream_default_flags));
    }
    bf16.products = xgrow(bf16.products, &bf16.product_capacity,
                          (size_t)bf16.product_count + 1, sizeof *bf16.products);
    Bf16Product *p = &bf16.products[bf16.product_count++];
    *p = key;
    bf16_make_product(p);
    return p;
}
#endif

#ifndef TRANSFORMER_BROWSER
void matmul_bf16(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                 float beta, float *c, int ldc)
{
    check_product(m, n, k, a, b, c, ldc);
    if (m == 0 || n == 0) return;
    if (alpha == 0.0f || k == 0) {
        matmul_blas(m, n, k, alpha, a, b, beta, c, ldc);
        return;
    }
    int lda = a.ld, ldb = b.ld;   /* of the bfloat16 copies, which may be packed */
    const uint16_t *a16 = bf16_operand(a.data, a.transposed ? k : m, a.transposed ? m : k,
                                       &lda, 0);
    const uint16_t *b16 = bf16_operand(b.data, b.transposed ? n : k, b.transposed ? k : n,
                                       &ldb, 1);
    Bf16Product *p = bf16_product((Bf16Product){a.transposed, b.transposed, m, n, k, lda, ldb,
                                                ldc, alpha, beta, NULL, NULL, NULL, NULL,
                                                NULL});
    DNNL_CHECK(dnnl_memory_set_data_handle(p->a, (void *)a16));
    DNNL_CHECK(dnnl_memory_set_data_handle(p->b, (void *)b16));
    DNNL_CHECK(dnnl_memory_set_data_handle(p->c, c));
    DNNL_CHECK(dnnl_memory_set_data_handle(p->scratchpad, bf16.scratchpad));
    const dnnl_exec_arg_t arguments[4] = {
        {DNNL_ARG_SRC, p->a}, {DNNL_ARG_WEIGHTS, p->b}, {DNNL_ARG_DST, p->c},
        {DNNL_ARG_SCRATCHPAD, p->scratchpad}};
    DNNL_CHECK(dnnl_primitive_execute(p->primitive, bf16.stream, 4, arguments));
    DNNL_CHECK(dnnl_stream_wait(bf16.stream));
}
#else
void matmul_bf16(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                 float beta, float *c, int ldc)
{
    ENSURE(false, "no bfloat16 products in the browser's build (%d x %d x %d)", m, n, k);
}
#endif

#ifndef TRANSFORMER_BROWSER
bool bf16_hardware(void)
{
    const unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    return (isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16)
           == (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}
#else
bool bf16_hardware(void)
{
    return false;   /* no oneDNN in the browser */
}
#endif

const char *precision_name(Precision precision)
{
    return precision == PRECISION_BF16 ? "bf16" : "fp32";
}
