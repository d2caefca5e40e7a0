/* What the files of the heterogeneous-epsilon bracket (section 7,
 * exact_rr_het*.c, exact_rr_cx.c) share: the tuning constants, the
 * complex values with error bounds, the lattice laws and the method's
 * state, and the functions one file calls in another.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_RR_HET_INTERNAL_H
#define DPA_EXACT_RR_HET_INTERNAL_H

#include "exact/exact_rr_internal.h"

#define PI_L 3.141592653589793238462643383279502884L
/* dropped frequencies: |Psi_j| certified below 2^-64; per-tail mass left
 * outside a window: 2^-64 (both enter the bounds as at most ~2^-58 in
 * all, far below the ~1e-16 evaluation floor of the Fourier sum; smaller
 * values only widen the window and the main lobe) */
#define HET_LOG_TAU (-64 * LN2L)
#define HET_LOG_TAUW (-64 * LN2L)
/* counts up to this are raised to their power by products, larger ones
 * enter through their logarithm (relative error k times the factor's) */
#define HET_POW_MAX 64
/* Chernoff table for tails beyond the window: lam_i = lam* 4^i */
#define HET_NLAM 3

__extension__ typedef unsigned __int128 het_u128;

/* a complex value and a bound e on the modulus of its error */
typedef struct cx { long double re, im, e; } cx;

static inline long double cx_l1(cx a) { return fabsl(a.re) + fabsl(a.im); }

/* One type of a lattice law: count k, one or two components (positions m_c,
 * t_c = tanh of half the component's loss, weights 1 - w2 and w2). */
typedef struct het_type {
    double k;
    long double w2;  /* 0: one component; a multiple of 2^-60, so 1 - w2 is exact */
    int64_t m[2];
    long double t[2], ot[2]; /* t_c (E_F relative), 1 - t_c^2 (rounded down) */
    size_t ix[2];    /* indices into the law's table of distinct positions */
    double eps;      /* the step's epsilon */
    long double r;   /* garbled laws: eps - m[0] h (exact) */
} het_type;

/* a significant frequency: Psi_j, 1 - w, 1 - w e^{-h} (w = e^{2 pi i j / N}) */
typedef struct het_sig {
    uint64_t j;
    cx psi, om1, om1h;
} het_sig;

typedef struct het_law {
    long double h;
    size_t nt;
    het_type *ty;
    size_t nm;
    int64_t *mv;               /* distinct positions, ascending */
    long double mean, var;     /* of S (lattice units; double accuracy, sizing) */
    long double Mx;            /* |S| <= Mx (the largest position sum) */
    int64_t s_lo;
    uint64_t N;                /* window [s_lo, s_lo + N), N odd */
    long double tail;          /* >= A(S outside the window) */
    long double drop;          /* >= (2/N) sum over dropped j of |Psi_j| |G_j| */
    size_t ns;
    het_sig *sig;
    long double lam[HET_NLAM], Kp[HET_NLAM], Km[HET_NLAM]; /* certified K(+-lam) upper bounds */
    long double eh, em;        /* e^{-h}, -expm1(-h) (E_F each) */
} het_law;

struct dpa_rr_het {
    size_t m;                   /* distinct eps > 0 */
    double *eps, *k;
    double ntot, emax;
    long double inf_lo, inf_up, keep_lo, keep_up; /* the +inf mass and P (section 4) */
    long double L;              /* >= the largest finite loss sum eps k */
    double mu, sd;              /* mean and sd of the loss (sizing) */
    double rel;                 /* target relative bracket */
    double h;                   /* the current lattice (0: none) */
    double hmin;                /* no finer lattice than this (positions, budget) */
    het_law up, lo, lb;         /* dominating, garbled A, tilted garbled B (B_1) */
    long double lmb;            /* >= log M, M = E_B[e^{h S_lo}] (the tilt's normalizer) */
    long double s0off;          /* the last best threshold s0 minus ceil(t / h) (a search hint) */
};

/* exact_rr_cx.c: complex values with error bounds, exact phases, a small FFT */
cx dpa_cx_add(cx a, cx b);
cx dpa_cx_sub(cx a, cx b);
cx dpa_cx_scale(cx a, long double s, long double es);
cx dpa_cx_div(cx a, cx b);
uint64_t dpa_het_mulmod(uint64_t a, uint64_t b, uint64_t n);
void dpa_cx_cis_m1(uint64_t r, uint64_t n, cx *cm1, cx *sn);
cx dpa_cx_log1p_parts(long double x, long double y, long double ex, long double ey);
int dpa_het_fft_r2(double *re, double *im, size_t n);

/* exact_rr_het_law.c: the dominating and the garbled lattice laws */
void dpa_het_law_free(het_law *L);
int dpa_het_cmp_i64(const void *a, const void *b);
dpa_status dpa_het_law_types(het_law *L, const dpa_rr_het *c, long double h, int which);
dpa_status dpa_het_law_window(het_law *L);
long double dpa_het_law_chern(const het_law *L, long double x, int up);

/* exact_rr_het_fourier.c: Psi_j and the functionals by the Fourier identity */
cx dpa_het_law_psi(const het_law *L, uint64_t j, cx *cm1, cx *sn);
void dpa_het_law_om(const het_law *L, uint64_t j, cx *om1, cx *om1h);
void dpa_het_law_sum(const het_law *L, int kind, long double x, double t, long double *hi, long double *lo);

/* exact_rr_het_certify.c: the significant frequencies of a law */
dpa_status dpa_het_law_freqs(het_law *L, double *work);

#endif
