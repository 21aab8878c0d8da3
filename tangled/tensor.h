/* tensor.h -- errors, flat buffers, random numbers and matrix products.
   Generated from book/tensor.nw by notangle: edit the book, not this file. */
#ifndef TENSOR_H
#define TENSOR_H
/* <<tensor.h includes>> */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef TRANSFORMER_BROWSER
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_in_parallel(void) { return 0; }
static inline void omp_set_num_threads(int n) { (void)n; }
#endif

/* <<tensor.h declarations>> */
/* Stop with "FILE:LINE: internal error: CONDITION: message" when a bug is detected. */
#define ENSURE(condition, ...)                                                  \
    do {                                                                        \
        if (!(condition)) fail_at(__FILE__, __LINE__, #condition, __VA_ARGS__); \
    } while (0)
_Noreturn void fail_at(const char *file, int line, const char *condition,
                       const char *format, ...) __attribute__((format(printf, 4, 5)));

/* Print "transformer: message" on one line and exit with status 1: for bad input. */
_Noreturn void die(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* A one-line message: what a function that refuses its input, or fails to write a file,
   says; room for a path of PATH_MAX bytes and the words around it. */
typedef struct { char message[4400]; } Error;
/* Write the message that format makes of the rest, as printf would, into error; return it. */
const char *error_set(Error *error, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* malloc that never returns NULL: it dies naming the size and the calling place. */
#define xmalloc(bytes) xmalloc_at((bytes), __FILE__, __LINE__)
void *xmalloc_at(size_t bytes, const char *file, int line);

/* The array at memory, of *capacity items of item bytes, grown by doubling to hold at least
   needed items (perhaps moved; NULL with capacity 0 starts one). */
void *xgrow(void *memory, size_t *capacity, size_t needed, size_t item);

enum { TENSOR_MAX_DIMS = 4, TENSOR_NAME_MAX = 96 };

/* One named tensor inside a FlatBuffer. */
typedef struct {
    char name[TENSOR_NAME_MAX];
    int ndim;
    int shape[TENSOR_MAX_DIMS];
    size_t size;     /* number of floats: the product of the shape */
    size_t offset;   /* first float of this view, counted from the buffer's start */
} TensorView;

/* Many tensors in one allocation: first add every view, then allocate once. */
typedef struct {
    TensorView *views;
    int count;
    size_t capacity; /* views that the table has room for */
    size_t total;    /* floats up to the end of the last view, padding included */
    float *data;     /* NULL until the buffer is allocated */
} FlatBuffer;

int flat_add(FlatBuffer *buffer, const char *name, int ndim, const int *shape);
void flat_allocate(FlatBuffer *buffer);
void flat_allocate_like(FlatBuffer *buffer, const FlatBuffer *layout);
int flat_find(const FlatBuffer *buffer, const char *name);      /* -1 when absent */
float *flat_view(const FlatBuffer *buffer, int index);
void flat_free(FlatBuffer *buffer);

/* PCG32: 64-bit state, odd increment chosen by the stream number. */
typedef struct {
    uint64_t state;
    uint64_t increment;
} Rng;

void rng_seed(Rng *rng, uint64_t seed, uint64_t stream);

static inline uint32_t rng_next(Rng *rng)
{
    uint64_t old = rng->state;
    rng->state = old * 6364136223846793005ULL + rng->increment;
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rotation = (uint32_t)(old >> 59);
    return (xorshifted >> rotation) | (xorshifted << ((32 - rotation) & 31));
}

float rng_uniform(Rng *rng);                                 /* [0, 1) */
float rng_uniform_between(Rng *rng, float low, float high);  /* [low, high] */
float rng_normal(Rng *rng);                                  /* mean 0, variance 1 */

/* One operand of a product: row-major numbers with leading dimension ld (floats from one
   row to the next), used as they are or transposed. */
typedef struct {
    const float *data;
    int ld;
    bool transposed;
} MatmulOperand;

static inline MatmulOperand matrix(const float *data, int ld)
{
    return (MatmulOperand){data, ld, false};
}

static inline MatmulOperand transposed(const float *data, int ld)
{
    return (MatmulOperand){data, ld, true};
}

/* c[m][n] = alpha * op(a)[m][k] * op(b)[k][n] + beta * c, c row-major with leading
   dimension ldc; op(x) is x transposed when x.transposed. beta == 0 ignores c's contents. */
void matmul(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b, float beta,
            float *c, int ldc);
void matmul_reference(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                      float beta, float *c, int ldc);
void matmul_blas(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                 float beta, float *c, int ldc);

typedef enum { MATMUL_BLAS, MATMUL_REFERENCE } MatmulKernel;

/* <<Types of the compute settings>> */
typedef struct MatmulLog MatmulLog;

/* The kernels that exist in two versions, which compute the same numbers: the speed
   chapter's (KERNELS_FAST) and the chapters' reference versions (KERNELS_REFERENCE). */
typedef enum { KERNELS_FAST, KERNELS_REFERENCE, KERNEL_SETS } KernelSet;

/* The kernel of this floor: the product of one row, m = 1. */
typedef struct {
    void (*row_product)(int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                        float beta, float *c, int ldc);
} TensorKernels;
extern const TensorKernels tensor_kernels[KERNEL_SETS];

typedef enum { PRECISION_FP32, PRECISION_BF16 } Precision;

/* How the program computes: the switches of the kernels, all in one place. */
typedef struct {
    MatmulKernel matmul;    /* the kernel that matmul() forwards to */
    /* <<Fields of the compute settings>> */
    MatmulLog *log;         /* not NULL: matmul() appends the shape of each product */
    int threads;            /* threads in use: set_threads() changes it */
    bool split_products;    /* false: OpenBLAS's own threads, for comparison */
    KernelSet kernel_set;   /* the version of every kernel that has two */
    Precision precision;    /* PRECISION_BF16: large products with bfloat16 operands */
    double bf16_min_work;   /* products with m n k below this stay in float */
} ComputeSettings;
extern ComputeSettings compute;

/* Seconds on a monotonic clock, from an arbitrary origin: for measuring intervals. */
double seconds_now(void);

typedef struct {
    bool transpose_a, transpose_b, accumulate;   /* accumulate: beta != 0 */
    int m, n, k;
} MatmulShape;

struct MatmulLog {
    MatmulShape *shapes;
    int count;
    size_t capacity;
};

void matmul_log_add(MatmulLog *log, MatmulShape shape);
double matmul_log_flops(const MatmulLog *log);    /* the sum of 2 m n k */
void matmul_log_free(MatmulLog *log);

/* Split the for loop that follows between the threads when it does at least
   PARALLEL_MIN_WORK elements of work; iterations must be independent. */
#define PARALLEL_MIN_WORK 32768
#define PARALLEL_PRAGMA(text) _Pragma(#text)
#define PARALLEL_FOR(work) \
    PARALLEL_PRAGMA(omp parallel for if ((work) >= PARALLEL_MIN_WORK) schedule(static))
/* Sums across rows are cut into this many blocks of columns, whatever the thread count. */
enum { PARALLEL_BLOCKS = 16, MAX_THREADS = 64 };
static inline int block_start(int block, int size)   /* first column of block */
{
    return (int)((long long)size * block / PARALLEL_BLOCKS);
}
/* Use n threads (1 to MAX_THREADS) in the products and the other kernels. */
void set_threads(int n);

#define MATMUL_SPLIT_WORK 1e6   /* m n k below this is not worth a team */
void matmul_blas_split(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc);

/* c[0][j] = alpha sum_p op(a)[0][p] op(b)[p][j] + beta c[0][j]: the product of one row
   (m = 1) by cblas_sgemm, as any product, or by cblas_sgemv, the matrix-vector product. */
void row_product_sgemm(int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc);
void row_product_sgemv(int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                       float beta, float *c, int ldc);

/* Move the generator delta outputs ahead, as delta calls of rng_next would. */
void rng_advance(Rng *rng, uint64_t delta);

/* The bfloat16 nearest to x (ties to even); NaN stays NaN. */
static inline uint16_t bf16_from_float(float x)
{
    union { float value; uint32_t bits; } u = {.value = x};
    if (x != x) return (uint16_t)(u.bits >> 16 | 0x40);
    return (uint16_t)((u.bits + 0x7fff + (u.bits >> 16 & 1)) >> 16);
}
static inline float float_from_bf16(uint16_t x)
{
    union { uint32_t bits; float value; } u = {.bits = (uint32_t)x << 16};
    return u.value;
}

/* The bfloat16 products read operands inside weights[0..n) from a bfloat16 copy made now;
   bf16_weights_forget() before the weights change. */
void bf16_weights_use(const float *weights, size_t n);
void bf16_weights_forget(void);

/* x[rows][cols] (no gaps between rows) will be read by several products and will not
   change until bf16_operand_release(x): the bfloat16 products round it once. */
void bf16_operand_hold(const float *x, int rows, int cols);
void bf16_operand_release(const float *x);

/* matmul() with a and b rounded to bfloat16, products summed in float (oneDNN). */
void matmul_bf16(int m, int n, int k, float alpha, MatmulOperand a, MatmulOperand b,
                 float beta, float *c, int ldc);

/* True when oneDNN multiplies bfloat16 numbers with the processor's own instructions. */
bool bf16_hardware(void);

const char *precision_name(Precision precision);   /* "fp32" or "bf16" */
#endif
