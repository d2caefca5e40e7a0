/* Exponentially tilted composition of lattice leaves: delta(eps) of a
 * composition of atom-only pairs whose losses lie on one lattice b Z
 * (discrete Gaussian, discrete Laplace, ...), with an error that is small
 * relative to delta far in the tail (docs/guarantees.md §3.18).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * rigorous: enters bounds (every function below except choose_tilt, which
 * only picks the tilt: heuristic, any tilt t >= 0 gives valid bounds).
 *
 * Leaf j (count k_j) has A-masses a_i at losses w_i ~ n_i b (n_i integer).
 * For a tilt t >= 0 (per lattice index) and any constant c_j, the tilted
 * masses q_i = a_i e^{t n_i - c_j} compose into Q(s) on the lattice, and the
 * composed A-masses are exactly a(s) = Q(s) e^{C - t s}, C = sum_j k_j c_j.
 * With s0 the first index with s0 b > eps,
 *
 *   delta(eps) = e^{C - t s0} sum_{s >= s0} Q(s) w(s),
 *   w(s) = e^{-t (s - s0)} (1 - e^{eps - s b})  in [0, 1],
 *
 * so the FFT's absolute round-off allowance on sums with weights in [0, 1]
 * (§3.9) and the window tails (§3.8) bound the tilted sum; the prefactor
 * e^{C - t s0}, tiny in the far tail, scales them down with delta.  The
 * tilt puts the tilted composition's mean at eps (the saddle point of the
 * Chernoff bound e^{C - t x}), where the tilted sum is of order
 * 1 / (spread x t), not of order delta.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

/* Unit round-off of long double (2^-64 on x86-64; the bounds below use the
 * premise of src/exact/exact_rr.c that expl/expm1l/logl are within 4 ulp). */
#define UL (LDBL_EPSILON / 2)
#define U DPA_UNIT_ROUNDOFF
/* Window tail budget (each side) of the tilted composition: the tilted sum
 * is of order 1e-3 or more where the tilt is used, so its share is 1e-15
 * relative or less. */
#define TILT_TAIL 1e-18
/* Lattice indices of a leaf must stay below this (exact in long double and
 * long long, and the index range of a leaf below max_grid anyway). */
#define INDEX_MAX 1e12
/* Rounds of re-tilting of an eps query (each at the middle of the current
 * bracket) and bisection steps per bound. */
#define TILT_ROUNDS 3
#define BISECT_MAX 64
/* Largest exponent of a weight e^{-t (s - s0)} the tilted sums evaluate. */
#define TILT_EXP_MAX 700.0

typedef struct tilt_leaf {
    const dpa_pair *p;
    double k;
    long long nlo, nhi;  /* lattice index range of its atoms with A-mass */
    long double c;       /* log of its tilted total (the c_j above) */
    double rho;          /* relative error bound of its computed tilted masses */
} tilt_leaf;

typedef struct tilt {
    int d;               /* direction: 1 reads every pair reversed */
    double b;            /* lattice */
    size_t nl;
    tilt_leaf *l;
    double shift;        /* loss shift allowance: sum_j k_j max_i |w_i - n_i b| */
    double slack;        /* sum_j k_j (slack_lo + slack_hi): omitted A-mass */
    long double t;       /* tilt per lattice index */
    long double C;       /* sum_j k_j c_j */
    double cerr;         /* absolute error bound of C (log units) */
    double rel;          /* relative error of the composed tilted masses (factor masses) */
    double under;        /* tilted mass lost to underflow (absolute) */
    double total;        /* upper bound on the composed tilted mass */
    int have;            /* comp holds the composition at t */
    dpa_composed comp;
} tilt;

/* Atom i of pair p in direction d: loss and log A-mass. */
static void atom(const dpa_pair *p, int d, size_t i, double *w, double *la)
{
    *w = d ? -p->atoms[i].w : p->atoms[i].w;
    *la = d ? p->atoms[i].lb : p->atoms[i].la;
}

/* The lattice of direction d (every leaf an atom-only pair, every atom with
 * A-mass finite and within DPA_PLD_ATOM_LATTICE_TOL of a multiple of b, the
 * smallest nonzero |loss|), with the leaves' index ranges and the snapping
 * shift; 0 if the composition is not on one lattice. */
static int tilt_init(const dpa_pld_acct *a, int d, tilt *T)
{
    const dpa_leafset *L = a->leaves;
    double b = INFINITY;
    if (L->n == 0) return 0;
    for (size_t j = 0; j < L->n; j++) {
        const dpa_pair *p = L->v[j].pair;
        if (!p || p->kind != DPA_PAIR_ATOMS || p->natoms == 0 || !(L->v[j].count >= 1)) return 0;
        for (size_t i = 0; i < p->natoms; i++) {
            double w, la;
            atom(p, d, i, &w, &la);
            if (la == -INFINITY) continue;
            if (!isfinite(w)) return 0;
            if (w != 0 && fabs(w) < b) b = fabs(w);
        }
    }
    if (!(b < INFINITY)) return 0;
    T->d = d;
    T->b = b;
    T->nl = L->n;
    T->l = calloc(L->n, sizeof *T->l);
    if (!T->l) return 0;
    long double shift = 0, slack = 0;
    for (size_t j = 0; j < L->n; j++) {
        tilt_leaf *l = &T->l[j];
        l->p = L->v[j].pair;
        l->k = L->v[j].count;
        l->nlo = LLONG_MAX;
        l->nhi = LLONG_MIN;
        long double sh = 0;
        for (size_t i = 0; i < l->p->natoms; i++) {
            double w, la;
            atom(l->p, d, i, &w, &la);
            if (la == -INFINITY) continue;
            double r = w / b, n = round(r);
            if (!(fabs(r - n) <= DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, fabs(r))) || !(fabs(n) <= INDEX_MAX)) {
                free(T->l);
                T->l = NULL;
                return 0;
            }
            /* |w - n b| in long double: n b carries at most UL |n b| */
            long double e = fabsl((long double)w - (long double)n * b) + 2 * UL * fabsl((long double)w);
            if (e > sh) sh = e;
            if ((long long)n < l->nlo) l->nlo = (long long)n;
            if ((long long)n > l->nhi) l->nhi = (long long)n;
        }
        if ((double)(l->nhi - l->nlo) + 1 > (double)a->opt.max_grid) {
            free(T->l);
            T->l = NULL;
            return 0;
        }
        shift += (long double)l->k * sh;
        /* reversed, the omitted B-mass is the A-mass: the pair records only
         * A's; the reversed direction is not used for pairs with slack */
        if (d && (l->p->slack_lo > 0 || l->p->slack_hi > 0) && !l->p->symmetric) {
            free(T->l);
            T->l = NULL;
            return 0;
        }
        slack += (long double)l->k * ((long double)l->p->slack_lo + l->p->slack_hi);
    }
    /* a relative margin covers the roundings of these sums */
    T->shift = (double)(shift * (1 + 1e-10L));
    T->slack = (double)(slack * (1 + 1e-10L));
    return 1;
}

static void tilt_free(tilt *T)
{
    if (T->have) dpa_composed_free(&T->comp);
    T->have = 0;
    free(T->l);
    T->l = NULL;
}

/* log sum_i a_i e^{t n_i} of leaf l and its tilted mean index (heuristic use
 * of the mean; c is used consistently, so its own error does not matter). */
static long double leaf_log_mgf(const tilt *T, const tilt_leaf *l, long double t, long double *mean)
{
    long double mx = -INFINITY;
    for (size_t i = 0; i < l->p->natoms; i++) {
        double w, la;
        atom(l->p, T->d, i, &w, &la);
        if (la == -INFINITY) continue;
        long double v = la + t * roundl(w / T->b);
        if (v > mx) mx = v;
    }
    long double s = 0, m = 0;
    for (size_t i = 0; i < l->p->natoms; i++) {
        double w, la;
        atom(l->p, T->d, i, &w, &la);
        if (la == -INFINITY) continue;
        long double n = roundl(w / T->b), e = expl(la + t * n - mx);
        s += e;
        m += e * n;
    }
    if (mean) *mean = m / s;
    return mx + logl(s);
}

/* heuristic: the tilt whose tilted composition has mean index x (0 if x is
 * at or below the untilted mean: the untilted lattice composition; -1 if x is at or
 * beyond the top of the support). */
static long double choose_tilt(const tilt *T, long double x)
{
    long double top = 0, mean;
    for (size_t j = 0; j < T->nl; j++) top += T->l[j].k * (long double)T->l[j].nhi;
    if (!(x < top)) return -1;
    long double mu = 0;
    for (size_t j = 0; j < T->nl; j++) {
        leaf_log_mgf(T, &T->l[j], 0, &mean);
        mu += T->l[j].k * mean;
    }
    if (!(x > mu)) return 0;
    long double lo = 0, hi = 1e-6L;
    for (int it = 0; it < 80; it++) {
        mu = 0;
        for (size_t j = 0; j < T->nl; j++) {
            leaf_log_mgf(T, &T->l[j], hi, &mean);
            mu += T->l[j].k * mean;
        }
        if (mu >= x) break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 60; it++) {
        long double m = 0.5L * (lo + hi);
        mu = 0;
        for (size_t j = 0; j < T->nl; j++) {
            leaf_log_mgf(T, &T->l[j], m, &mean);
            mu += T->l[j].k * mean;
        }
        if (mu < x) lo = m;
        else hi = m;
    }
    return 0.5L * (lo + hi);
}

/* Compose the tilted leaves at tilt t >= 0 (t = 0: the lattice composition
 * itself, for an eps at or below the mean loss, e.g. a lattice spacing above
 * the largest grid step 1). */
static dpa_status tilt_compose(dpa_pld_acct *a, tilt *T, long double t, dpa_error *err)
{
    if (T->have) dpa_composed_free(&T->comp);
    T->have = 0;
    T->t = t;
    dpa_grid_pmf *g = calloc(T->nl, sizeof *g);
    dpa_factor *f = calloc(T->nl, sizeof *f);
    dpa_status st = DPA_OK;
    if (!g || !f) {
        st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto done;
    }
    long double C = 0, Cabs = 0;
    double rel = 0, under = 0;
    for (size_t j = 0; j < T->nl; j++) {
        tilt_leaf *l = &T->l[j];
        l->c = leaf_log_mgf(T, l, t, NULL);
        g[j].lo = l->nlo;
        g[j].n = (size_t)(l->nhi - l->nlo) + 1;
        g[j].step = T->b;
        g[j].inf = 0;
        if (!(g[j].mass = calloc(g[j].n, sizeof *g[j].mass))) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            goto done;
        }
        long double amax = 0;
        for (size_t i = 0; i < l->p->natoms; i++) {
            double w, la;
            atom(l->p, T->d, i, &w, &la);
            if (la == -INFINITY) continue;
            long double n = roundl(w / T->b), arg = la + t * n - l->c;
            long double m = expl(arg);
            g[j].mass[(long long)n - l->nlo] += (double)m;
            long double mag = fabsl((long double)la) + fabsl(t * n) + fabsl(l->c);
            if (mag > amax) amax = mag;
        }
        /* each mass: the argument's roundings (<= 3 UL mag), expl (4 UL),
         * the rounding to double (u), an addition (u) for atoms sharing an
         * index; masses below DBL_MIN may lose all their digits: counted
         * absolutely (at most DBL_MIN per point) */
        l->rho = (double)(2 * U + 8 * UL * (amax + 1));
        rel += l->k * l->rho;
        under += l->k * (double)g[j].n * DBL_MIN;
        C += (long double)l->k * l->c;
        Cabs += fabsl((long double)l->k * l->c);
        f[j].pmf = &g[j];
        f[j].count = l->k;
    }
    T->C = C;
    T->cerr = (double)(UL * ((long double)T->nl + 2) * (Cabs + 1));
    /* (1 + rho_j)^{k_j} over the factors: e^{rel} - 1 <= 1.01 rel for rel <= 0.01 */
    T->rel = rel <= 0.01 ? 1.01 * rel : INFINITY;
    T->under = under;
    if ((st = dpa_compose_flags(a->fft, &a->ws[0], f, T->nl, TILT_TAIL, 0, a->opt.max_grid, 0, &T->comp, err)))
        goto done;
    long double tot = 0;
    for (size_t m = 0; m < T->comp.n; m++) tot += T->comp.mass[m];
    T->total = (double)(tot * (1 + (long double)T->comp.n * UL)) * (1 + 2 * U);
    T->have = 1;
done:
    if (g)
        for (size_t j = 0; j < T->nl; j++) free(g[j].mass);
    free(g);
    free(f);
    return st;
}

/* Bounds on delta(eps) of the composition of the snapped atoms (losses
 * n_i b exactly), from the tilted composition; *lo >= 0. */
static void snapped_delta(const tilt *T, double eps, long double *up, long double *lo)
{
    const dpa_composed *c = &T->comp;
    double b = T->b;
    long double t = T->t;
    /* s0: the first index with s0 b > eps (the comparison in long double
     * may misplace an index whose loss is within UL of eps: such a term is
     * below UL (|eps| + b) times its mass, counted in `dabs`) */
    long double s0 = floorl((long double)eps / b) + 1;
    while ((s0 - 1) * b > eps) s0 -= 1;
    while (s0 * b <= eps) s0 += 1;
    long double H = 0, smax = 0, first = s0 - (long double)c->lo;
    double tmax = 0;
    size_t m0 = first <= 0 ? 0 : first >= (long double)c->n ? c->n : (size_t)first;
    for (size_t m = m0; m < c->n; m++) {
        long double s = (long double)c->lo + (long double)m;
        /* double exp/expm1 (4 ulp each, the libm premise) on arguments
         * rounded to double: t (s - s0) <= TILT_EXP_MAX, so the weight is
         * off by at most u (TILT_EXP_MAX + 4) relative; beyond, every
         * weight is below e^-TILT_EXP_MAX and the rest of the sum below
         * e^-TILT_EXP_MAX times the total mass (added to R) */
        double ts = (double)(t * (s - s0));
        if (ts > TILT_EXP_MAX) break;
        if (c->mass[m] <= 0) continue;
        double dl = (double)(s * b - eps);
        H += (long double)(c->mass[m] * exp(-ts) * -expm1(-dl));
        tmax = ts;
        smax = fabsl(s * b);
    }
    /* relative error of the sum of positive terms: the query convention
     * 2 n u of §3.10 (the long-double sum and the products), plus each
     * weight's exp/expm1 (8 u) and the rounding of its arguments (u tmax
     * for t (s - s0), u for d = s b - eps: d e^-d / (1 - e^-d) <= 1);
     * absolute: d is off by at most 2 UL (|s b| + |eps|) before its
     * rounding, which moves a weight (slope <= 1) by as much, on total
     * tilted mass <= total */
    double rsum = 2 * (double)c->n * U + U * (16 + tmax);
    double dabs = (double)(4 * UL * (smax + fabs(eps) + b + 1)) * T->total;
    double R = c->roundoff + c->tail_outside + T->under + dabs + exp(-TILT_EXP_MAX) * T->total;
    /* prefactor e^{C - t s0}: C off by cerr, t s0 and the subtraction
     * 3 UL (|t s0| + |C|), expl 4 UL */
    long double arg = T->C - t * s0;
    long double lerr = T->cerr + 3 * UL * (fabsl(t * s0) + fabsl(T->C)) + 8 * UL;
    long double P = expl(arg);
    long double hu = ((long double)H * (1 + rsum) + R) * (1 + T->rel);
    long double hl = ((long double)H * (1 - rsum) - R) * (1 - T->rel);
    *up = P * expl(lerr) * hu;
    *lo = hl > 0 ? P * expl(-lerr) * hl : 0;
}

/* Certified bounds on delta(eps) of direction T->d (true atoms: the snapped
 * composition's profile shifted by at most T->shift in eps, plus the
 * omitted mass), rounded outwards to double; up or lo may be NULL. */
static void tilt_delta(const tilt *T, double eps, double *up, double *lo)
{
    long double u, l;
    if (up) {
        snapped_delta(T, eps - T->shift, &u, &l);
        u += T->slack;
        *up = (double)fminl(1.0L, u * (1 + 4 * UL)) * (1 + 4 * U);
        if (*up > 1) *up = 1;
    }
    if (lo) {
        snapped_delta(T, eps + T->shift, &u, &l);
        *lo = (double)(l * (1 - 4 * UL)) * (1 - 4 * U);
    }
}

/* eps bracket of direction T->d at delta from the current composition,
 * inside [*lo, *up] (certified on entry; kept where not improved). */
static void tilt_eps(const tilt *T, double delta, double tol, double *lo, double *up)
{
    double du, dl;
    /* upper: smallest e with delta_up(e) <= delta; invariant: delta_up(hi) <= delta or hi = *up */
    double a = *lo, hi = *up;
    if (isinf(hi)) {
        double e = fmax(a, 1.0);
        for (int it = 0; it < 60 && isinf(hi); it++, e *= 1.25) {
            tilt_delta(T, e, &du, NULL);
            if (du <= delta) hi = e;
            else a = e;
        }
        if (isinf(hi)) return;
    }
    for (int it = 0; it < BISECT_MAX && hi - a > 1e-3 * tol; it++) {
        double m = 0.5 * (a + hi);
        tilt_delta(T, m, &du, NULL);
        if (du <= delta) hi = m;
        else a = m;
    }
    if (hi < *up) *up = hi;
    /* lower: largest e with delta_lo(e) > delta (then the true eps >= e) */
    double l = *lo, b = *up;
    for (int it = 0; it < BISECT_MAX && b - l > 1e-3 * tol; it++) {
        double m = 0.5 * (l + b);
        tilt_delta(T, m, NULL, &dl);
        if (dl > delta) l = m;
        else b = m;
    }
    if (l > *lo) *lo = l;
    if (*lo > *up) *lo = *up;
}

/* The result's grid information from the tilted composition at the query
 * (absolute allowances scaled by the prefactor at x, the queried eps or the
 * eps upper bound). */
static void tilt_info(const tilt *T, double x, double dval, dpa_result *out)
{
    long double s0 = floorl((long double)x / T->b) + 1;
    long double P = expl(T->C - T->t * s0);
    out->grid_step = T->b;
    out->grid_size = T->comp.n;
    out->truncated_mass = (double)(P * T->comp.tail_outside);
    out->roundoff = (double)(P * (T->comp.roundoff + T->under)) + (T->rel + 2 * (double)T->comp.n * U) * dval;
}

int dpa_pld_tilted_applies(const dpa_pld_acct *a)
{
    if (a->opt.grid_step > 0) return 0;
    tilt T = {0};
    int ok = 1;
    for (int d = 0; d < a->ndir && ok; d++) {
        ok = tilt_init(a, d, &T);
        tilt_free(&T);
    }
    return ok;
}

void dpa_pld_tilted_tighten(dpa_pld_acct *a, int is_eps, double x, dpa_result *out)
{
    if (!dpa_pld_tilted_applies(a) || !isfinite(out->lower)) return;
    double acc = a->opt.accuracy;
    /* the result's upper bound (perhaps from §3.14) bounds every direction */
    double up[2] = {fmin(out->upper_remove, out->upper), fmin(out->upper_add, out->upper)};
    double lo[2] = {a->ndir == 2 ? out->lower_remove : out->lower, a->ndir == 2 ? out->lower_add : out->lower};
    int used = -1;
    tilt keep = {0};
    for (int d = 0; d < a->ndir; d++) {
        tilt T = {0};
        if (!tilt_init(a, d, &T)) break; /* (only out of memory: dpa_pld_tilted_applies held) */
        for (int r = 0; r < (is_eps ? TILT_ROUNDS : 1); r++) {
            /* eps queries: the middle of the bracket; its lower end if the
             * upper one is far or infinite; the upper end if the lower one
             * is 0 (a direction composed without its lower measure, §3.11) */
            double e0 = !is_eps                                  ? x
                        : isfinite(up[d]) && up[d] <= 1.5 * lo[d] ? 0.5 * (lo[d] + up[d])
                        : lo[d] > 0 || !isfinite(up[d])           ? lo[d]
                                                                  : up[d];
            long double t = choose_tilt(&T, (long double)e0 / T.b);
            dpa_error e2;
            if (!(t >= 0) || tilt_compose(a, &T, t, &e2)) break;
            if (is_eps) {
                tilt_eps(&T, x, acc * fmax(1.0, isfinite(up[d]) ? up[d] : lo[d]), &lo[d], &up[d]);
                if (!(up[d] - lo[d] > acc * fmax(1.0, up[d]))) break;
            } else {
                double du, dl;
                tilt_delta(&T, x, &du, &dl);
                if (du < up[d]) up[d] = du;
                if (dl > lo[d]) lo[d] = dl;
                if (lo[d] > up[d]) lo[d] = up[d];
            }
        }
        if (T.have && (used < 0 || (a->ndir == 2 && up[d] > up[used]))) {
            tilt_free(&keep);
            keep = T;
            used = d;
        } else {
            tilt_free(&T);
        }
    }
    if (a->ndir == 1) { up[1] = up[0]; lo[1] = lo[0]; }
    double nu = fmax(up[0], up[1]), nl = fmax(lo[0], lo[1]);
    if (used >= 0 && (nu < out->upper || nl > out->lower)) {
        if (nu < out->upper) out->upper_source = DPA_SOURCE_METHOD;
        out->upper = fmin(out->upper, nu);
        out->lower = fmax(out->lower, nl);
        if (out->lower > out->upper) out->lower = out->upper;
        out->upper_remove = fmin(out->upper_remove, up[0]) + 0.0;
        out->upper_add = fmin(out->upper_add, up[1]) + 0.0;
        if (a->ndir == 2) {
            out->lower_remove = fmax(out->lower_remove, lo[0]) + 0.0;
            out->lower_add = fmax(out->lower_add, lo[1]) + 0.0;
            out->binding = out->upper_remove >= out->upper_add ? DPA_DIR_REMOVE : DPA_DIR_ADD;
        }
        out->lower += 0.0;
        tilt_info(&keep, is_eps ? out->upper : x, is_eps ? x : fmin(1.0, out->upper), out);
        double gap = out->upper - out->lower;
        double tol = is_eps ? acc * fmax(1.0, out->upper) : acc * out->upper + a->opt.delta_abs;
        out->accuracy_met = !(gap > tol);
    }
    tilt_free(&keep);
}
