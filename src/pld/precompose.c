/* Precomposition of atom leaves off the common grid, for the PLD method's
 * builds: a leaf whose atoms miss the grid is composed count-fold on a grid
 * of its own (or exactly, for few atoms) and discretized once.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

/* ---------------- precomposition of atom leaves off the grid ----------------
 *
 * An atom that is not on the common grid costs first-order accuracy each
 * time it is discretized (docs/guarantees.md §3.13): k factors of a leaf
 * whose atoms miss the grid lose k times that.  Such a leaf (count >= 2)
 * is composed k-fold first on a grid of its own, PRE_L times finer and
 * aligned with its atoms where they lie on a lattice (atom-only pairs are
 * shifted so their lowest atom sits on a grid point: the lattice's offset
 * then only moves the composition as a whole, by k c), and the composed law
 * is discretized once onto the common grid like any atom pair.  The
 * first-order loss is then paid once per leaf, not once per factor
 * (mixtures of many distinct atom mechanisms).  Upper stays upper and lower
 * stays lower at every stage; every stage's allowance is carried. */

/* The own grid is at least this many times finer than the common one.
 * Measured on the 21-mechanism mixture (whose Poisson-subsampled Laplace
 * and discrete Gaussian leaves are precomposed): 16 -> 8 halves those
 * grids, 222 -> 145 ms for the whole command, the bracket 2.78e-4 -> 2.85e-4
 * wide (accuracy 1e-4 met either way); 4 is slower again (the first build
 * misses the target and the refined one is finer). */
#define PRE_L 8

/* Every finite atom of p (within the grid range) on the grid of spacing step. */
static int atoms_on_grid(const dpa_pair *p, double step)
{
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || fabs(w) > DPA_GRID_LOSS_MAX || p->atoms[i].la == -INFINITY) continue;
        double r = w / step;
        if (fabs(r - round(r)) > DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, fabs(r))) return 0;
    }
    return 1;
}

int dpa_pld_wants_precomposition(const dpa_leaf *l, double step)
{
    return l->pair && l->pair->natoms > 0 && l->count >= 2 && !atoms_on_grid(l->pair, step);
}

static int atom_cmp(const void *x, const void *y)
{
    double a = ((const dpa_atom *)x)->w, b = ((const dpa_atom *)y)->w;
    return (a > b) - (a < b);
}

/* x an integer multiple of y (within the atom-lattice tolerance) */
static int is_multiple(double x, double y)
{
    double r = x / y;
    return isfinite(r) && fabs(r - round(r)) <= DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, fabs(r));
}

/* The lattice c + b Z holding every finite atom of p with mass (b = 0: at
 * most one such atom); 0 if there is none. */
static int atom_lattice_of(const dpa_pair *p, double *c, double *b)
{
    double lo = INFINITY, gap = INFINITY, prev = NAN;
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || p->atoms[i].la == -INFINITY) continue;
        if (!isnan(prev) && w - prev > 0) gap = fmin(gap, w - prev);
        lo = fmin(lo, w);
        prev = w;
    }
    if (!isfinite(lo)) return 0;
    *c = lo;
    *b = isfinite(gap) ? gap : 0;
    if (*b == 0) return 1;
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || p->atoms[i].la == -INFINITY) continue;
        double r = (w - lo) / *b;
        if (fabs(r - round(r)) > DPA_PLD_ATOM_LATTICE_TOL * fmax(1.0, r)) return 0;
    }
    return 1;
}

/* p's atoms shifted by -c (A-masses kept, B-masses recomputed): same A-law
 * of the loss, moved; NULL + err on failure. */
static dpa_pair *shifted_atoms(const dpa_pair *p, double c, dpa_error *err)
{
    dpa_pair *q = dpa_pair_alloc(DPA_PAIR_ATOMS, p->natoms, err);
    if (!q) return NULL;
    for (size_t i = 0; i < p->natoms; i++) {
        dpa_atom at = p->atoms[i];
        if (isfinite(at.w)) {
            at.w -= c;
            at.lb = at.la - at.w;
        }
        q->atoms[i] = at;
    }
    q->slack_hi = p->slack_hi;
    q->slack_lo = p->slack_lo;
    return q;
}

/* The A-law of a composed fine measure as an atom pair, moved back by
 * shift: atoms at z_i + shift with A-mass m_i (B-mass m_i e^{-w}), +inf with
 * mass inf.  *werr: sum of A-mass times the rounding of each w (an atom
 * moved by dw moves h by at most its A-mass times dw). */
static dpa_pair *composed_atoms(const dpa_composed *cm, double shift, double *werr, dpa_error *err)
{
    size_t cnt = cm->inf > 0;
    for (size_t i = 0; i < cm->n; i++) cnt += cm->mass[i] > 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, cnt ? cnt : 1, err);
    if (!p) return NULL;
    size_t k = 0;
    long double we = 0;
    for (size_t i = 0; i < cm->n; i++) {
        double m = cm->mass[i];
        if (!(m > 0)) continue;
        double z = (double)(cm->lo + (long long)i) * cm->step, w = z + shift, lm = log(m);
        /* z and the sum each round by u relative */
        we += (long double)m * 2 * DPA_UNIT_ROUNDOFF * (fabs(z) + fabs(shift) + fabs(w));
        p->atoms[k++] = (dpa_atom){w, lm, lm - w};
    }
    if (cm->inf > 0) p->atoms[k++] = (dpa_atom){INFINITY, log(cm->inf), -INFINITY};
    p->natoms = k;
    /* w is increasing in i; keep it non-decreasing after rounding */
    for (size_t i = 1; i < k; i++)
        if (p->atoms[i].w < p->atoms[i - 1].w) p->atoms[i].w = p->atoms[i - 1].w;
    *werr = (double)we * (1 + 1e-3);
    return p;
}

/* Few finite atoms: the k-fold composition enumerated exactly, if it has at
 * most PRE_EXACT_MAX atoms (multinomial over at most PRE_EXACT_ATOMS finite
 * atoms). */
#define PRE_EXACT_ATOMS 4
#define PRE_EXACT_MAX 200000.0

/* Number of multisets of size k from m kinds, C(k + m - 1, m - 1) (as a double). */
static double multisets(double k, size_t m)
{
    double r = 1;
    for (size_t i = 1; i < m; i++) r = r * (k + (double)i) / (double)i;
    return r;
}

/* The k-fold composition of atom pair p (the A-law of the summed loss),
 * enumerated: atoms sum_i n_i w_i with A-mass multinomial(k; n) prod a_i^n_i
 * over the m finite atoms, and +inf with 1 - (1 - a_inf)^k.  Atoms with mass
 * below drop are left out: for an upper measure (kind 0) their mass goes to
 * +inf, for a lower one it is dropped (both only move h the safe way).
 * *allow: h may differ from the exact composition's by the rounding of the
 * losses and of the log masses (each atom's mass times its error). */
static dpa_pair *exact_power_atoms(const dpa_pair *p, double k, int kind, double drop, double *allow,
                                   dpa_error *err)
{
    double w[PRE_EXACT_ATOMS], la[PRE_EXACT_ATOMS], ainf = 0;
    size_t m = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *t = &p->atoms[i];
        if (t->la == -INFINITY) continue;
        if (t->w == INFINITY) { ainf += exp(t->la); continue; }
        w[m] = t->w;
        la[m++] = t->la;
    }
    double n_atoms = m ? multisets(k, m) : 0;
    dpa_pair *q = dpa_pair_alloc(DPA_PAIR_ATOMS, (size_t)n_atoms + 1, err);
    if (!q) return NULL;
    int sg;
    double lgk = lgamma_r(k + 1, &sg), ldrop = log(drop), dropped = 0;
    long double e = 0;
    size_t nq = 0;
    int n[PRE_EXACT_ATOMS] = {0};
    /* odometer over n_1..n_{m-1} with n_0 = k - sum */
    for (;;) {
        double rest = k, lm = lgk, lerr = fabs(lgk) + 1, wsum = 0, wabs = 0;
        for (size_t i = 1; i < m; i++) rest -= n[i];
        if (rest >= 0 && m) {
            for (size_t i = 0; i < m; i++) {
                double ni = i ? (double)n[i] : rest, lg = lgamma_r(ni + 1, &sg);
                lm += ni * la[i] - lg;
                lerr += fabs(lg) + ni * fabs(la[i]) + 1;
                wsum += ni * w[i];
                wabs += ni * fabs(w[i]);
            }
            double mass = exp(lm);
            /* lgamma and the products: a few u relative of each term */
            double merr = 16 * DPA_UNIT_ROUNDOFF * lerr;
            if (lm < ldrop) {
                dropped += mass * (1 + merr);
            } else {
                q->atoms[nq++] = (dpa_atom){wsum, lm, lm - wsum};
                e += (long double)mass * (merr + 2 * (double)(m + 1) * DPA_UNIT_ROUNDOFF * wabs) * (1 + merr);
            }
        }
        /* next n */
        size_t i = 1;
        while (i < m && (n[i]++, rest - 1 < 0 || (double)n[i] > k)) {
            n[i] = 0;
            rest = k;
            for (size_t j = 1; j < m; j++) rest -= n[j];
            i++;
        }
        if (i >= m) break;
    }
    /* the finite masses leave (1 - a_inf)^k: +inf gets the rest */
    double inf = ainf > 0 ? -expm1(k * log1p(-fmin(ainf, 1.0))) : 0;
    if (kind == 0) inf = fmin(1.0, (inf + dropped) * (1 + 8 * DPA_UNIT_ROUNDOFF));
    else inf *= 1 - 8 * DPA_UNIT_ROUNDOFF * (k + 2);
    if (inf > 0) q->atoms[nq++] = (dpa_atom){INFINITY, log(inf), -INFINITY};
    q->natoms = nq;
    /* sort by loss (the enumeration order is not monotone) */
    qsort(q->atoms, nq, sizeof *q->atoms, atom_cmp);
    *allow = (double)e;
    return q;
}

dpa_status dpa_pld_precomposed_leaf_grid(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_leaf *l, double step,
                                         double tau_leaf, int nd, unsigned mask, dpa_pld_leaf_grid *g, dpa_error *err)
{
    const dpa_pair *p0 = l->pair;
    double k = l->count;
    dpa_status st = DPA_OK;
    g->pre = 1;
    for (int d = 0; d < nd && !st; d++) {
        if (!(mask >> (2 * d) & 3u)) continue;
        /* the pair of direction d */
        dpa_pair *pd = NULL;
        if (d == 0 || p0->symmetric) {
            pd = dpa_pair_copy(p0, err);
        } else {
            dpa_pair *cp = dpa_pair_copy(p0, err);
            pd = cp ? dpa_pair_reverse(cp, err) : NULL;
        }
        if (!pd) return err ? err->status : DPA_ENOMEM;
        size_t mfin = 0;
        for (size_t i = 0; i < pd->natoms; i++) mfin += isfinite(pd->atoms[i].w) && pd->atoms[i].la > -INFINITY;
        if (pd->lca == -INFINITY && pd->lcb == -INFINITY && pd->slack_hi == 0 && pd->slack_lo == 0 &&
            mfin <= PRE_EXACT_ATOMS && multisets(k, mfin) <= PRE_EXACT_MAX) {
            /* few atoms: the composition exactly, then one discretization */
            for (int kind = 0; kind < 2 && !st; kind++) {
                if (!(mask >> (2 * d + kind) & 1u)) continue;
                double al;
                dpa_pair *ap = exact_power_atoms(pd, k, kind, tau_leaf * 1e-3 / fmax(1.0, multisets(k, mfin)), &al, err);
                if (!ap) { st = err ? err->status : DPA_ENOMEM; break; }
                double snap = 0;
                st = dpa_pld_pair_kind_grid(a, ap, step, tau_leaf, kind, &g->pm[d][kind], &snap, err);
                g->allow[d][kind] = al + snap;
            }
            dpa_pair_free(pd);
            continue;
        }
        /* its own grid: aligned with its atom lattice where it has one */
        double c = 0, b = 0, shift = 0, fine = step / PRE_L, base = 0;
        int atoms_only = pd->lca == -INFINITY && pd->lcb == -INFINITY;
        if (atom_lattice_of(pd, &c, &b)) {
            if (atoms_only) {
                /* shift the lowest atom to 0: the lattice is then b Z */
                base = b;
                if (c != 0) {
                    dpa_pair *q = shifted_atoms(pd, c, err);
                    dpa_pair_free(pd);
                    if (!(pd = q)) return err ? err->status : DPA_ENOMEM;
                    shift = k * c;
                }
            } else if (b > 0 && is_multiple(c, b)) {
                base = b;          /* atoms on b Z */
            } else if (c != 0 && is_multiple(b, c)) {
                base = fabs(c);    /* e.g. Laplace: -eps0, eps0 on eps0 Z */
            }
        }
        if (base > 0) fine = atoms_only ? base : base / ceil(base / fine * (1 - 1e-12));
        dpa_cells cf;
        st = dpa_cells_build(pd, fine, tau_leaf, 0, a->opt.max_grid, &cf, err);
        dpa_pair_free(pd);
        if (st) break;
        dpa_grid_pmf fp[2];
        st = dpa_cells_discretize(&cf, &fp[0], &fp[1], err);
        double snap_f = cf.snap_shift;
        dpa_cells_free(&cf);
        for (int kind = 0; kind < 2 && !st; kind++) {
            if (!(mask >> (2 * d + kind) & 1u)) continue;
            dpa_factor f = {&fp[kind], k};
            dpa_composed cm;
            st = dpa_compose_flags(a->fft, ws, &f, 1, tau_leaf, kind, a->opt.max_grid, DPA_COMPOSE_LENT, &cm, err);
            if (st) break;
            double tot = cm.inf;
            for (size_t i = 0; i < cm.n; i++) tot += cm.mass[i];
            /* the fine composition's bounds as an additive allowance (h <=
             * its total mass for the relative parts) */
            double al = (kind == 0 ? cm.tail_above : cm.tail_outside) + cm.roundoff + k * snap_f +
                        (cm.rel_err + DPA_PLD_DISC_REL * (k + 1)) * tot * (1 + 1e-3);
            double werr = 0, snap = 0;
            if (base == 0) {
                /* the own grid is exactly PRE_L times finer: cut the
                 * composition into the common grid's cells directly (as the
                 * two-stage coarsening does; its masses round once more) */
                dpa_cells cc;
                st = dpa_cells_from_composed(&cm, PRE_L, &cc, err);
                al += DPA_PLD_DISC_REL * tot * (1 + 1e-3);
                dpa_composed_free(&cm);
                if (st) break;
                st = dpa_pld_keep_kind(&cc, kind, &g->pm[d][kind], err);
            } else {
                dpa_pair *ap = composed_atoms(&cm, shift, &werr, err);
                dpa_composed_free(&cm);
                if (!ap) { st = err ? err->status : DPA_ENOMEM; break; }
                st = dpa_pld_pair_kind_grid(a, ap, step, tau_leaf, kind, &g->pm[d][kind], &snap, err);
            }
            g->allow[d][kind] = al + werr + snap;
        }
        dpa_grid_pmf_free(&fp[0]);
        dpa_grid_pmf_free(&fp[1]);
    }
    return st;
}
