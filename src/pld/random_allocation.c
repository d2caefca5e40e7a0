/* Random allocation on the grid (docs/sampling.md §4): the grid measure of
 * a 1-of-T random allocation leaf, per direction and kind, from the inner
 * composition's grid measure.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * With W = e^z the likelihood ratio of one step and S = W_1 + ... + W_T:
 *   remove (A_RA, B^T): loss log(S/T); A_RA's law of S is rho_A * rho_B^{*(T-1)},
 *     rho_A, rho_B the laws of W under A and B (the pair: FS25, arXiv
 *     2502.08202; docs/sampling.md §4);
 *   add (B^T, A_RA): loss -log(S/T) under B^T, the law of S rho_B^{*T}, with
 *     W = e^{-z'} from the inner add-direction measure (z' = log(B/A) under B).
 * 1. W on the linear lattice j h (h = the grid step): the upper measure
 *    splits each atom between its two lattice neighbours keeping its B-mass
 *    and mean (a spread: h_RA is convex in each W); the lower measure merges
 *    consecutive atoms into blocks whose B-weighted mean is a lattice point
 *    (a garbling), the last block rounded down.  Above the lattice window
 *    the pessimistic side is taken (remove upper: W -> +inf; add upper and
 *    remove lower: W -> the top point; add lower: dropped).
 * 2. The T-fold convolution of the lattice laws by dpa_compose (its window,
 *    tails and round-off allowance).
 * 3. The law of S mapped to an atom pair of losses +-log(S/T), discretized
 *    on the build's grid like any atom pair (dpa_pld_pair_kind_grid).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

/* The smallest tail mass the lattice window leaves out: the lognormal tail
 * of a Gaussian step's W needs W_max = e^{mu^2/2 + mu z_tau}, linear lattice
 * points grow like e^{mu z_tau}; 1e-14 costs at most that much in delta. */
#define TAIL_FLOOR 1e-14

/* The add direction's lattice ends at most at ADD_TOP_T T (ra_lattice_build). */
#define ADD_TOP_T 64.0

/* Levels of the N = 1 lower staircase from R's computed law (ra_rest_levels),
 * the level s_0 = 0 included. */
#define NLEV_MAX 129

/* The N = 2 upper term's blocks of big atoms (ra_big_blocks). */
#define RA_BLOCKS 96
#define RA_BLOCK_RATIO 1.02L

/* One atom of the law of W: B-mass b at W = e^z (remove) or e^{-z} (add). */
typedef struct ra_atom {
    long double b, w;
} ra_atom;

/* Lattice laws: bl[j] the B-mass at W = j h, j = 0 .. nw. */
typedef struct ra_lattice {
    double *bl;
    size_t nw;
    double h;
    long double ainf; /* A-mass at W = +inf (remove) */
    /* remove: the atoms above the lattice (W > nw h), kept exact: W, A-mass;
     * their B-mass sum bbig */
    long double *wbig, *abig;
    size_t nbig;
    long double bbig;
} ra_lattice;

/* Upper: split atom (b, w) between j h and (j + 1) h (mean and B-mass kept). */
static void split_atom(ra_lattice *L, long double b, long double w)
{
    long double x = w / L->h;
    size_t j = (size_t)floorl(x);
    if (j >= L->nw) { /* on the top point (the caller moved larger W there) */
        L->bl[L->nw] += (double)b;
        return;
    }
    long double f = x - (long double)j;
    L->bl[j] += (double)(b * (1 - f));
    L->bl[j + 1] += (double)(b * f);
}

/* Lower: atoms in increasing w merged into blocks with B-weighted mean on the
 * lattice (a garbling: each block's output has likelihood ratio exactly its
 * lattice point); the last block, which may not reach its point, is rounded
 * to the safe side with its B-mass kept (blob_close). */
typedef struct ra_blob {
    long double m, sw; /* B-mass, sum of b w */
    long double t;     /* target lattice point (> mean) */
    int open;
} ra_blob;

static void blob_emit(ra_lattice *L, long double m, long double t)
{
    long double x = t / L->h;
    size_t j = (size_t)floorl(x + 0.5L);
    if (j > L->nw) j = L->nw;
    L->bl[j] += (double)m;
}

static void blob_add(ra_lattice *L, ra_blob *B, long double b, long double w)
{
    while (b > 0) {
        if (!B->open) {
            long double x = w / L->h, c = ceill(x);
            if (c == x) { /* on the lattice */
                blob_emit(L, b, w);
                return;
            }
            *B = (ra_blob){b, b * w, c * L->h, 1};
            return;
        }
        if (w <= B->t) {
            B->m += b;
            B->sw += b * w;
            if (w == B->t && B->sw >= B->t * B->m) { /* reached */
                blob_emit(L, B->m, B->t);
                B->open = 0;
            }
            return;
        }
        /* the part phi of this atom that brings the mean to t */
        long double need = (B->t * B->m - B->sw) / (w - B->t);
        if (need >= b) {
            B->m += b;
            B->sw += b * w;
            return;
        }
        if (need < 0) need = 0;
        blob_emit(L, B->m + need, B->t);
        B->open = 0;
        b -= need;
    }
}

static void blob_close(ra_lattice *L, ra_blob *B, int d)
{
    if (!B->open || !(B->m > 0)) return;
    long double mean = B->sw / B->m;
    /* the safe side: remove lowers W (h_rem is increasing in each W), add
     * raises it (h_add is decreasing) */
    long double j = d == 0 ? floorl(mean / L->h) : ceill(mean / L->h);
    blob_emit(L, B->m, j * L->h);
    B->open = 0;
}

/* The lattice law of W from the inner measure mu (masses at z_i, +inf mass)
 * for direction d and kind k; *tot: total B-mass of the atoms (the
 * allowance's scale), *zabs: largest |z| used. */
static dpa_status ra_lattice_build(const dpa_composed *mu, double T, int d, int k, double h, double tw, size_t cap,
                                   ra_lattice *L, long double *bsum, double *zabs, dpa_error *err)
{
    memset(L, 0, sizeof *L);
    L->h = h;
    size_t n = mu->n;
    /* the window's end: remove (W = e^z) see below; add (W = e^{-z}) moves
     * B-mass tw above W_max (at the lowest z) to the safe side */
    long double acc = 0;
    double wmax = 0, za = 0;
    if (d == 0) {
        /* remove: the atoms above the lattice cost about T m / W each in
         * the bracket (dpa_pld_ra_grid, N = 1): the lattice ends where their
         * sum reaches tw */
        size_t i = n;
        while (i > 0) {
            double m = mu->mass[i - 1];
            double c = m > 0 ? m * T * exp(-(double)(mu->lo + (long long)(i - 1)) * mu->step) : 0;
            if (acc + c > tw) break;
            acc += c;
            i--;
        }
        if (i > 0) wmax = exp((double)(mu->lo + (long long)(i - 1)) * mu->step);
    } else {
        size_t i = 0;
        while (i < n) {
            double m = mu->mass[i];
            if (m > 0 && acc + m > tw) break;
            acc += m > 0 ? m : 0;
            i++;
        }
        if (i < n) wmax = exp(-(double)(mu->lo + (long long)i) * mu->step);
        /* a lattice that would reach its point limit ends at ADD_TOP_T T
         * instead (when that is lower): a coordinate above it makes S/T >
         * ADD_TOP_T, a loss below -log(ADD_TOP_T), where moving or dropping
         * mass changes no hockey-stick value at eps > -log(ADD_TOP_T) and,
         * composed, at most that mass times the rest's curve log(ADD_TOP_T)
         * further out; sound either way (rounded down: upper; dropped:
         * lower), it spares the heavy lognormal tail's lattice */
        if (wmax / h + 1 >= (double)cap) wmax = fmin(wmax, ADD_TOP_T * T);
    }
    double nwd = ceil(wmax / h) + 1;
    if (!(nwd < (double)cap)) nwd = (double)cap;
    if (nwd < 2) nwd = 2;
    L->nw = (size_t)nwd;
    double top = (double)L->nw * h;
    L->bl = calloc(L->nw + 1, sizeof *L->bl);
    if (!L->bl) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (d == 0) {
        L->wbig = malloc((n ? n : 1) * sizeof *L->wbig);
        L->abig = malloc((n ? n : 1) * sizeof *L->abig);
        if (!L->wbig || !L->abig) {
            free(L->bl);
            free(L->wbig);
            free(L->abig);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
    }
    ra_blob B = {0, 0, 0, 0};
    long double bs = 0, zero = 0;
    L->ainf = d == 0 ? mu->inf : 0;
    if (d == 1) zero = mu->inf; /* B-mass where A = 0: W = 0 */
    for (size_t t = 0; t < n; t++) {
        size_t i = d == 0 ? t : n - 1 - t; /* increasing W */
        double m = mu->mass[i];
        if (!(m > 0)) continue;
        double z = (double)(mu->lo + (long long)i) * mu->step;
        za = fmax(za, fabs(z));
        long double w = d == 0 ? expl((long double)z) : expl(-(long double)z);
        long double b = d == 0 ? (long double)m * expl(-(long double)z) : (long double)m;
        bs += b;
        if (w > top) {
            if (d == 0) { /* kept exact, off the lattice (dpa_pld_ra_grid) */
                L->wbig[L->nbig] = w;
                L->abig[L->nbig++] = m;
                L->bbig += b;
                continue;
            }
            if (k == 1) continue; /* add, lower: dropped */
            w = top;              /* add, upper: rounded down to the top point */
        }
        if (k == 0) split_atom(L, b, w);
        else blob_add(L, &B, b, w);
    }
    if (k == 1) blob_close(L, &B, d);
    if (d == 0) {
        /* B-mass where A = 0 (W = 0): what the atoms leave of 1 */
        long double beta = 1.0L - bs;
        zero = beta > 0 ? beta : 0;
    }
    L->bl[0] += (double)zero;
    *bsum = bs;
    *zabs = za;
    return DPA_OK;
}

static int atom_cmp(const void *x, const void *y)
{
    double a = ((const dpa_atom *)x)->w, b = ((const dpa_atom *)y)->w;
    return (a > b) - (a < b);
}

/* at[0 .. n) in increasing loss, the order a stable sort gives: the lattice
 * atoms at[0 .. nmain) come in increasing loss already (one per lattice
 * point, checked), so only the few big atoms after them are sorted and
 * merged in (ties: the lattice atom first, as in the array), instead of a
 * sort of the whole (a million atoms on heavy-tailed lattices). */
static int atoms_order(dpa_atom *at, size_t nmain, size_t n)
{
    int sorted = 1;
    for (size_t i = 1; i < nmain && sorted; i++) sorted = !(at[i].w < at[i - 1].w);
    if (!sorted || n - nmain > n / 4 + 64) {
        qsort(at, n, sizeof *at, atom_cmp);
        return 0;
    }
    size_t nb = n - nmain;
    if (nb == 0) return 0;
    qsort(at + nmain, nb, sizeof *at, atom_cmp);
    dpa_atom *tmp = malloc(nb * sizeof *tmp);
    if (!tmp) return -1;
    memcpy(tmp, at + nmain, nb * sizeof *tmp);
    /* merge from the back: tmp's atoms come after the lattice's on ties */
    size_t i = nmain, j = nb, o = n;
    while (j > 0) {
        if (i > 0 && at[i - 1].w > tmp[j - 1].w) at[--o] = at[--i];
        else at[--o] = tmp[--j];
    }
    free(tmp);
    return 0;
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

/* Level indices into R's computed law r (at most NLEV_MAX - 1, sorted,
 * distinct): half equally spaced between R's 1e-9 quantiles, half at its
 * quantiles l/nh (where its mass is). */
static int rest_level_idx(const dpa_composed *r, size_t *idx)
{
    long double tot = 0, acc = 0;
    for (size_t i = 0; i < r->n; i++) tot += r->mass[i];
    size_t ilo = 0, ihi = r->n ? r->n - 1 : 0;
    for (acc = 0; ilo + 1 < r->n && acc + r->mass[ilo] < 1e-9L * tot; ilo++) acc += r->mass[ilo];
    for (acc = 0; ihi > ilo && acc + r->mass[ihi] < 1e-9L * tot; ihi--) acc += r->mass[ihi];
    int nh = (NLEV_MAX - 1) / 2, nl = 0;
    for (int l = 0; l < nh; l++) idx[nl++] = ilo + (size_t)((double)(ihi - ilo) * l / nh);
    acc = 0;
    for (size_t j = 0, l = 1; j < r->n && l < (size_t)nh; j++) {
        acc += r->mass[j];
        while (l < (size_t)nh && acc >= tot * (long double)l / nh) {
            idx[nl++] = j;
            l++;
        }
    }
    qsort(idx, (size_t)nl, sizeof *idx, size_cmp);
    int nu = 0;
    for (int l = 0; l < nl; l++)
        if (nu == 0 || idx[l] != idx[nu - 1]) idx[nu++] = idx[l];
    return nu;
}

/* R, the lattice law's (T-1)-fold (the sum of the other coordinates in
 * the N = 1 term of dpa_pld_ra_grid), composed as kind k in ws. */
static dpa_status ra_rest_law(dpa_pld_acct *a, dpa_compose_ws *ws, const ra_lattice *L, double T, double tw, int k,
                              dpa_composed *r, dpa_error *err)
{
    dpa_grid_pmf gb = {0, L->nw + 1, L->h, L->bl, 0};
    dpa_factor f = {&gb, T - 1};
    memset(r, 0, sizeof *r);
    return dpa_compose(a->fft, ws, &f, 1, tw, k, a->opt.max_grid, r, err);
}

/* Levels of the lower staircase of the N = 1 term (dpa_pld_ra_grid) from
 * R's computed law, R = the lattice's (T-1)-fold (lower kind): G_l =
 * R_comp(s >= s_l) - its round-off allowance - its window tails (mass
 * aliased into the window), nonincreasing, is at most R(s >= s_l); the
 * levels from rest_level_idx (a level's loss log((W + s_l)/T) is at most
 * (s_{l+1} - s_l)/W below the true one for s in [s_l, s_{l+1})).  Appends
 * to slev/glev (slev[0] = 0, glev[0] = R_tot given). */
static dpa_status ra_rest_levels(dpa_pld_acct *a, dpa_compose_ws *ws, const ra_lattice *L, double T, double tw,
                                 double rtot, double *slev, double *glev, int *nlev, dpa_error *err)
{
    dpa_composed r;
    dpa_status st = ra_rest_law(a, ws, L, T, tw, 1, &r, err);
    if (st) return st;
    size_t idx[NLEV_MAX];
    int nl = rest_level_idx(&r, idx);
    double cut = r.roundoff + r.tail_outside;
    long double suf[NLEV_MAX], acc = 0;
    size_t i = r.n;
    for (int l = nl - 1; l >= 0; l--) {
        while (i > idx[l]) acc += r.mass[--i];
        suf[l] = acc;
    }
    for (int l = 0; l < nl; l++) {
        double s = (double)(r.lo + (long long)idx[l]) * L->h;
        if (!(s > slev[*nlev - 1])) continue;
        double g = fmin(glev[*nlev - 1], fmin(rtot, (double)suf[l] * (1 - 8 * DPA_UNIT_ROUNDOFF) - cut));
        if (!(g > 0)) break;
        slev[*nlev] = s;
        glev[(*nlev)++] = g;
    }
    dpa_composed_free(&r);
    return DPA_OK;
}

/* Blocks of the big atoms for the N = 2 term of dpa_pld_ra_grid:
 * consecutive atoms (in increasing W) while W is at most RA_BLOCK_RATIO
 * times the block's first, at most RA_BLOCKS blocks (the ratio squared
 * until they fit); each block's B-mass sum b put at its largest W (rounded
 * up: h_rem is increasing in each W, so the upper measure only rises). */
typedef struct ra_block {
    long double b, w, w0;
} ra_block;

static size_t ra_big_blocks(const ra_lattice *L, ra_block *blk)
{
    long double ratio = RA_BLOCK_RATIO;
    for (;;) {
        size_t nb = 0;
        int fits = 1;
        for (size_t i = 0; i < L->nbig && fits; i++) {
            long double b = L->abig[i] / L->wbig[i], w = L->wbig[i];
            if (nb > 0 && w <= blk[nb - 1].w0 * ratio) {
                blk[nb - 1].b += b;
                if (w > blk[nb - 1].w) blk[nb - 1].w = w;
            } else if (nb < RA_BLOCKS) {
                blk[nb++] = (ra_block){b, w, w};
            } else {
                fits = 0;
            }
        }
        if (fits) return nb;
        ratio *= ratio;
    }
}

/* The bins of the N = 1 upper term (dpa_pld_ra_grid) from R's computed
 * law (upper kind): bin l holds R_comp's mass on [s_l, s_{l+1}) (the last
 * bin up to the window's end U), put at its upper end su[l] (f is
 * increasing).  What the computed masses miss is an allowance per unit of
 * big A-mass, *rest_al: the round-off and aliased tails (a functional with
 * weights f <= 1 + U/W <= 1 + U/W_top: times that), and beyond U, where
 * s <= (T - 1) W_top (every lattice term is at most W_top < W):
 * E_R[f; s > U] <= R(s > U) (1 + (T - 1) W_top / W) <= T tail_above. */
static dpa_status ra_rest_bins(dpa_pld_acct *a, dpa_compose_ws *ws, const ra_lattice *L, double T, double tw,
                               double *su, double *mb, int *nb, double *rest_al, double *U, dpa_error *err)
{
    dpa_composed r;
    dpa_status st = ra_rest_law(a, ws, L, T, tw, 0, &r, err);
    if (st) return st;
    size_t idx[NLEV_MAX + 1];
    int nl = rest_level_idx(&r, idx);
    idx[0] = 0; /* the first bin from the window's start */
    idx[nl] = r.n;
    double top = (double)L->nw * L->h;
    *U = (double)(r.lo + (long long)r.n - 1) * L->h;
    *nb = 0;
    for (int l = 0; l < nl; l++) {
        long double m = 0;
        for (size_t j = idx[l]; j < idx[l + 1]; j++) m += r.mass[j];
        su[*nb] = (double)(r.lo + (long long)idx[l + 1] - 1) * L->h;
        mb[(*nb)++] = (double)m * (1 + 8 * DPA_UNIT_ROUNDOFF);
    }
    *rest_al = (1 + fmax(*U, 0.0) / top) * (r.roundoff + r.tail_outside) * (1 + 1e-3) + T * r.tail_above * (1 + 1e-3);
    dpa_composed_free(&r);
    return DPA_OK;
}

/* The grid measure of one (direction d, kind k) of a 1-of-T random
 * allocation leaf from the inner composition's measure mu of that
 * direction and kind (remove: the law of z under A; add: of z' under B;
 * a lower remove measure trimmed by the caller), with its additive
 * allowance; its compositions in ws. */
dpa_status dpa_pld_ra_grid(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_composed *mu, double T, int d, int k,
                           double step, double tau_leaf, dpa_grid_pmf *out, double *allow, dpa_error *err)
{
    const double u = DPA_UNIT_ROUNDOFF;
    double tot = mu->inf;
    for (size_t i = 0; i < mu->n; i++) tot += mu->mass[i];
    /* the inner measure's bounds as an additive allowance (as for a poisson
     * composite leaf): h <= total mass bounds the relative part */
    double ain = (k == 0 ? mu->tail_above : mu->tail_outside) + mu->roundoff + mu->rel_err * tot * (1 + 1e-3);
    ra_lattice L;
    long double bsum = 0;
    double zabs = 0;
    /* lattice points: an eighth of the grid limit leaves room for the
     * composition's window (its Chernoff ends go past T W_max / 2 for heavy
     * lognormal tails) */
    size_t cap = a->opt.max_grid > 32 ? a->opt.max_grid / 8 : 4;
    /* lattice step: a spread or merge of width h moves S/T by a variance of
     * about h^2 / (4 T), a loss error of second order like the grid's own
     * when h ~ step sqrt(T); the window's tail: tau_leaf / 4 of A-mass
     * (remove) or B-mass (add), at least TAIL_FLOOR (a larger tail only widens the
     * bracket: it is moved to the pessimistic side) */
    /* ... and the lattice reaches at least 8 T: above it the mean bound of
     * N = 1 below costs m_R B(W > top) ~ T B(W > top) at +inf */
    double h = fmax(step * sqrt(T), 8 * T / (double)cap);
    double tw = fmax(0.25 * tau_leaf, TAIL_FLOOR);
    dpa_status st = ra_lattice_build(mu, T, d, k, h, tw, cap, &L, &bsum, &zabs, err);
    if (st) return st;
    /* the factors: remove rho_A (A-masses j h b_j, +inf) once and rho_B
     * T - 1 times; add rho_B T times */
    dpa_grid_pmf gb = {0, L.nw + 1, L.h, L.bl, 0}, ga = {0, L.nw + 1, L.h, NULL, (double)L.ainf};
    dpa_factor f[2];
    size_t nf = 0;
    if (d == 0) {
        ga.mass = malloc((L.nw + 1) * sizeof *ga.mass);
        if (!ga.mass) {
            free(L.bl);
            free(L.wbig);
            free(L.abig);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        for (size_t j = 0; j <= L.nw; j++) ga.mass[j] = (double)j * L.h * L.bl[j];
        f[nf++] = (dpa_factor){&ga, 1};
        f[nf++] = (dpa_factor){&gb, T - 1};
    } else {
        f[nf++] = (dpa_factor){&gb, T};
    }
    dpa_composed c;
    memset(&c, 0, sizeof c);
    /* the composition's window: its tails (tw, at least TAIL_FLOOR) are
     * allowances; a linear lattice cannot afford the PLD's 1e-16.  The
     * window is a Chernoff bound (dpa_compose), for the heavy lognormal tail
     * of W the lattice's mean plus several W_top (docs/sampling.md §4) */
    st = dpa_compose(a->fft, ws, f, nf, tw, k, a->opt.max_grid, &c, err);
    if (st) {
        free(ga.mass);
        free(L.bl);
        free(L.wbig);
        free(L.abig);
        return st;
    }
    /* remove, in h(x) = E_{B^T}[(S/T - x)_+], by the number N of coordinates
     * above the lattice: N = 0 is the lattice composition; N = 1 is, summed
     * over which coordinate, sum_big a E_R[f(s)], f(s) = (1 + (s - xT)/W)_+
     * (increasing), s the sum of the other T - 1 (law R, the lattice's
     * (T-1)-fold, total R_tot, mean m_R): at most R_tot f(0) + m_R / W
     * ((a + b)_+ <= a_+ + b for b >= 0), at least a staircase below f (next);
     * N >= 2 is bounded in the upper measure, dropped in the lower
     * (docs/sampling.md §4) */
    long double bl_tot = 0, al_tot = 0, m2 = 0;
    for (size_t j = 0; j <= L.nw; j++) {
        long double wj = (long double)j * L.h;
        bl_tot += L.bl[j];
        al_tot += wj * L.bl[j];
        m2 += wj * wj * L.bl[j];
    }
    double rtot = (double)powl(bl_tot, T - 1), abig = 0;
    for (size_t i = 0; i < L.nbig; i++) abig += (double)L.abig[i];
    /* lower: a staircase s_0 = 0 < s_1 < ... of R's levels with G_l <=
     * R(s >= s_l) (Chernoff: R(s < c) <= e^{lam c} M(-lam)^{T-1}, M the
     * lattice's moment generating function, in long double; G_0 = R_tot);
     * E_R[f] >= sum_l (f(s_l) - f(s_{l-1})) G_l = sum_l f(s_l) (G_l - G_{l+1}) */
    double slev[NLEV_MAX], glev[NLEV_MAX];
    int nlev = 0;
    slev[nlev] = 0;
    glev[nlev++] = rtot;
    int lonew = d == 0 && k == 1 && L.nbig > 0 && abig > tw;
    if (lonew) {
        /* big atoms that matter: R's computed law, many levels */
        st = ra_rest_levels(a, ws, &L, T, tw, rtot, slev, glev, &nlev, err); /* on failure: freed below */
    } else if (d == 0 && k == 1 && L.nbig > 0) {
        double mean = (T - 1) * (double)(al_tot / bl_tot);
        double sd = sqrt((T - 1) * fmax(0.0, (double)(m2 / bl_tot - (al_tot / bl_tot) * (al_tot / bl_tot))));
        /* M(-lam) for the 25 lam, once (they do not depend on the level) */
        double lmg[25];
        for (int r = -12; r <= 12; r++) {
            double lam = ldexp(1.0, r) / fmax(sd, 1e-3);
            long double qf = expl(-(long double)lam * L.h), e = 1, mg = 0;
            for (size_t j = 0; j <= L.nw; j++) {
                mg += e * L.bl[j];
                e *= qf;
            }
            lmg[r + 12] = (double)logl(mg);
        }
        for (int q = 4; q >= 1; q--) {
            double cl = mean - q * sd;
            if (!(cl > slev[nlev - 1])) continue;
            double best = glev[nlev - 1];
            for (int r = -12; r <= 12; r++) {
                double lam = ldexp(1.0, r) / fmax(sd, 1e-3);
                double bnd = exp(lam * cl + (T - 1) * lmg[r + 12]) * (1 + 1e-6);
                if (bnd < best) best = bnd;
            }
            double g = fmin(glev[nlev - 1], rtot - best);
            if (!(g > 0)) break;
            slev[nlev] = cl;
            glev[nlev++] = g;
        }
    }
    /* remove upper: where the mean bound of N = 1 (+inf mass m_R sum a/W)
     * and the N >= 2 allowance would cost more than the tail budget (a
     * lattice cut far below W's tail), N = 1 from R's computed law and N =
     * 2 exactly up to its rest's mean (docs/sampling.md §4, Lemma 4.5) */
    double bmax = fmax(1.0, (double)bsum * (1 + 8 * u)), tmax = fmax(1.0, tot * (1 + 8 * u));
    double bb = (double)L.bbig * (1 + 8 * u);
    double sb[NLEV_MAX], mbin[NLEV_MAX], rest_al = 0, Uw = 0;
    int nbin = 0, upnew = 0;
    ra_block blk[RA_BLOCKS];
    size_t nblk = 0;
    if (d == 0 && k == 0 && L.nbig > 0) {
        double old = (T - 1) * (double)al_tot * pow(fmax(1.0, (double)bl_tot), T - 2) * bb +
                     (abig * (T - 1) * bb + tmax * 0.5 * (T - 1) * (T - 2) * bb * bb) * pow(bmax, T - 2);
        if (old > tw) {
            upnew = 1;
            st = ra_rest_bins(a, ws, &L, T, tw, sb, mbin, &nbin, &rest_al, &Uw, err);
            if (!st) nblk = ra_big_blocks(&L, blk);
        }
    }
    if (st) {
        free(ga.mass);
        free(L.bl);
        free(L.wbig);
        free(L.abig);
        dpa_composed_free(&c);
        return st;
    }
    free(ga.mass);
    free(L.bl);
    /* relative errors: each W = e^{+-z} and each b to 4 u (|z| + 2), the
     * splits and block means to a few u more (eps_w); the lattice masses to
     * eps_w + 16 u each, T factors */
    double eps_w = 4 * u * (zabs + 2) + 16 * u;
    double ctot = c.inf + abig * fmax(1.0, rtot) * (1 + fmax(slev[nlev - 1], upnew ? Uw : 0) / fmax(1.0, (double)L.nw * L.h)) +
                  (T - 1) * (double)al_tot * fmax(1.0, rtot) * (double)L.bbig;
    /* the N = 2 atoms' A-mass */
    double r2tot = pow(fmax(1.0, (double)bl_tot), T - 2) * (1 + 4 * T * u);
    if (upnew) {
        /* sum_{i,j} ((T - 1)/2) b_i b_j (W_i + W_j) = (T - 1) (sum b)(sum b W) */
        long double sbk = 0, sbw = 0;
        for (size_t i = 0; i < nblk; i++) {
            sbk += blk[i].b;
            sbw += blk[i].b * blk[i].w;
        }
        ctot += (double)((T - 1) * sbk * sbw) * r2tot * (1 + 16 * u);
    }
    for (size_t j = 0; j < c.n; j++) ctot += c.mass[j];
    size_t cnt = 0;
    for (size_t j = 0; j < c.n; j++) cnt += c.mass[j] > 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, cnt + (size_t)(nlev > nbin ? nlev : nbin) * L.nbig + nblk * nblk + 1, err);
    if (!p) {
        dpa_composed_free(&c);
        free(L.wbig);
        free(L.abig);
        return err ? err->status : DPA_ENOMEM;
    }
    double lT = log(T), lh = log(L.h);
    long double werr = 0;
    size_t na = 0;
    size_t nmain = 0;
    for (size_t t = 0; t < c.n; t++) {
        size_t j = d == 0 ? t : c.n - 1 - t; /* increasing loss */
        double m = c.mass[j];
        if (!(m > 0)) continue;
        long long sj = c.lo + (long long)j; /* S = sj h */
        double lm = log(m);
        if (sj <= 0) {
            /* S = 0: A-mass 0 under remove (round-off only: dropped, its
             * weight in h is 0); add: loss +inf */
            if (d == 1) p->atoms[na++] = (dpa_atom){INFINITY, lm, -INFINITY};
            continue;
        }
        double w = log((double)sj) + lh - lT; /* log(S/T) */
        if (d == 1) w = -w;
        /* three logs and two sums: 4 u (|w| + 3 max) with margin */
        werr += (long double)m * 4 * u * (fabs(w) + fabs(lh) + lT + log((double)sj) + 3);
        p->atoms[na++] = (dpa_atom){w, lm, lm - w};
    }
    nmain = na;
    /* the big atoms: upper, A-mass a max(1, R_tot) at log(W/T) and the mean
     * term m_R sum a/W at +inf; lower, A-mass a (G_l - G_{l+1}) (1 + s_l/W) at
     * log((W + s_l)/T), rounded down */
    if (upnew || lonew) {
        /* from R's law: per big atom, consecutive levels (bins) whose losses
         * log((W + s)/T) differ by at most step/16 merged into one atom at
         * the group's safe end (lower: its smallest s; upper: its largest),
         * with the group's mass (f is increasing in s) */
        int nl = upnew ? nbin : nlev;
        double grow = exp(0.0625 * step); /* heuristic: sizing only */
        for (size_t i = 0; i < L.nbig; i++) {
            long double W = L.wbig[i];
            int l0 = 0;
            while (l0 < nl) {
                int l1 = l0;
                double mg = 0;
                double s0 = upnew ? fmax(sb[l0], 0.0) : slev[l0];
                for (; l1 < nl; l1++) {
                    double sl = upnew ? fmax(sb[l1], 0.0) : slev[l1];
                    if (l1 > l0 && (double)W + sl > ((double)W + s0) * grow) break;
                    mg += upnew ? mbin[l1] : glev[l1] - (l1 + 1 < nlev ? glev[l1 + 1] : 0);
                }
                double sl = upnew ? fmax(sb[l1 - 1], 0.0) : s0;
                double rfac = upnew ? mg * (1 + 4 * T * u) : mg * (1 - 4 * T * u);
                l0 = l1;
                double w = (double)logl((W + sl) / T);
                double am = (double)(L.abig[i] * rfac * (1 + sl / W));
                if (!(am > 0)) continue;
                werr += am * 4 * u * (fabs(w) + 2);
                p->atoms[na++] = (dpa_atom){w, log(am), log(am) - w};
            }
        }
    }
    for (int l = 0; l < (upnew || lonew ? 0 : k == 0 ? 1 : nlev); l++) {
        double rfac = k == 0 ? fmax(1.0, rtot * (1 + 4 * T * u))
                             : (glev[l] - (l + 1 < nlev ? glev[l + 1] : 0)) * (1 - 4 * T * u);
        for (size_t i = 0; i < L.nbig && rfac > 0; i++) {
            double sl = k == 0 ? 0 : slev[l];
            double w = (double)logl((L.wbig[i] + sl) / T);
            double am = (double)(L.abig[i] * rfac * (1 + sl / L.wbig[i]));
            if (!(am > 0)) continue;
            werr += am * 4 * u * (fabs(w) + 2);
            p->atoms[na++] = (dpa_atom){w, log(am), log(am) - w};
        }
    }
    /* m_R sum a/W = (T - 1) A_lat Bl^{T-2} bbig, rounded up */
    double inf_big = d == 0 && k == 0 && !upnew ? (T - 1) * (double)al_tot * pow(fmax(1.0, (double)bl_tot), T - 2) *
                                                      (double)L.bbig * (1 + 64 * T * u)
                                                : 0;
    if (upnew) {
        /* N = 2: ((T - 1)/2) sum_{i,j} b_i b_j E_R'[(W_i + W_j + s - xT)_+]
         * <= ((T - 1)/2) sum b_i b_j (R'_tot (W_i + W_j - xT)_+ + m_R'): atoms
         * at log((W_i + W_j)/T), A-mass ((T - 1)/2) b_i b_j (W_i + W_j) R'_tot,
         * and m_R' ((T - 1)/2) bbig^2 at +inf (m_R' = (T - 2) A_lat Bl^{T-3}) */
        for (size_t i = 0; i < nblk; i++)
            for (size_t j = 0; j < nblk; j++) {
                long double ws = blk[i].w + blk[j].w;
                double w = (double)logl(ws / T);
                double am = (double)(0.5L * (T - 1) * blk[i].b * blk[j].b * ws) * r2tot * (1 + 8 * u);
                if (!(am > 0)) continue;
                werr += am * 4 * u * (fabs(w) + 2);
                p->atoms[na++] = (dpa_atom){w, log(am), log(am) - w};
            }
        inf_big = 0.5 * (T - 1) * (T - 2) * (double)al_tot * pow(fmax(1.0, (double)bl_tot), T - 3) * bb * bb *
                  (1 + 64 * T * u);
    }
    double cinf = c.inf + inf_big;
    size_t nfin = na; /* the +inf atom last: above every finite one */
    if (d == 0 && cinf > 0) p->atoms[na++] = (dpa_atom){INFINITY, log(cinf), -INFINITY};
    p->natoms = na;
    if (atoms_order(p->atoms, nmain, nfin)) {
        dpa_composed_free(&c);
        free(L.wbig);
        free(L.abig);
        dpa_pair_free(p);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    p->symmetric = 0;
    /* allowances (docs/sampling.md §4): the inner measure's, passed through
     * the allocation (remove: times max(1, B-mass)^{T-1}; add: T times
     * max(1, total)^{T-1}); the composition's window tails and round-off; the
     * lattice masses' relative error (T factors); the W values' relative
     * error eps_w (h_RA moves by at most eps_w times the mass); the loss map;
     * remove upper: the big atoms' R tail and the event of a big B-coordinate */
    double pass = d == 0 ? ain * pow(bmax, T - 1) : T * ain * pow(tmax, T - 1);
    double al = pass + c.tail_outside + c.roundoff + T * (eps_w + 16 * u) * ctot + eps_w * (1 + 2 * eps_w) * ctot +
                (double)werr;
    if (d == 0 && k == 0 && !upnew) {
        /* two or more coordinates above the lattice: E[W_1; N >= 2] */
        al += (abig * (T - 1) * bb + tmax * 0.5 * (T - 1) * (T - 2) * bb * bb) * pow(bmax, T - 2);
    } else if (upnew) {
        /* N = 1: what R's computed law misses, per unit of big A-mass; N >=
         * 3: E[W_1; N >= 3] <= (abig C(T-1, 2) bb^2 + A(total) C(T-1, 3)
         * bb^3) max(1, B)^{T-3}; the +inf mass of A with a big coordinate
         * elsewhere (missing from the lattice's composed +inf mass):
         * ainf (T - 1) bb max(1, B)^{T-2} */
        double c2 = 0.5 * (T - 1) * (T - 2), c3 = c2 * (T - 3) / 3;
        al += abig * rest_al * (1 + 1e-3) + (abig * c2 * bb * bb + tmax * c3 * bb * bb * bb) * pow(bmax, T - 3) +
              (double)L.ainf * (T - 1) * bb * pow(bmax, T - 2);
    }
    free(L.wbig);
    free(L.abig);
    dpa_composed_free(&c);
    double snap = 0;
    st = dpa_pld_pair_kind_grid(a, p, step, tau_leaf, k, out, &snap, err);
    *allow = (al + snap) * (1 + 1e-3);
    return st;
}
