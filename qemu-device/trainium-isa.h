/*
 * Virtual Trainium accelerator: NeuronCore execution internals -- tensor
 * operands, element conversion, and the instruction families.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_MISC_TRAINIUM_ISA_H
#define HW_MISC_TRAINIUM_ISA_H

#include <math.h>
#include "trainium.h"
#include "neuron_isa.h"

/* Elements are processed in chunks of this many, through double buffers. */
#define TRN_CHUNK_ELEMS 1024

/*
 * The device's arithmetic loops are built twice, for the host's AVX2 (4
 * doubles per vector instruction, twice SSE2's: conversions and double
 * arithmetic are what they spend their time on) and for the baseline; the
 * loader picks one (an ifunc). Their helpers are inlined into both.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define TRN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRN_CLONES
#endif

/*
 * Work (elements moved or multiply-adds) between two checks for a reset or
 * a pause: about a millisecond on one host core, so that a reset never
 * waits long for an instruction, whatever its operands (docs/hardware.md,
 * "Reset").
 */
#define TRN_ABORT_GRAIN (1u << 18)

typedef struct TrnSlot {
    uint64_t base;
    uint64_t size;
    uint32_t access;
} TrnSlot;

/* The state of one kernel launch. */
typedef struct TrnKernel {
    TrnQueue *q;
    TrnState *s;
    unsigned nslots;
    TrnSlot slots[NHW_MAX_SLOTS];
    uint64_t work;               /* since the last check for a reset */
    uint64_t ninsns;
    struct nisa_insn *code;       /* the kernel, copied out once */
    uint64_t dirty_lo, dirty_hi; /* device memory the instruction writes */
    struct TrnExprRegs *expr_regs; /* EXPR's register file, made once */
    struct TrnExpr *expr;        /* EXPR's decoded program, made once */
} TrnKernel;

/*
 * A validated tensor operand: every element it names lies inside its slot.
 * Dimensions are right-aligned and padded to NISA_MAX_DIMS with shape 1; the
 * product of the extents (an extent of 0 counting as 1) is at most
 * NISA_MAX_ELEMS, so no product of extents a caller forms can overflow.
 */
typedef struct TrnView {
    uint8_t *data;        /* element (0, 0, 0, 0) */
    uint8_t dtype;
    unsigned esize;
    uint64_t shape[NISA_MAX_DIMS];
    int64_t stride[NISA_MAX_DIMS];
    uint64_t numel;
    bool contiguous;      /* row-major, no gaps */
} TrnView;

#define TRN_READ  NISA_ACCESS_READ
#define TRN_WRITE NISA_ACCESS_WRITE

/*
 * @v, a complex64 view, as the float32 view of its part @part (0 real, 1
 * imaginary): strides doubled, not contiguous. The instructions that work
 * on complex64 part by part (SCATTER_ADD, SCAN SUM) run on these.
 */
static inline void trn_view_c64_part(TrnView *v, unsigned part)
{
    v->dtype = NISA_F32;
    v->esize = 4;
    v->data += 4 * part;
    for (unsigned d = 0; d < NISA_MAX_DIMS; d++) {
        v->stride[d] *= 2;
    }
    v->contiguous = false;
}

/* @x rounded to float32, a NaN made the quiet NaN with its sign ("Numerics"). */
static inline float trn_to_f32(double x)
{
    float f = (float)x;

    if (isnan(f)) {
        return signbit(f) ? -NAN : NAN;
    }
    return f;
}

/* trainium-tensor.c */
uint32_t trn_view_init(TrnKernel *k, const struct nisa_tensor *t,
                       uint32_t access, TrnView *v);
bool trn_same_shape(const TrnView *a, const TrnView *b);
/*
 * The bytes [*@lo, *@hi) that @ndim dims of @shape and @stride (elements of
 * @esize bytes) from @data touch; every extent at least 1.
 */
void trn_byte_span(uint8_t *data, unsigned esize, const uint64_t *shape,
                   const int64_t *stride, unsigned ndim, uint8_t **lo,
                   uint8_t **hi);
/* Whether two operands touch a byte in common (by their spans). */
bool trn_overlap(const TrnView *a, const TrnView *b);
/*
 * No two elements of @ndim dims of @shape and @stride share an address:
 * the dims of extent > 1, by stride, each step at least the span of the
 * ones inside it (sufficient, not necessary).
 */
bool trn_strides_nest(const uint64_t *shape, const int64_t *stride,
                      unsigned ndim);
void *trn_elem(const TrnView *v, const uint64_t idx[NISA_MAX_DIMS]);
double trn_load(uint8_t dtype, const void *p);
void trn_store(uint8_t dtype, void *p, double x);
void trn_gather(const TrnView *v, uint64_t start, uint64_t n, double *out);
void trn_scatter(const TrnView *v, uint64_t start, uint64_t n,
                 const double *in);
double trn_f64(uint64_t bits);
/* Float32 operands (v->dtype F32) as floats; stores make a NaN quiet. */
void trn_gather_f32(const TrnView *v, uint64_t start, uint64_t n, float *out);
void trn_scatter_f32(const TrnView *v, uint64_t start, uint64_t n,
                     const float *in);

/* Integer elements, exactly (NISA_DTYPES' INT types; "Numerics"). */
static inline bool trn_is_int(uint8_t dtype)
{
    return nisa_dtype_is_int(dtype);
}
int64_t trn_load_i64(uint8_t dtype, const void *p);
/*
 * Store @x: I32 wraps modulo 2^32 with @wrap, else saturates; U8, I8 and
 * I16 always wrap modulo 2^width (PyTorch's casts and arithmetic do).
 */
void trn_store_i64(uint8_t dtype, void *p, int64_t x, bool wrap);
void trn_gather_i64(const TrnView *v, uint64_t start, uint64_t n,
                    int64_t *out);
void trn_scatter_i64(const TrnView *v, uint64_t start, uint64_t n,
                     const int64_t *in, bool wrap);

/*
 * Account @work done by the instruction; every TRN_ABORT_GRAIN of it, see
 * whether the queue is being reset (true: give up with NISA_ERR_ABORTED) or
 * paused (waits here until resumed). Call it in every loop whose trip count
 * a guest value sets.
 */
static inline bool trn_tick(TrnKernel *k, uint64_t work)
{
    k->work += work + 1;
    if (k->work < TRN_ABORT_GRAIN) {
        return false;
    }
    k->work = 0;
    return trn_queue_aborting(k->q);
}

/*
 * No source operand is set (all bytes zero): what the instructions that
 * take none (TIMESTAMP, RANDOM) require, so that a later ISA may use them.
 */
static inline bool trn_sources_unset(const struct nisa_insn *in)
{
    static const struct nisa_tensor zero;

    for (unsigned i = 0; i < ARRAY_SIZE(in->src); i++) {
        if (memcmp(&in->src[i], &zero, sizeof(zero))) {
            return false;
        }
    }
    return true;
}

/*
 * Run @fn(@arg, worker, i) for every chunk i in [0, @n): on the device's
 * helper threads and the calling worker (worker 0; helpers 1 to
 * trn_pool_workers() - 1, so per-worker scratch can be indexed by it), or
 * on the worker alone when another instruction has the helpers. Each
 * chunk must be bounded work, about TRN_ABORT_GRAIN to a few times it: a
 * reset or pause is seen between chunks. Chunks must not depend on each
 * other. Returns NISA_ERR_ABORTED if the queue is reset meanwhile (some
 * chunks then did not run), else NISA_ERR_NONE.
 */
typedef void TrnChunkFn(void *arg, unsigned worker, uint64_t i);
uint32_t trn_pool_run(TrnKernel *k, uint64_t n, TrnChunkFn *fn, void *arg);

/* trainium-elementwise.c */
uint32_t trn_insn_elementwise(TrnKernel *k, const struct nisa_insn *in);

/* trainium-reduce.c */
uint32_t trn_insn_reduce(TrnKernel *k, const struct nisa_insn *in);
uint32_t trn_insn_softmax(TrnKernel *k, const struct nisa_insn *in);

/* trainium-sort.c */
uint32_t trn_insn_sort(TrnKernel *k, const struct nisa_insn *in);
uint32_t trn_insn_scan(TrnKernel *k, const struct nisa_insn *in);

/* trainium-matmul.c */
uint32_t trn_insn_matmul(TrnKernel *k, const struct nisa_insn *in);
/* The host threads one MATMUL runs on (the worker and the helpers). */
unsigned trn_matmul_threads(TrnState *s);
bool trn_matmul_check_threads(TrnState *s, Error **errp);

/* trainium-index.c */
uint32_t trn_insn_gather(TrnKernel *k, const struct nisa_insn *in);
uint32_t trn_insn_scatter_add(TrnKernel *k, const struct nisa_insn *in);

/* trainium-scatter.c */
uint32_t trn_insn_scatter(TrnKernel *k, const struct nisa_insn *in);

/* trainium-random.c */
void trn_philox4x32_10(uint64_t key, uint64_t counter, uint32_t w[4]);
/* Work of RANDOM into @numel elements, in COPY elements (saturated). */
uint64_t trn_random_cost(uint64_t numel);
uint32_t trn_insn_random(TrnKernel *k, const struct nisa_insn *in);

/* trainium-iota.c */
uint32_t trn_insn_iota(TrnKernel *k, const struct nisa_insn *in);

/* trainium-expr.c: the EXPR at @at and its continuations (*@len of them). */
uint32_t trn_insn_expr(TrnKernel *k, uint64_t at, uint64_t *len);

/* trainium-fft.c */
uint32_t trn_insn_fft(TrnKernel *k, const struct nisa_insn *in);

/* trainium-linalg.c */
uint32_t trn_insn_linalg(TrnKernel *k, const struct nisa_insn *in);

/* trainium-core.c */
TrnKernel *trn_kernel_load(TrnQueue *q, const struct nhw_launch_desc *d,
                           uint64_t max_insns, uint32_t *err);
uint64_t trn_kernel_cost(const TrnKernel *k, uint64_t limit);
/*
 * Run a loaded kernel; on an instruction's error, *@insn is that
 * instruction's index (else left alone).
 */
uint32_t trn_kernel_run(TrnKernel *k, const struct nhw_launch_desc *d,
                        uint32_t *insn);
void trn_kernel_free(TrnKernel *k);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TrnKernel, trn_kernel_free)

/* Log a malformed instruction and return NISA_ERR_BAD_INSN. */
uint32_t trn_bad_insn(TrnKernel *k, const char *why);

#endif /* HW_MISC_TRAINIUM_ISA_H */
