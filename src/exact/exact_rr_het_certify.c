/* Certification of the heterogeneous bracket's Fourier sums (section 7):
 * which frequencies j have |Psi_j| certified below 2^-64 (dropped) and
 * which are evaluated (significant).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Certification.  |Psi_j| is bounded over whole intervals of j by the
 *   exact suprema of the two-point
 *   moduli |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x over the interval
 *   in two stages.  First, by concavity (Jensen for sqrt, 1 - x <= e^{-x}),
 *     log |Psi(w)| <= -(1/4) sum_c W_c (1 - cos(2 w m_c)) = -(V - D(w)) / 4,
 *   W_c = k_t w_c (1 - t_c^2) summed per position into V_m, V = sum V_m,
 *   D(w) = sum_m V_m cos(2 w m): a trigonometric polynomial, sampled at
 *   w_l = pi l / M by one radix-2 FFT of size M (error <= 32 u log2(M)
 *   sqrt(M) V, Higham Thm 24.2 with accurate twiddles) and bounded between
 *   samples by |D'| <= 2 sum_m m V_m; M is chosen so that this slack is at
 *   most V / 4.  Then every lattice frequency in a sample interval that
 *   this does not certify goes to the exact suprema of the two-point moduli
 *   |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x over intervals of j (the
 *   minimum of sin^2 over a range of x, from exact integer phases),
 *   |phi_t| <= sum_c w_c |phi_c|, halving failing intervals down to single
 *   frequencies, which are then evaluated ("significant"): the main lobe
 *   near j = 0 (about 28 frequencies for any count, as the window spans
 *   about 19 standard deviations), the lattice parity peak near j = N/2 and
 *   any resonances.
 */
#include <stdlib.h>
#include "exact/exact_rr_het_internal.h"

/* windows with at most this many frequencies j >= 1 are summed over all of them */
#define HET_DIRECT_J 2048
/* budget of elementary evaluations (type x frequency or type x interval)
 * per lattice build, about 1 s; a build that needs more is refused and a
 * coarser lattice kept */
#define HET_WORK_MAX 1e8
/* the FFT of the certification bound: at most 2^21 samples (32 MB) */
#define HET_FFT_MAX (1u << 21)
/* significant frequencies per law (every evaluation of a bound costs one
 * term per significant frequency, and an eps query some hundreds of
 * evaluations): a law that needs more is refused and a coarser lattice
 * used */
#define HET_SIG_MAX (1u << 15)

/* min over real j in [j1, j2] of sin^2(2 pi j m / N) (m >= 0), from the
 * exact residues of 2 j m mod N (sin^2(pi x) is unimodal on (0, 1), so the
 * minimum is at an end unless [2 j1 m, 2 j2 m] / N holds an integer);
 * double, rounded down by 2^-40 relative */
static double min_sin2(uint64_t j1, uint64_t j2, uint64_t m, uint64_t N)
{
    if (m == 0) return 0;
    uint64_t r1, r2;
    if (j2 < (UINT64_C(1) << 31) && m < (UINT64_C(1) << 31)) { /* 2 j m < 2^63 */
        uint64_t A = 2 * j1 * m, B = 2 * j2 * m;
        if (A / N != B / N) return 0;
        r1 = A % N;
        r2 = B % N;
    } else {
        het_u128 A = (het_u128)j1 * (2 * (het_u128)m), B = (het_u128)j2 * (2 * (het_u128)m);
        het_u128 q1 = A / N, q2 = B / N;
        if (q2 != q1) return 0;
        r1 = (uint64_t)(A - q1 * N);
        r2 = (uint64_t)(B - q2 * N);
    }
    if (r1 == 0) return 0;
    uint64_t a1 = r1 > N - r1 ? N - r1 : r1, a2 = r2 > N - r2 ? N - r2 : r2;
    uint64_t a = a1 < a2 ? a1 : a2;
    double s = sin(3.141592653589793 * ((double)a / (double)N));
    return s * s * (1 - 0x1p-40);
}

/* an upper bound on log sup_{j in [j1, j2]} |Psi_j| (<= 0), stopping as
 * soon as it is below stop; *work counts the type evaluations.  Each
 * component: |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x; a type:
 * |phi_t| <= (1 - w2) |phi_1| + w2 |phi_2|; |Psi| <= prod sup|phi_t|^k.
 * Double precision with relative margins of 2^-40 per quantity; the bounds
 * of types with counts up to HET_POW_MAX are raised to their power by
 * repeated squaring and multiplied (each product rounded: the running
 * product is scaled up by 2^-40 per step), the others enter as k log b;
 * the logs (<= 0) are scaled towards 0 by 2^-30. */
static double sup_log(const het_law *L, uint64_t j1, uint64_t j2, double stop, double *work)
{
    double acc = 0, prod = 1, lim = exp(stop) * (1 - 0x1p-20);
    int64_t cm[2] = {-1, -1}; /* the last two positions and their min sin^2 (types sorted by position) */
    double cs[2] = {0, 0};
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        int nc = ty->w2 > 0 ? 2 : 1;
        double b = 0;
        for (int cc = 0; cc < nc; cc++) {
            int64_t m = ty->m[cc];
            double s2;
            if (m == cm[0]) s2 = cs[0];
            else if (m == cm[1]) s2 = cs[1];
            else {
                s2 = min_sin2(j1, j2, (uint64_t)m, L->N);
                cm[0] = cm[1];
                cs[0] = cs[1];
                cm[1] = m;
                cs[1] = s2;
            }
            double v = 1 - (double)ty->ot[cc] * (1 - 0x1p-40) * s2;
            double bc = sqrt(v > 0 ? v : 0) * (1 + 0x1p-40);
            b += (cc ? (double)ty->w2 : (double)(1 - ty->w2)) * bc;
        }
        b *= 1 + 0x1p-40;
        *work += 1;
        if (b >= 1) continue;
        if (ty->k <= HET_POW_MAX) { /* b^k by repeated squaring: <= 12 roundings */
            double bk = 1, bb = b;
            for (unsigned long k = (unsigned long)ty->k; k; k >>= 1) {
                if (k & 1) bk *= bb;
                bb *= bb;
            }
            prod *= bk * (1 + 0x1p-40);
        } else {
            acc += ty->k * (log(b) * (1 - 0x1p-30));
            lim = exp((stop - acc) * (1 - 0x1p-30)) * (1 - 0x1p-20);
        }
        if (prod < 0x1p-900) { /* renormalize into the log */
            acc += log(prod) * (1 - 0x1p-30);
            prod = 1;
            lim = exp((stop - acc) * (1 - 0x1p-30)) * (1 - 0x1p-20);
        }
        if (prod <= lim) return stop;
    }
    return (acc + log(prod) * (1 - 0x1p-30)) * (1 - 0x1p-30);
}

typedef struct het_iv { uint64_t a, b; } het_iv;

typedef struct ivlist { het_iv *v; size_t n, cap; } ivlist;

static int iv_push(ivlist *l, uint64_t a, uint64_t b)
{
    if (l->n && l->v[l->n - 1].b + 1 >= a) { /* merge with the previous range */
        if (b > l->v[l->n - 1].b) l->v[l->n - 1].b = b;
        return 0;
    }
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 64;
        het_iv *q = realloc(l->v, nc * sizeof *q);
        if (!q) return -1;
        l->v = q;
        l->cap = nc;
    }
    l->v[l->n++] = (het_iv){a, b};
    return 0;
}

/* Stage 1 of the certification (the top of this file): the ranges of j in [1, jmax]
 * that the bound log|Psi(w)| <= -(V - D(w)) / 4 does not certify below
 * tau, D sampled by an FFT; all of [1, jmax] when V is too small for it to
 * certify anything.  -1 when out of memory. */
static int dbound_ranges(const het_law *L, uint64_t jmax, ivlist *out)
{
    const double need = -4 * (double)HET_LOG_TAU;
    double *V = calloc(L->nm ? L->nm : 1, sizeof *V);
    if (!V) return -1;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        for (int cc = 0; cc < (ty->w2 > 0 ? 2 : 1); cc++) {
            double w = cc ? (double)ty->w2 : (double)(1 - ty->w2);
            V[ty->ix[cc]] += ty->k * w * (double)ty->ot[cc] * (1 - 0x1p-40);
        }
    }
    /* the sums rounded down / up: nm + nt additions of positive terms */
    double Vs = 0, M1 = 0, adj = ((double)L->nm + (double)L->nt + 4) * 0x1p-53;
    for (size_t i = 0; i < L->nm; i++) {
        V[i] *= 1 - adj;
        Vs += V[i];
        M1 += (double)L->mv[i] * V[i];
    }
    Vs *= 1 - adj;
    M1 *= 1 + adj;
    int ret = 0;
    if (!(Vs > 2 * need)) {
        free(V);
        return iv_push(out, 1, jmax);
    }
    /* M: slack pi M1 / M <= (Vs - need) / 4 */
    double want = 3.141592653589793 * M1 / ((Vs - need) / 4);
    size_t M = 1024;
    while (M < want && M < HET_FFT_MAX) M *= 2;
    double *re = calloc(M, sizeof *re), *im = calloc(M, sizeof *im);
    if (!re || !im) {
        free(V);
        free(re);
        free(im);
        return -1;
    }
    for (size_t i = 0; i < L->nm; i++) re[(uint64_t)L->mv[i] % M] += V[i];
    if (dpa_het_fft_r2(re, im, M)) ret = -1;
    else {
        /* |D'| <= 2 M1: within pi / (2M) of a sample D moves by at most
         * pi M1 / M; the FFT (and the folding) err by at most
         * 32 u log2(M) sqrt(M) Vs + (nm) u Vs */
        int lg = 0;
        while (((size_t)1 << lg) < M) lg++;
        double slack = 3.141592653589793 * M1 / (double)M * (1 + 0x1p-40) +
                       (32.0 * lg * sqrt((double)M) + (double)L->nm + 8) * 0x1p-53 * Vs;
        for (size_t l = 0; l <= M && !ret; l++) {
            double D = re[l % M];
            if (Vs - (D + slack) >= need * (1 + 0x1p-40)) continue;
            /* j with 2 pi j / N in [pi (2l - 1) / 2M, pi (2l + 1) / 2M]:
             * 4 M j in [(2l - 1) N, (2l + 1) N] */
            het_u128 den = (het_u128)4 * M;
            het_u128 lo = l == 0 ? 0 : ((het_u128)(2 * l - 1) * L->N + den - 1) / den;
            het_u128 hi = ((het_u128)(2 * l + 1) * L->N) / den;
            if (lo < 1) lo = 1;
            if (hi > jmax) hi = jmax;
            if (lo <= hi && iv_push(out, (uint64_t)lo, (uint64_t)hi)) ret = -1;
        }
    }
    free(V);
    free(re);
    free(im);
    return ret;
}

/* the significant frequencies of the law (certification of the others) and
 * their Psi_j; DPA_EUNSUPPORTED when the work budget or HET_SIG_MAX is
 * exceeded, DPA_ENOMEM */
dpa_status dpa_het_law_freqs(het_law *L, double *work)
{
    uint64_t jmax = (L->N - 1) / 2;
    size_t cap = 64, ns = 0;
    uint64_t *sj = malloc(cap * sizeof *sj);
    if (!sj) return DPA_ENOMEM;
    dpa_status st = DPA_OK;
    L->drop = 0;
    if (jmax <= HET_DIRECT_J) {
        for (uint64_t j = 1; j <= jmax; j++) {
            if (ns == cap) {
                uint64_t *q = realloc(sj, 2 * cap * sizeof *q);
                if (!q) { free(sj); return DPA_ENOMEM; }
                sj = q;
                cap *= 2;
            }
            sj[ns++] = j;
        }
    } else if (L->nt > 0) {
        ivlist rg = {NULL, 0, 0};
        if (dbound_ranges(L, jmax, &rg)) {
            free(rg.v);
            free(sj);
            return DPA_ENOMEM;
        }
        /* stage 2 on what is left: intervals over which the phase of the
         * 256th smallest position moves by at most pi / 8 */
        size_t ir = L->nt < 256 ? L->nt - 1 : 255;
        const het_type *tr = &L->ty[ir];
        uint64_t mref = (uint64_t)(tr->w2 > 0 ? tr->m[1] : tr->m[0]);
        uint64_t w = (uint64_t)((long double)L->N / (16 * (long double)(mref ? mref : 1)));
        if (w < 1) w = 1;
        size_t scap = 256, sn_ = 0;
        het_iv *stk = malloc(scap * sizeof *stk);
        if (!stk) st = DPA_ENOMEM;
        for (size_t r = 0; r < rg.n && !st; r++) {
            uint64_t a0 = rg.v[r].a, b0 = rg.v[r].b;
            for (uint64_t a = a0; a <= b0 && !st; a += w) {
                uint64_t b = b0 - a < w ? b0 : a + w - 1;
                stk[sn_++] = (het_iv){a, b};
                while (sn_ > 0 && !st) {
                    het_iv iv = stk[--sn_];
                    double lb = sup_log(L, iv.a, iv.b, (double)HET_LOG_TAU, work);
                    if (*work > HET_WORK_MAX) { st = DPA_EUNSUPPORTED; break; }
                    if (lb <= (double)HET_LOG_TAU) continue;
                    if (iv.b - iv.a < 4) { /* a few: evaluate them all rather than halve */
                        for (uint64_t j = iv.a; j <= iv.b && !st; j++) {
                            if (ns == cap) {
                                uint64_t *s3 = realloc(sj, 2 * cap * sizeof *s3);
                                if (!s3) { st = DPA_ENOMEM; break; }
                                sj = s3;
                                cap *= 2;
                            }
                            sj[ns++] = j;
                            if (ns > HET_SIG_MAX) st = DPA_EUNSUPPORTED;
                        }
                        if (st) break;
                        continue;
                    }
                    if (sn_ + 2 > scap) {
                        het_iv *s2 = realloc(stk, 2 * scap * sizeof *s2);
                        if (!s2) { st = DPA_ENOMEM; break; }
                        stk = s2;
                        scap *= 2;
                    }
                    uint64_t mid = iv.a + (iv.b - iv.a) / 2;
                    stk[sn_++] = (het_iv){mid + 1, iv.b};
                    stk[sn_++] = (het_iv){iv.a, mid};
                }
                if (b == b0) break;
            }
        }
        free(stk);
        free(rg.v);
        /* sum_{j = 1}^{jmax} 1/j <= 1 + ln jmax */
        L->drop = 2 * expl(HET_LOG_TAU) * (1 + logl((long double)jmax)) * (1 + 8 * E_F);
    }
    if (!st) *work += (double)ns * (double)L->nt;
    if (!st && *work > HET_WORK_MAX) st = DPA_EUNSUPPORTED;
    if (st) { free(sj); return st; }
    /* sort (intervals were processed in ascending order, but keep it safe) */
    qsort(sj, ns, sizeof *sj, dpa_het_cmp_i64); /* values < 2^62: the signed comparison is fine */
    L->sig = malloc((ns ? ns : 1) * sizeof *L->sig);
    cx *cm1 = malloc((L->nm ? L->nm : 1) * sizeof *cm1), *sn = malloc((L->nm ? L->nm : 1) * sizeof *sn);
    if (!L->sig || !cm1 || !sn) {
        free(sj);
        free(cm1);
        free(sn);
        return DPA_ENOMEM;
    }
    for (size_t i = 0; i < ns; i++) {
        het_sig *g = &L->sig[i];
        g->j = sj[i];
        g->psi = dpa_het_law_psi(L, g->j, cm1, sn);
        dpa_het_law_om(L, g->j, &g->om1, &g->om1h);
    }
    L->ns = ns;
    free(sj);
    free(cm1);
    free(sn);
    return DPA_OK;
}
