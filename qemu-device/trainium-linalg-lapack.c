/*
 * Virtual Trainium accelerator: LINALG, one batch entry on the LAPACK (and
 * BLAS trsm) inside Debian's OpenBLAS, in float32 column-major buffers, or
 * float64 ones (the d routines) when an operand is F64 (docs/hardware.md,
 * "LINALG"). Every operand was checked against the
 * subop's contract before (trainium-linalg.c), so LAPACK's own argument
 * checks are never reached.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <cblas.h>
#include "qemu/log.h"
#include "trace.h"
#include "trainium-linalg.h"

/*
 * The LAPACK routines used (Fortran calling convention, hidden lengths),
 * of element type @T, named with prefix @P (s: float, d: double).
 */
#define LA_LAPACK_ROUTINES(T, P)                                             \
void P##potrf_(const char *uplo, const int *n, T *a, const int *lda,         \
             int *info, size_t);                                             \
void P##getrf_(const int *m, const int *n, T *a, const int *lda, int *ipiv,  \
             int *info);                                                     \
void P##getrs_(const char *trans, const int *n, const int *nrhs, const T *a, \
             const int *lda, const int *ipiv, T *b, const int *ldb,          \
             int *info, size_t);                                             \
void P##geqrf_(const int *m, const int *n, T *a, const int *lda, T *tau,     \
             T *work, const int *lwork, int *info);                          \
void P##orgqr_(const int *m, const int *n, const int *k, T *a,               \
             const int *lda, const T *tau, T *work, const int *lwork,        \
             int *info);                                                     \
void P##ormqr_(const char *side, const char *trans, const int *m, const int *n, \
             const int *k, const T *a, const int *lda, const T *tau,         \
             T *c, const int *ldc, T *work, const int *lwork,                \
             int *info, size_t, size_t);                                     \
void P##gesdd_(const char *jobz, const int *m, const int *n, T *a,           \
             const int *lda, T *s, T *u, const int *ldu, T *vt,              \
             const int *ldvt, T *work, const int *lwork, int *iwork,         \
             int *info, size_t);                                             \
void P##sytrf_(const char *uplo, const int *n, T *a, const int *lda, int *ipiv, \
             T *work, const int *lwork, int *info, size_t);                  \
void P##sytrs_(const char *uplo, const int *n, const int *nrhs, const T *a,  \
             const int *lda, const int *ipiv, T *b, const int *ldb,          \
             int *info, size_t);                                             \
void P##gels_(const char *trans, const int *m, const int *n, const int *nrhs, \
            T *a, const int *lda, T *b, const int *ldb, T *work,             \
            const int *lwork, int *info, size_t);                            \
void P##gelsy_(const int *m, const int *n, const int *nrhs, T *a,            \
             const int *lda, T *b, const int *ldb, int *jpvt,                \
             const T *rcond, int *rank, T *work, const int *lwork,           \
             int *info);                                                     \
void P##syevd_(const char *jobz, const char *uplo, const int *n, T *a,       \
             const int *lda, T *w, T *work, const int *lwork,                \
             int *iwork, const int *liwork, int *info, size_t, size_t);
LA_LAPACK_ROUTINES(float, s)
LA_LAPACK_ROUTINES(double, d)

static uint8_t *la_at(const La *la, const TrnView *v, uint64_t r, uint64_t c)
{
    return v->data + ((int64_t)la->b0 * v->stride[0] +
                      (int64_t)la->b1 * v->stride[1] +
                      (int64_t)r * v->stride[2] + (int64_t)c * v->stride[3]) *
                     (int64_t)v->esize;
}

static void la_put_nan(const La *la, const TrnView *v)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            trn_store(v->dtype, la_at(la, v, r, c), NAN);
        }
    }
}

static void la_put_int(const La *la, const TrnView *v, uint64_t i, int64_t x)
{
    trn_store_i64(v->dtype, la_at(la, v, 0, i), x, false);
}

/* Pivots (1-based, as LAPACK's) of the current entry, each in [1, @n]. */
static bool la_get_pivots(const La *la, const TrnView *v, int *ipiv, uint64_t n)
{
    for (uint64_t i = 0; i < v->shape[3]; i++) {
        int64_t p = trn_load_i64(v->dtype, la_at(la, v, 0, i));

        if (p < 1 || (uint64_t)p > n) {
            return false;
        }
        ipiv[i] = (int)p;
    }
    return true;
}

/*
 * SYTRF's pivots (lower form) of the current entry: p > 0 a 1x1 block
 * (rows k and p exchanged), p = piv[k + 1] < 0 a 2x2 block; all in [1, n].
 */
static bool la_get_ldl_pivots(const La *la, const TrnView *v, int *ipiv, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        int64_t p = trn_load_i64(v->dtype, la_at(la, v, 0, i));

        if (p == 0 || p > (int64_t)n || p < -(int64_t)n) {
            return false;
        }
        ipiv[i] = (int)p;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (ipiv[i] < 0) {
            if (i + 1 >= n || ipiv[i + 1] != ipiv[i]) {
                return false;
            }
            i++;
        }
    }
    return true;
}

/* The typed half, once per element type (trainium-linalg-typed.h). */
#define LA_T float
#define LA(name) s##name
#define LA_CBLAS(name) cblas_s##name
#define LA_FN(name) name##_f32
#include "trainium-linalg-typed.h"
#undef LA_T
#undef LA
#undef LA_CBLAS
#undef LA_FN
#define LA_T double
#define LA(name) d##name
#define LA_CBLAS(name) cblas_d##name
#define LA_FN(name) name##_f64
#include "trainium-linalg-typed.h"
