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
#include "uapi/drm/neuron_isa.h"

/* Elements are processed in chunks of this many, through double buffers. */
#define TRN_CHUNK_ELEMS 1024

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
    TrnSlot slots[NRN_MAX_SLOTS];
} TrnKernel;

/*
 * A validated tensor operand: every element it names lies inside its slot.
 * Dimensions are padded to NRN_MAX_DIMS with shape 1.
 */
typedef struct TrnView {
    uint8_t *data;        /* element (0, 0, 0, 0) */
    uint8_t dtype;
    unsigned esize;
    uint64_t shape[NRN_MAX_DIMS];
    int64_t stride[NRN_MAX_DIMS];
    uint64_t numel;
    bool contiguous;      /* row-major, no gaps */
} TrnView;

#define TRN_READ  NRN_ACCESS_READ
#define TRN_WRITE NRN_ACCESS_WRITE

/* trainium-tensor.c */
uint32_t trn_view_init(TrnKernel *k, const struct nrn_tensor *t,
                       uint32_t access, TrnView *v);
bool trn_same_shape(const TrnView *a, const TrnView *b);
void *trn_elem(const TrnView *v, const uint64_t idx[NRN_MAX_DIMS]);
double trn_load(uint8_t dtype, const void *p);
void trn_store(uint8_t dtype, void *p, double x);
void trn_gather(const TrnView *v, uint64_t start, uint64_t n, double *out);
void trn_scatter(const TrnView *v, uint64_t start, uint64_t n,
                 const double *in);
double trn_f64(uint64_t bits);

/* trainium-elementwise.c */
uint32_t trn_insn_elementwise(TrnKernel *k, const struct nrn_insn *in);

/* trainium-reduce.c */
uint32_t trn_insn_reduce(TrnKernel *k, const struct nrn_insn *in);
uint32_t trn_insn_softmax(TrnKernel *k, const struct nrn_insn *in);

/* trainium-matmul.c */
uint32_t trn_insn_matmul(TrnKernel *k, const struct nrn_insn *in);

/* trainium-index.c */
uint32_t trn_insn_gather(TrnKernel *k, const struct nrn_insn *in);
uint32_t trn_insn_scatter_add(TrnKernel *k, const struct nrn_insn *in);

/* trainium-core.c */
uint32_t trn_exec_launch(TrnQueue *q, const struct nrn_launch_desc *d);
uint64_t trn_launch_cost(TrnQueue *q, const struct nrn_launch_desc *d,
                         uint64_t limit);

/* Log a malformed instruction and return NRN_ERR_BAD_INSN. */
uint32_t trn_bad_insn(TrnKernel *k, const char *why);

#endif /* HW_MISC_TRAINIUM_ISA_H */
