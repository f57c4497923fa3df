/*
 * Virtual Trainium accelerator: IOTA -- dst[i] = @scalar + i * @alpha, i the
 * row-major index of the element (docs/hardware.md, "IOTA"). The card's
 * ramp for arange, linspace, logspace and eye: integer destinations with
 * an integer start and step are exact (modulo 2^64, then stored as the
 * arithmetic instructions store), anything else is computed in double and
 * rounded once when stored.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "trainium-isa.h"

/* @d as an int64, if it is one exactly. */
static bool trn_iota_int(double d, int64_t *out)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
        d != floor(d)) {
        return false;
    }
    *out = (int64_t)d;
    return true;
}

uint32_t trn_insn_iota(TrnKernel *k, const struct nisa_insn *in)
{
    double start = trn_f64(le64_to_cpu(in->scalar));
    double step = trn_f64(le64_to_cpu(in->alpha));
    g_autofree double *o = NULL;
    g_autofree int64_t *io = NULL;
    int64_t istart, istep;
    bool exact;
    TrnView dst;
    uint32_t err;

    if (in->subop || in->flags || in->axis) {
        return trn_bad_insn(k, "IOTA: subop, flags or axis set");
    }
    if (!trn_sources_unset(in)) {
        return trn_bad_insn(k, "IOTA: a source operand is set");
    }
    err = trn_view_init(k, &in->dst, TRN_WRITE, &dst);
    if (err) {
        return err;
    }
    if (!dst.numel) {
        return NISA_ERR_NONE;
    }
    exact = trn_is_int(dst.dtype) && trn_iota_int(start, &istart) &&
            trn_iota_int(step, &istep);
    if (exact) {
        io = g_new(int64_t, TRN_CHUNK_ELEMS);
    } else {
        o = g_new(double, TRN_CHUNK_ELEMS);
    }
    for (uint64_t base = 0; base < dst.numel; base += TRN_CHUNK_ELEMS) {
        uint64_t n = MIN(TRN_CHUNK_ELEMS, dst.numel - base);

        if (trn_tick(k, n)) {
            return NISA_ERR_ABORTED;
        }
        for (uint64_t j = 0; j < n; j++) {
            if (exact) {
                io[j] = (int64_t)((uint64_t)istart +
                                  (base + j) * (uint64_t)istep);
            } else {
                o[j] = start + (double)(base + j) * step;
            }
        }
        if (exact) {
            trn_scatter_i64(&dst, base, n, io, true);
        } else {
            trn_scatter(&dst, base, n, o);
        }
    }
    return NISA_ERR_NONE;
}
