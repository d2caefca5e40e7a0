/* Exact composition of atom-only leaves for the phi accountant.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The finite A-law of a composition of atom-only leaves is the convolution
 * of the leaves' finite A-laws (LT Thm 4.2), a finite atom list.  Its
 * hockey-stick value is the exact sum
 *   H(x) = sum_i m_i (1 - e^{x - w_i})_+                     (LT eq 20)
 * so no characteristic-function inversion is involved (docs/phi.md: raw atoms
 * make the quadrature return nonsense).
 *
 * Two ways to build the list:
 *   - lattice: every leaf's atoms lie on offset_i + h Z for one spacing h
 *     (randomized response, pure/approx DP, discrete Laplace/Gaussian, one
 *     subsampled two-point pair, ...): the masses are integer-indexed arrays,
 *     powered by binary exponentiation with direct (positive, hence
 *     relatively accurate) convolutions;
 *   - list: otherwise, sorted lists with equal losses merged.
 * Both are refused beyond max_atoms composed points or DPA_PHI_ATOM_WORK
 * multiply-adds.
 *
 * Error bounds (rigorous to first order in u):
 *   - positions: lattice fit residuals times counts, plus the rounding of
 *     offset + n h (lattice) or of the pairwise sums (list): pos_err;
 *     H is monotone in every atom's position, so evaluating at x -+ pos_err
 *     brackets the true H;
 *   - masses: a convolution of positive arrays adds at most (m + 1) u
 *     relative (m terms per output); exp of a log mass 2u: rel_err;
 *   - underflow: each product below DBL_MIN loses at most DBL_TRUE_MIN. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "phi/phi.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
/* Work limit for one list convolution (pairs formed). */
#define LIST_PAIRS_MAX 2e7

void dpa_phi_atoms_free(dpa_phi_atomset *s)
{
    if (!s) return;
    free(s->w);
    free(s->m);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ lattice */

/* approximate gcd of two positive spacings (Euclid with a tolerance) */
static double agcd(double a, double b, double tol)
{
    if (a < b) { double t = a; a = b; b = t; }
    for (int i = 0; i < 200 && b > tol; i++) {
        double r = fmod(a, b);
        if (b - r <= tol) r = 0;
        a = b;
        b = r;
    }
    return a;
}

typedef struct arr { double *m; size_t n; double rel; } arr;

static int conv(const arr *a, const arr *b, arr *out)
{
    size_t n = a->n + b->n - 1;
    double *m = calloc(n, sizeof *m);
    if (!m) return -1;
    for (size_t i = 0; i < a->n; i++) {
        double ai = a->m[i];
        if (ai == 0) continue;
        for (size_t j = 0; j < b->n; j++) m[i + j] += ai * b->m[j];
    }
    size_t mn = a->n < b->n ? a->n : b->n;
    out->rel = a->rel + b->rel + (double)(mn + 2) * U;
    /* trim exact zeros at the ends is not needed: ends are products of
     * nonzero end masses (or underflow, counted in abs_err) */
    out->m = m;
    out->n = n;
    return 0;
}

/* a^k by binary powering; *work accumulates multiply-adds */
static int power(const arr *a, double k, arr *out, double *work, double max_len)
{
    arr res = {NULL, 0, 0}, base = {NULL, 0, 0};
    base.m = malloc(a->n * sizeof *base.m);
    if (!base.m) return -1;
    memcpy(base.m, a->m, a->n * sizeof *base.m);
    base.n = a->n;
    base.rel = a->rel;
    unsigned long long kk = (unsigned long long)k;
    int first = 1;
    while (kk) {
        if (kk & 1) {
            if (first) {
                res.m = malloc(base.n * sizeof *res.m);
                if (!res.m) goto fail;
                memcpy(res.m, base.m, base.n * sizeof *res.m);
                res.n = base.n;
                res.rel = base.rel;
                first = 0;
            } else {
                arr t;
                *work += (double)res.n * base.n;
                if (*work > DPA_PHI_ATOM_WORK || res.n + base.n - 1 > max_len) goto big;
                if (conv(&res, &base, &t)) goto fail;
                free(res.m);
                res = t;
            }
        }
        kk >>= 1;
        if (kk) {
            arr t;
            *work += (double)base.n * base.n;
            if (*work > DPA_PHI_ATOM_WORK || 2 * base.n - 1 > max_len) goto big;
            if (conv(&base, &base, &t)) goto fail;
            free(base.m);
            base = t;
        }
    }
    free(base.m);
    *out = res;
    return 0;
big:
    free(base.m);
    free(res.m);
    return 1;
fail:
    free(base.m);
    free(res.m);
    return -1;
}


static dpa_status compose_lattice(const dpa_phi_leaf *const *L, size_t nl, double h, size_t max_atoms,
                                  dpa_phi_atomset *out, dpa_error *err)
{
    dd off = {0, 0};
    double fit = 0, work = 0;
    arr acc = {NULL, 0, 0};
    for (size_t i = 0; i < nl; i++) {
        const dpa_phi_leaf *l = L[i];
        double w0 = l->w[0];
        size_t span = (size_t)llround((l->w[l->natoms - 1] - w0) / h);
        arr a = {calloc(span + 1, sizeof(double)), span + 1, 2 * U};
        if (!a.m) goto nomem;
        double fi = 0;
        for (size_t j = 0; j < l->natoms; j++) {
            double nj = nearbyint((l->w[j] - w0) / h);
            fi = fmax(fi, fabs(l->w[j] - w0 - nj * h));
            a.m[(size_t)nj] += exp(l->la[j]);
        }
        fit += l->count * fi;
        dd_add_prod(&off, l->count, w0);
        arr p;
        int rc = power(&a, l->count, &p, &work, (double)max_atoms);
        free(a.m);
        if (rc < 0) goto nomem;
        if (rc > 0) goto big;
        if (!acc.m) {
            acc = p;
        } else {
            arr t;
            work += (double)acc.n * p.n;
            if (work > DPA_PHI_ATOM_WORK || acc.n + p.n - 1 > max_atoms) {
                free(p.m);
                goto big;
            }
            if (conv(&acc, &p, &t)) {
                free(p.m);
                goto nomem;
            }
            free(acc.m);
            free(p.m);
            acc = t;
        }
    }
    out->n = acc.n;
    out->m = acc.m;
    out->w = malloc(acc.n * sizeof *out->w);
    if (!out->w) goto nomem;
    double o = off.hi + off.lo, wmax = 0;
    for (size_t i = 0; i < acc.n; i++) {
        out->w[i] = o + (double)i * h;
        wmax = fmax(wmax, fabs(out->w[i]));
    }
    /* o to u|o| (double-double rounded), i h and the sum to u each */
    out->pos_err = fit + 4 * U * (fabs(o) + wmax + (double)acc.n * h);
    out->rel_err = acc.rel;
    out->abs_err = (double)acc.n * acc.n * DBL_TRUE_MIN * 4;
    out->lattice = 1;
    return DPA_OK;
nomem:
    free(acc.m);
    return dpa_error_set(err, DPA_ENOMEM, "out of memory composing atoms");
big:
    free(acc.m);
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "phi: the composed atom part exceeds %zu lattice points or %g operations (use method "
                         "exact for (eps, delta) compositions, or pld)",
                         max_atoms, DPA_PHI_ATOM_WORK);
}

/* ------------------------------------------------------------------ list */

typedef struct wm { double w, m; } wm;

static int cmp_wm(const void *a, const void *b)
{
    double x = ((const wm *)a)->w, y = ((const wm *)b)->w;
    return (x > y) - (x < y);
}

typedef struct lst { wm *v; size_t n; double rel, levels; } lst;

static int lconv(const lst *a, const lst *b, lst *out, size_t max_atoms)
{
    if ((double)a->n * b->n > LIST_PAIRS_MAX) return 1;
    wm *v = malloc(a->n * b->n * sizeof *v);
    if (!v) return -1;
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) v[k++] = (wm){a->v[i].w + b->v[j].w, a->v[i].m * b->v[j].m};
    qsort(v, k, sizeof *v, cmp_wm);
    size_t m = 0, merged = 1, maxmerge = 1;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && v[m - 1].w == v[i].w) {
            v[m - 1].m += v[i].m;
            merged++;
            if (merged > maxmerge) maxmerge = merged;
        } else {
            v[m++] = v[i];
            merged = 1;
        }
    }
    if (m > max_atoms) {
        free(v);
        return 1;
    }
    out->v = v;
    out->n = m;
    out->rel = a->rel + b->rel + (double)(maxmerge + 1) * U;
    out->levels = fmax(a->levels, b->levels) + 1;
    return 0;
}

static int lpower(const lst *a, double k, lst *out, size_t max_atoms)
{
    lst res = {NULL, 0, 0, 0}, base = *a;
    base.v = malloc(a->n * sizeof *base.v);
    if (!base.v) return -1;
    memcpy(base.v, a->v, a->n * sizeof *base.v);
    unsigned long long kk = (unsigned long long)k;
    int rc = 0;
    while (kk) {
        if (kk & 1) {
            if (!res.v) {
                res = base;
                res.v = malloc(base.n * sizeof *res.v);
                if (!res.v) { rc = -1; break; }
                memcpy(res.v, base.v, base.n * sizeof *res.v);
            } else {
                lst t;
                rc = lconv(&res, &base, &t, max_atoms);
                if (rc) break;
                free(res.v);
                res = t;
            }
        }
        kk >>= 1;
        if (kk) {
            lst t;
            rc = lconv(&base, &base, &t, max_atoms);
            if (rc) break;
            free(base.v);
            base = t;
        }
    }
    free(base.v);
    if (rc) {
        free(res.v);
        return rc;
    }
    *out = res;
    return 0;
}

static dpa_status compose_list(const dpa_phi_leaf *const *L, size_t nl, size_t max_atoms, dpa_phi_atomset *out,
                               dpa_error *err)
{
    lst acc = {NULL, 0, 0, 0};
    double wsum = 0;
    int rc = 0;
    for (size_t i = 0; i < nl && !rc; i++) {
        const dpa_phi_leaf *l = L[i];
        lst a = {malloc(l->natoms * sizeof(wm)), l->natoms, 2 * U, 0};
        if (!a.v) { rc = -1; break; }
        double wm_ = 0;
        for (size_t j = 0; j < l->natoms; j++) {
            a.v[j] = (wm){l->w[j], exp(l->la[j])};
            wm_ = fmax(wm_, fabs(l->w[j]));
        }
        wsum += l->count * wm_;
        lst p;
        rc = lpower(&a, l->count, &p, max_atoms);
        free(a.v);
        if (rc) break;
        if (!acc.v) acc = p;
        else {
            lst t;
            rc = lconv(&acc, &p, &t, max_atoms);
            free(p.v);
            if (rc) break;
            free(acc.v);
            acc = t;
        }
    }
    if (rc) {
        free(acc.v);
        if (rc < 0) return dpa_error_set(err, DPA_ENOMEM, "out of memory composing atoms");
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "phi: the composed atom list (no common lattice) exceeds %zu atoms or %g pairs per "
                             "convolution (use method pld)",
                             max_atoms, LIST_PAIRS_MAX);
    }
    out->n = acc.n;
    out->w = malloc(acc.n * sizeof *out->w);
    out->m = malloc(acc.n * sizeof *out->m);
    if (!out->w || !out->m) {
        free(acc.v);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory composing atoms");
    }
    for (size_t i = 0; i < acc.n; i++) {
        out->w[i] = acc.v[i].w;
        out->m[i] = acc.v[i].m;
    }
    /* every composed loss is a sum of the leaves' losses formed in a tree of
     * depth levels + nl: error at most (depth) u sum |terms| */
    out->pos_err = 2 * (acc.levels + (double)nl + 1) * U * wsum;
    out->rel_err = acc.rel;
    out->abs_err = (double)acc.n * acc.n * DBL_TRUE_MIN * 4;
    out->lattice = 0;
    free(acc.v);
    return DPA_OK;
}

dpa_status dpa_phi_atoms_compose(const dpa_phi_leaf *const *L, size_t nl, size_t max_atoms, dpa_phi_atomset *out,
                                 dpa_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < nl; i++) {
        if (L[i]->cont != DPA_PHI_CONT_NONE)
            return dpa_error_set(err, DPA_EINVAL, "phi atoms: leaf %zu has a continuous part", i);
        if (L[i]->natoms == 0) return DPA_OK; /* no finite mass: the composed finite law is 0 */
    }
    /* a common lattice? spacing from the atoms' differences */
    double h = 0, scale = 0;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < L[i]->natoms; j++) scale = fmax(scale, fabs(L[i]->w[j]));
    double tol = DPA_PHI_LATTICE_TOL * fmax(scale, 1e-300);
    int ok = 1;
    for (size_t i = 0; i < nl && ok; i++) {
        const dpa_phi_leaf *l = L[i];
        for (size_t j = 1; j < l->natoms; j++) {
            double d = l->w[j] - l->w[0];
            if (!(d > tol)) { ok = 0; break; }
            h = h == 0 ? d : agcd(h, d, tol);
        }
    }
    if (ok && h == 0) h = 1; /* single atoms only: any spacing */
    if (ok) {
        /* verify the fit and the size */
        double span = 0;
        for (size_t i = 0; i < nl && ok; i++) {
            const dpa_phi_leaf *l = L[i];
            for (size_t j = 0; j < l->natoms; j++) {
                double r = (l->w[j] - l->w[0]) / h;
                if (fabs(r - nearbyint(r)) * h > tol) ok = 0;
            }
            span += l->count * (l->w[l->natoms - 1] - l->w[0]) / h;
        }
        if (ok && span + 1 <= (double)max_atoms) return compose_lattice(L, nl, h, max_atoms, out, err);
    }
    return compose_list(L, nl, max_atoms, out, err);
}

/* sum_{w_i > y} m_i (1 - e^{y - w_i}) */
static double H_at(const dpa_phi_atomset *s, double y)
{
    /* first index with w > y */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->w[mid] > y) hi = mid;
        else lo = mid + 1;
    }
    double sum = 0;
    for (size_t i = s->n; i-- > lo;) sum += s->m[i] * -expm1(y - s->w[i]);
    return sum;
}

void dpa_phi_atoms_H(const dpa_phi_atomset *s, double x, double *lo, double *up)
{
    if (s->n == 0) {
        *lo = *up = 0;
        return;
    }
    /* each term: -expm1 to 2u, its argument to u relative (the relative
     * error of expm1(z) under a perturbation of z is at most that of z),
     * the product u, the sum n u */
    double rel = s->rel_err + ((double)s->n + 6) * U;
    double a = H_at(s, x + s->pos_err), b = H_at(s, x - s->pos_err);
    *lo = fmax(0.0, a * (1 - rel));
    *up = b * (1 + rel) + s->abs_err;
}
