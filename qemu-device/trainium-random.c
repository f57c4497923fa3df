/*
 * Virtual Trainium accelerator: RANDOM -- counter-based random numbers
 * (docs/hardware.md, "Random numbers").
 *
 * The generator is Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11; the Random123 library's
 * philox4x32 with 10 rounds). The key is the 64-bit @scalar (the seed),
 * and element i of dst, in row-major order, is made from the four words of
 * the block of counter @alpha + i (modulo 2^64; c0 its low 32 bits, c1 its
 * high, c2 = c3 = 0). Every element depends only on (seed, counter): the
 * result does not depend on how the card chunks the work, nor on dst's
 * strides.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"

#define TRN_PHILOX_M0 0xD2511F53u
#define TRN_PHILOX_M1 0xCD9E8D57u
#define TRN_PHILOX_W0 0x9E3779B9u   /* golden ratio */
#define TRN_PHILOX_W1 0xBB67AE85u   /* sqrt(3) - 1 */

/*
 * Work of one element, in the elements of a COPY (trn_kernel_cost() and
 * the reset checks): ten rounds of two 32x32 multiplies, and for NORMAL a
 * log, a sqrt and a cos.
 */
#define TRN_RANDOM_COST 8

void trn_philox4x32_10(uint64_t key, uint64_t counter, uint32_t w[4])
{
    uint32_t c0 = (uint32_t)counter, c1 = counter >> 32, c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)key, k1 = key >> 32;

    for (unsigned r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)TRN_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)TRN_PHILOX_M1 * c2;

        if (r) {
            k0 += TRN_PHILOX_W0;
            k1 += TRN_PHILOX_W1;
        }
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

/* Bits of significand (implicit bit included) of a float dtype; 0 if none. */
static unsigned trn_float_precision(uint8_t dtype)
{
    switch ((enum nisa_dtype)dtype) {
    case NISA_F32:
        return 24;
    case NISA_BF16:
        return 8;
    case NISA_F16:
        return 11;
    case NISA_F64:
        return 53;
    case NISA_I32:
    case NISA_I64:
    case NISA_BOOL:
    case NISA_U8:
    case NISA_I8:
    case NISA_I16:
    case NISA_C64:      /* refused before (trn_insn_exec()'s gate) */
    case NISA_NUM_DTYPES:
        break;
    }
    return 0;
}

uint64_t trn_random_cost(uint64_t numel)
{
    return numel > UINT64_MAX / TRN_RANDOM_COST ? UINT64_MAX :
           numel * TRN_RANDOM_COST;
}

/* @n elements from row-major index @start, into @o (floats) or @io. */
static void trn_random_chunk(enum nisa_random dist, uint8_t dtype,
                             uint64_t seed, uint64_t counter, uint64_t n,
                             double *o, int64_t *io)
{
    unsigned p = trn_float_precision(dtype);
    double ulp = ldexp(1.0, -(int)p);  /* 2^-p */
    uint32_t w[4];

    for (uint64_t j = 0; j < n; j++) {
        trn_philox4x32_10(seed, counter + j, w);
        switch (dist) {
        case NISA_RNG_UNIFORM:
            /* The top p bits: k * 2^-p, k < 2^p, exact in dtype (F64:
             * the top 53 of w1 << 32 | w0). */
            o[j] = p > 32 ? (double)(((uint64_t)w[1] << 32 | w[0]) >> (64 - p)) * ulp
                          : (double)(w[0] >> (32 - p)) * ulp;
            break;
        case NISA_RNG_NORMAL: {
            double u1 = ((double)w[0] + 1.0) * 0x1p-32;  /* (0, 1] */
            double u2 = (double)w[1] * 0x1p-32;          /* [0, 1) */

            o[j] = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
            break;
        }
        case NISA_RNG_BITS:
            /* U8, I8, I16 keep the low bits of w[0] (their stores wrap). */
            io[j] = dtype == NISA_I64 ? (int64_t)((uint64_t)w[1] << 32 | w[0]) :
                    dtype == NISA_BOOL ? (int64_t)(w[0] & 1) :
                    (int64_t)(int32_t)w[0];
            break;
        case NISA_NUM_RANDOM:
            g_assert_not_reached(); /* trn_insn_random() checked @subop */
        }
    }
}

uint32_t trn_insn_random(TrnKernel *k, const struct nisa_insn *in)
{
    unsigned sub = le16_to_cpu(in->subop);
    uint64_t seed = le64_to_cpu(in->scalar), base = le64_to_cpu(in->alpha);
    g_autofree double *o = NULL;
    g_autofree int64_t *io = NULL;
    bool floating;
    TrnView dst;
    uint32_t err;

    if (sub >= NISA_NUM_RANDOM) {
        return trn_bad_insn(k, "RANDOM: unknown distribution");
    }
    if (in->flags || in->axis) {
        return trn_bad_insn(k, "RANDOM: flags or axis set");
    }
    if (!trn_sources_unset(in)) {
        return trn_bad_insn(k, "RANDOM: a source operand is set");
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    if (err) {
        return err;
    }
    floating = trn_float_precision(dst.dtype) != 0;
    if ((sub == NISA_RNG_BITS) == floating) {
        return trn_bad_insn(k, sub == NISA_RNG_BITS ?
                            "RANDOM: bits into a floating-point destination" :
                            "RANDOM: uniform or normal into an integer destination");
    }
    if (!dst.numel) {
        return NISA_ERR_NONE;
    }
    if (floating) {
        o = g_new(double, TRN_CHUNK_ELEMS);
    } else {
        io = g_new(int64_t, TRN_CHUNK_ELEMS);
    }
    for (uint64_t start = 0; start < dst.numel; start += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, dst.numel - start);

        if (trn_tick(k, trn_random_cost(n))) {
            return NISA_ERR_ABORTED;
        }
        trn_random_chunk(sub, dst.dtype, seed, base + start, n, o, io);
        if (floating) {
            trn_scatter(&dst, start, n, o);
        } else {
            trn_scatter_i64(&dst, start, n, io, true);
        }
    }
    return NISA_ERR_NONE;
}
