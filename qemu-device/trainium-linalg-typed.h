/*
 * Virtual Trainium accelerator: LINALG's element-typed half, included
 * twice by trainium-linalg-lapack.c -- LA_T float with LAPACK's s
 * routines, LA_T double with its d routines; LA(name), LA_CBLAS(name)
 * and LA_FN(name) name the routine or the function of that type. One
 * batch entry: the matrices copied between the operands and column-major
 * LA_T buffers, and the LAPACK call.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

/* The current entry's matrix @v into column-major @a (leading dim @ld). */
static void LA_FN(la_get)(const La *la, const TrnView *v, LA_T *a, uint64_t ld)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            a[r + c * ld] = (LA_T)trn_load(v->dtype, la_at(la, v, r, c));
        }
    }
}

static void LA_FN(la_put)(const La *la, const TrnView *v, const LA_T *a, uint64_t ld)
{
    for (uint64_t c = 0; c < v->shape[3]; c++) {
        for (uint64_t r = 0; r < v->shape[2]; r++) {
            trn_store(v->dtype, la_at(la, v, r, c), a[r + c * ld]);
        }
    }
}

static bool LA_FN(la_finite)(const LA_T *a, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) {
            return false;
        }
    }
    return true;
}

/* Workspace of a LAPACK routine, from its query (at least 1). */
static int LA_FN(la_lwork)(LA_T q)
{
    return (int)MAX(1.0, MIN(q, (LA_T)(64 << 20)));
}

/*
 * PERM: the permutation matrix P (A = P L U) of LAPACK's pivots: row i was
 * exchanged with row ipiv[i], in order; P[perm[i]][i] = 1.
 */
static uint32_t LA_FN(la_perm)(La *la, LA_T *p)
{
    uint64_t m = la->d.shape[2], k = la->s[0].shape[3];
    int *ipiv = (int *)(p + m * m);
    g_autofree uint32_t *perm = g_new(uint32_t, MAX(m, 1));

    if (!la_get_pivots(la, &la->s[0], ipiv, m)) {
        TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                      "PERM: a pivot out of range");
        return NISA_ERR_BAD_INDEX;
    }
    for (uint64_t i = 0; i < m; i++) {
        perm[i] = i;
    }
    for (uint64_t i = 0; i < k; i++) {
        uint32_t t = perm[i];

        perm[i] = perm[ipiv[i] - 1];
        perm[ipiv[i] - 1] = t;
    }
    memset(p, 0, m * m * sizeof(LA_T));
    for (uint64_t i = 0; i < m; i++) {
        p[perm[i] + i * m] = 1;      /* column-major: row perm[i], column i */
    }
    LA_FN(la_put)(la, &la->d, p, MAX(m, 1));
    return NISA_ERR_NONE;
}

/*
 * One batch entry. @a (work elements) holds src0's matrix, column-major
 * with leading dim m. Returns an NISA_ERR_*.
 */
uint32_t LA_FN(trn_la_entry)(La *la, uint16_t op, LA_T *a)
{
    const TrnView *s0 = &la->s[0];
    int m = (int)s0->shape[2], n = (int)s0->shape[3], k = MIN(m, n), info = 0;
    int lda = MAX(m, 1), lwork = -1;
    char up = la->flags & NISA_IF_LA_UPPER ? 'U' : 'L';
    char tr = la->flags & NISA_IF_LA_TRANS ? 'T' : 'N';
    bool right = la->flags & NISA_IF_LA_RIGHT;
    LA_T *x = a + (uint64_t)m * n, q = 0;
    g_autofree LA_T *work = NULL;
    g_autofree int *ipiv = NULL;

    if (op == NISA_LA_PERM) {
        return LA_FN(la_perm)(la, a);
    }
    LA_FN(la_get)(la, s0, a, lda);
    switch ((enum nisa_linalg)op) {
    case NISA_LA_POTRF:
        LA(potrf_)(&up, &n, a, &lda, &info, 1);
        for (int c = 0; c < n; c++) {
            for (int r = 0; r < n; r++) {
                if (up == 'U' ? r > c : r < c) {
                    a[r + (uint64_t)c * lda] = 0;
                }
            }
        }
        LA_FN(la_put)(la, &la->d, a, lda);
        la_put_int(la, &la->s[1], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_GETRF:
        ipiv = g_new0(int, MAX(k, 1));
        LA(getrf_)(&m, &n, a, &lda, ipiv, &info);
        LA_FN(la_put)(la, &la->d, a, lda);
        for (int i = 0; i < k; i++) {
            la_put_int(la, &la->s[1], i, ipiv[i]);
        }
        la_put_int(la, &la->s[2], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_GETRS: {
        int r = (int)la->s[2].shape[3];

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "GETRS: a pivot out of range");
            return NISA_ERR_BAD_INDEX;
        }
        LA_FN(la_get)(la, &la->s[2], x, lda);
        if (n && r) {
            LA(getrs_)(&tr, &n, &r, a, &lda, ipiv, x, &lda, &info, 1);
        }
        LA_FN(la_put)(la, &la->d, x, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_TRSM: {
        int br = (int)la->s[1].shape[2], bc = (int)la->s[1].shape[3];
        int ldb = MAX(br, 1);

        LA_FN(la_get)(la, &la->s[1], x, ldb);
        if (br && bc) {
            LA_CBLAS(trsm)(CblasColMajor, right ? CblasRight : CblasLeft,
                        up == 'U' ? CblasUpper : CblasLower,
                        tr == 'T' ? CblasTrans : CblasNoTrans,
                        la->flags & NISA_IF_LA_UNIT ? CblasUnit : CblasNonUnit,
                        br, bc, 1.0, a, lda, x, ldb);
        }
        LA_FN(la_put)(la, &la->d, x, ldb);
        return NISA_ERR_NONE;
    }
    case NISA_LA_GEQRF:
        if (k) {
            LA(geqrf_)(&m, &n, a, &lda, x, &q, &lwork, &info);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(geqrf_)(&m, &n, a, &lda, x, work, &lwork, &info);
        }
        LA_FN(la_put)(la, &la->d, a, lda);
        LA_FN(la_put)(la, &la->s[1], x, 1);
        return NISA_ERR_NONE;
    case NISA_LA_ORGQR: {
        int t = (int)la->s[1].shape[3];

        LA_FN(la_get)(la, &la->s[1], x, 1);
        if (n) {
            LA(orgqr_)(&m, &n, &t, a, &lda, x, &q, &lwork, &info);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(orgqr_)(&m, &n, &t, a, &lda, x, work, &lwork, &info);
        }
        LA_FN(la_put)(la, &la->d, a, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_ORMQR: {
        int t = (int)la->s[1].shape[3];
        int cm = (int)la->s[2].shape[2], cn = (int)la->s[2].shape[3];
        int ldc = MAX(cm, 1);
        char side = right ? 'R' : 'L';
        LA_T *c = x + t;

        LA_FN(la_get)(la, &la->s[1], x, 1);
        LA_FN(la_get)(la, &la->s[2], c, ldc);
        if (cm && cn && t) {
            LA(ormqr_)(&side, &tr, &cm, &cn, &t, a, &lda, x, c, &ldc, &q, &lwork,
                    &info, 1, 1);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(ormqr_)(&side, &tr, &cm, &cn, &t, a, &lda, x, c, &ldc, work,
                    &lwork, &info, 1, 1);
        }
        LA_FN(la_put)(la, &la->d, c, ldc);
        return NISA_ERR_NONE;
    }
    case NISA_LA_GESDD: {
        bool novec = la->flags & NISA_IF_LA_NOVEC;
        bool full = la->flags & NISA_IF_LA_FULL;
        char jobz = novec ? 'N' : full ? 'A' : 'S';
        int uc = full ? m : k, vr = full ? n : k;
        int ldu = MAX(m, 1), ldvt = MAX(vr, 1);
        LA_T *u = x + k, *vt = u + (novec ? 0 : (uint64_t)m * uc);

        if (!LA_FN(la_finite)(a, (uint64_t)m * n)) {
            info = 1;
        } else if (k) {
            ipiv = g_new(int, 8 * k);
            LA(gesdd_)(&jobz, &m, &n, a, &lda, x, u, &ldu, vt, &ldvt, &q, &lwork,
                    ipiv, &info, 1);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(gesdd_)(&jobz, &m, &n, a, &lda, x, u, &ldu, vt, &ldvt, work,
                    &lwork, ipiv, &info, 1);
        } else if (!novec) {
            /* An empty matrix: its full U and Vh are identities. */
            for (int i = 0; i < m * uc; i++) {
                u[i] = i % (m + 1) == 0;
            }
            for (int i = 0; i < vr * n; i++) {
                vt[i] = i % (vr + 1) == 0;
            }
        }
        if (info) {
            la_put_nan(la, &la->d);
            if (!novec) {
                la_put_nan(la, &la->s[1]);
                la_put_nan(la, &la->s[2]);
            }
            return NISA_ERR_NONE;
        }
        LA_FN(la_put)(la, &la->d, x, 1);
        if (!novec) {
            LA_FN(la_put)(la, &la->s[1], u, ldu);
            LA_FN(la_put)(la, &la->s[2], vt, ldvt);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_SYEVD: {
        bool novec = la->flags & NISA_IF_LA_NOVEC;
        char jobz = novec ? 'N' : 'V';
        int iq = 0, liwork = -1;

        if (!LA_FN(la_finite)(a, (uint64_t)n * n)) {
            info = 1;
        } else if (n) {
            LA(syevd_)(&jobz, &up, &n, a, &lda, x, &q, &lwork, &iq, &liwork,
                    &info, 1, 1);
            lwork = LA_FN(la_lwork)(q);
            liwork = MAX(1, MIN(iq, 64 << 20));
            work = g_new(LA_T, lwork);
            ipiv = g_new(int, liwork);
            LA(syevd_)(&jobz, &up, &n, a, &lda, x, work, &lwork, ipiv, &liwork,
                    &info, 1, 1);
        }
        if (info) {
            la_put_nan(la, &la->d);
            if (!novec) {
                la_put_nan(la, &la->s[1]);
            }
            return NISA_ERR_NONE;
        }
        LA_FN(la_put)(la, &la->d, x, 1);
        if (!novec) {
            LA_FN(la_put)(la, &la->s[1], a, lda);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_LUDET: {
        double det = 1, logabs = 0, sign = 1;

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "LUDET: a pivot out of range");
            return NISA_ERR_BAD_INDEX;
        }
        for (int i = 0; i < n; i++) {
            if (ipiv[i] != i + 1) {
                det = -det;      /* a row exchange */
            }
        }
        sign = det;
        for (int i = 0; i < n; i++) {
            double v = a[i + (uint64_t)i * lda];

            det *= v;
            logabs += log(fabs(v));
            sign *= isnan(v) ? v : v > 0 ? 1 : v < 0 ? -1 : 0;
        }
        if (la->flags & NISA_IF_LA_LOG) {
            trn_store(la->d.dtype, la_at(la, &la->d, 0, 0), logabs);
            trn_store(la->s[2].dtype, la_at(la, &la->s[2], 0, 0), sign);
        } else {
            trn_store(la->d.dtype, la_at(la, &la->d, 0, 0), det);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_SYTRF:
        ipiv = g_new0(int, MAX(n, 1));
        if (n) {
            LA(sytrf_)("L", &n, a, &lda, ipiv, &q, &lwork, &info, 1);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(sytrf_)("L", &n, a, &lda, ipiv, work, &lwork, &info, 1);
        }
        for (int c = 1; c < n; c++) {
            for (int r = 0; r < c; r++) {
                a[r + (uint64_t)c * lda] = 0;   /* the upper part is not D */
            }
        }
        LA_FN(la_put)(la, &la->d, a, lda);
        for (int i = 0; i < n; i++) {
            la_put_int(la, &la->s[1], i, ipiv[i]);
        }
        la_put_int(la, &la->s[2], 0, info);
        return NISA_ERR_NONE;
    case NISA_LA_SYTRS: {
        int r = (int)la->s[2].shape[3];

        ipiv = g_new0(int, MAX(n, 1));
        if (!la_get_ldl_pivots(la, &la->s[1], ipiv, n)) {
            TRN_GUEST_ERR(insn, "queue %u: LINALG: %s", la->k->q->idx,
                          "SYTRS: malformed pivots");
            return NISA_ERR_BAD_INDEX;
        }
        LA_FN(la_get)(la, &la->s[2], x, lda);
        if (n && r) {
            LA(sytrs_)("L", &n, &r, a, &lda, ipiv, x, &lda, &info, 1);
        }
        LA_FN(la_put)(la, &la->d, x, lda);
        return NISA_ERR_NONE;
    }
    case NISA_LA_GELS:
    case NISA_LA_GELSY: {
        int r = (int)la->s[1].shape[3], ldb = MAX(MAX(m, n), 1), rank = 0;
        LA_T rc = (LA_T)la->rcond;

        /* B in the first m of max(m, n) rows; LAPACK leaves X in the first n. */
        memset(x, 0, sizeof(LA_T) * (uint64_t)ldb * r);
        LA_FN(la_get)(la, &la->s[1], x, ldb);
        if (r && k && op == NISA_LA_GELS) {
            LA(gels_)("N", &m, &n, &r, a, &lda, x, &ldb, &q, &lwork, &info, 1);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(gels_)("N", &m, &n, &r, a, &lda, x, &ldb, work, &lwork, &info, 1);
        } else if (r && k) {
            ipiv = g_new0(int, n);      /* every column free to move */
            LA(gelsy_)(&m, &n, &r, a, &lda, x, &ldb, ipiv, &rc, &rank, &q, &lwork,
                    &info);
            lwork = LA_FN(la_lwork)(q);
            work = g_new(LA_T, lwork);
            LA(gelsy_)(&m, &n, &r, a, &lda, x, &ldb, ipiv, &rc, &rank, work,
                    &lwork, &info);
        }
        if (info) {          /* GELS: A is rank deficient */
            la_put_nan(la, &la->d);
        } else {
            LA_FN(la_put)(la, &la->d, x, ldb);
        }
        if (op == NISA_LA_GELSY) {
            la_put_int(la, &la->s[2], 0, rank);
        }
        return NISA_ERR_NONE;
    }
    case NISA_LA_PERM:
    case NISA_NUM_LINALG:
        break;
    }
    return NISA_ERR_BAD_INSN;
}
