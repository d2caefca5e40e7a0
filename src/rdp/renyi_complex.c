/* The Rényi divergence of a composition at a complex order: per leaf
 * log E_p(z) on the documented branch (renyi.h): closed form for the
 * Gaussian, otherwise the phi module's log M(r + it) = log M(r) + i t m(r) +
 * psi(t) with psi's branch followed along t (track_branch below;
 * src/rdp/renyi.c has the notation).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpacct/renyi.h"
#include "model/leaves.h"
#include "mech/pair.h"
#include "phi/phi.h"
#include "rdp/renyi_internal.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* Branch tracking (complex orders).  Cost cap on the evaluations per leaf. */
#define RENYI_TRACK_MAX_STEPS 200000
/* Certified steps are used while the rest of the path takes at most this
 * many of them at the current step length (a cost cap; beyond it the
 * heuristic steps below take over). */
#define RENYI_TRACK_CERTIFIED_STEPS 20000
/* Largest phase change accepted for an uncertified (heuristic) step, on
 * each half of the step: well inside (-pi, pi), so a winding would have to
 * hide between three samples spaced by a step that has already been halved
 * until the phase moves slowly. */
#define RENYI_TRACK_ANGLE (M_PI / 4)
/* Largest estimated absolute error of psi (a relative error of E_i) at which
 * a value is still reported: beyond it the Rényi function is too close to
 * zero, relative to its round-off, for its logarithm (and the branch) to be
 * known. */
#define RENYI_PSI_ERR_MAX 1e-6

static double wrap_pi(double x)
{
    return x - 2 * M_PI * nearbyint(x / (2 * M_PI));
}

/* ------------------------------------------------------------------ complex orders */

/* The continuous branch of psi(t) = log g(t), g(t) = M(r + it) e^{-it m}/M(r)
 * (phi.h), on [0, T], from psi(0) = 0.  dpa_phi_psi returns the principal
 * value; the branch is followed in steps.  A step from t0 is certified when
 * h L <= |g(t0)|/2 with L >= sqrt(Var~ W) >= E~|W - m| >= sup |g'| (the
 * tilted law's variance, Jensen): then |g - g(t0)| <= |g(t0)|/2 on the step, the arg changes by
 * less than pi/6, and the principal difference is the change.  Where g is
 * small that step is tiny, so longer steps are also accepted when the phase
 * changes by at most RENYI_TRACK_ANGLE on each half (a heuristic; *rigorous
 * is then cleared).  The returned value is psi at T on the branch. */
static dpa_status track_branch(const dpa_phi_leaf *l, const dpa_phi_tilt *tl, double T, double complex *out,
                               int *rigorous, dpa_error *err)
{
    double complex cur = 0;
    /* sup |g'| <= E~|W - m| <= sqrt(Var~ W) (Jensen) for the point rule and
     * closed-form part that dpa_phi_psi evaluates; 1e-6 covers the rounding
     * of the computed variance */
    /* (the first uncertified step tried is T/64: a guess, halved until the
     * phase test passes and doubled after each success) */
    double t = 0, hadapt = T / 64, L = sqrt(tl->var) * (1 + 1e-6);
    size_t evals = 0;
    *rigorous = 1;
    while (t < T) {
        if (evals > RENYI_TRACK_MAX_STEPS)
            return dpa_error_set(err, DPA_ENUMERIC,
                                 "renyi: the branch of log E could not be followed to Im(A) = %g within %d "
                                 "evaluations (stopped at %g)",
                                 T, RENYI_TRACK_MAX_STEPS, t);
        double g0 = exp(creal(cur));
        /* |g0| is known within a relative RENYI_PSI_ERR_MAX (checked below);
         * 4x that is taken off */
        double hr = L > 0 ? 0.5 * g0 * (1 - 4 * RENYI_PSI_ERR_MAX) / L : INFINITY;
        /* certified steps while they are affordable at the current rate */
        double h = hr * RENYI_TRACK_CERTIFIED_STEPS >= T - t ? hr : fmax(hr, hadapt);
        int cert = h <= hr; /* decided before t + h is rounded */
        double t1 = h >= T - t ? T : t + h;
        h = t1 - t;
        double e1;
        double complex p1 = dpa_phi_psi(l, tl, t1, &e1);
        evals++;
        if (!(e1 <= RENYI_PSI_ERR_MAX))
            return dpa_error_set(err, DPA_ENUMERIC,
                                 "renyi: E(A-1) is numerically zero near Im(A) = %g (estimated relative error %.2g "
                                 "of a leaf's Renyi function): its logarithm, and the branch, cannot be evaluated",
                                 t1, e1);
        double d = wrap_pi(cimag(p1) - cimag(cur));
        if (!cert) {
            /* heuristic: check the phase at the midpoint */
            double em;
            double complex pm = dpa_phi_psi(l, tl, t + 0.5 * h, &em);
            evals++;
            double d1 = wrap_pi(cimag(pm) - cimag(cur)), d2 = wrap_pi(cimag(p1) - cimag(pm));
            if (!(em <= RENYI_PSI_ERR_MAX) || fabs(d1) > RENYI_TRACK_ANGLE || fabs(d2) > RENYI_TRACK_ANGLE) {
                hadapt = 0.5 * h;
                if (hadapt < hr) hadapt = hr;
                if (hadapt <= 0 || t + hadapt == t)
                    return dpa_error_set(err, DPA_ENUMERIC,
                                         "renyi: the branch of log E turns too fast near Im(A) = %g (a zero of "
                                         "E nearby?)",
                                         t);
                continue;
            }
            d = d1 + d2;
            *rigorous = 0;
            hadapt = 2 * h;
        } else {
            hadapt = fmax(hadapt, 2 * h);
        }
        cur = CMPLX(creal(p1), cimag(cur) + d);
        t = t1;
    }
    *out = cur;
    return DPA_OK;
}

/* log E of one copy of the leaf at z (direction dir), on the branch of
 * renyi.h; *nonexist: 1 = E diverges/undefined (mass at +inf and
 * Re z >= 0), 2 = E = 0.  *how gets DPA_RENYI_H_CLOSED / DPA_RENYI_H_PHI / DPA_RENYI_H_HEUR bits. */
static dpa_status leaf_complex(const dpa_leaf *lf, double complex z, int dir, double complex *out, int *nonexist,
                               int *how, dpa_error *err)
{
    *nonexist = 0;
    if (!lf->pair && !lf->inner) return dpa_renyi_unsupported_leaf(lf, err);
    if (!lf->pair)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: complex orders of a subsampled composition (poisson or sample of a compose/"
                             "repeat) are not supported: no characteristic function for it (use a real order)");
    const dpa_pair *p = lf->pair;
    if (dpa_renyi_truncated(p)) return dpa_renyi_unsupported_leaf(lf, err);
    if (!dpa_renyi_phi_kind(p))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "renyi: complex orders of a %s pair are not supported (the phi module has no "
                             "characteristic function for it; use a real order)",
                             dpa_renyi_pair_kind_name(p));
    double r = creal(z), t = cimag(z);
    if (r >= 0 && dpa_renyi_pair_inf(p, dir)) {
        *nonexist = 1;
        return DPA_OK;
    }
    if (p->kind == DPA_PAIR_GAUSSIAN) {
        /* E = e^{z (1 + z) mu^2/2}: the entire function's logarithm, the same
         * in both directions ((-1-z)(-z) = z (1 + z)) */
        *out = z * (1 + z) * (0.5 * p->par[0] * p->par[0]);
        *how |= DPA_RENYI_H_CLOSED;
        return DPA_OK;
    }
    dpa_phi_leaf l;
    dpa_status st = dpa_phi_leaf_init(&l, p, dir, 1.0, err);
    if (st) return st;
    dpa_phi_tilt tl;
    memset(&tl, 0, sizeof tl);
    st = dpa_phi_tilt_prepare(&l, r, fabs(t), &tl, err);
    if (!st) {
        if (tl.logM == -INFINITY) {
            *nonexist = 2;
        } else {
            double complex psi = 0;
            int rig = 0;
            st = track_branch(&l, &tl, fabs(t), &psi, &rig, err);
            if (!st) {
                double complex v = tl.logM + CMPLX(0, fabs(t) * tl.mean) + psi;
                *out = t < 0 ? conj(v) : v; /* M(conj z) = conj M(z) for real measures */
                int quad = l.cont == DPA_PHI_CONT_QUAD_GAUSS || l.cont == DPA_PHI_CONT_QUAD_LAPLACE;
                *how |= quad ? DPA_RENYI_H_PHI : DPA_RENYI_H_CLOSED;
                if (!rig) *how |= DPA_RENYI_H_HEUR;
            }
        }
    }
    dpa_phi_tilt_clear(&tl);
    dpa_phi_leaf_clear(&l);
    return st;
}

dpa_status dpa_renyi_eval_complex(const dpa_leafset *L, double complex A, int dir, dpa_renyi_value *v,
                                  dpa_error *err)
{
    double complex z = A - 1;
    /* the sum of count * log E_i: counts are exact integers, products are
     * rounded once, and the sum is compensated (Kahan) per component */
    double sr = 0, si = 0, cr = 0, ci = 0;
    int how = 0, nonexist = 0;
    for (size_t i = 0; i < L->n; i++) {
        double complex l = 0;
        int ne;
        dpa_status st = leaf_complex(&L->v[i], z, dir, &l, &ne, &how, err);
        if (st) return st;
        if (ne) {
            if (ne > nonexist) nonexist = ne;
            continue;
        }
        double k = L->v[i].count;
        double y = k * creal(l) - cr, s = sr + y;
        cr = (s - sr) - y;
        sr = s;
        y = k * cimag(l) - ci;
        s = si + y;
        ci = (s - si) - y;
        si = s;
    }
    v->lower = v->upper = NAN;
    if (nonexist) {
        v->re = v->im = v->log_e_re = v->log_e_im = NAN;
        v->exists = 0;
        v->certified = 1;
        v->tight = 0;
        if (nonexist == 2)
            snprintf(v->note, sizeof v->note, "does not exist: E(A-1) = 0 (the composed pair is mutually singular)");
        else
            snprintf(v->note, sizeof v->note,
                     "does not exist: mass at loss +inf and Re A >= 1 (E diverges for Re A > 1, is undefined at "
                     "Re A = 1)");
        return DPA_OK;
    }
    double complex le = CMPLX(sr, si), d = le / z;
    v->log_e_re = sr;
    v->log_e_im = si;
    v->re = creal(d);
    v->im = cimag(d);
    v->exists = isfinite(v->re) && isfinite(v->im);
    v->certified = v->tight = !(how & (DPA_RENYI_H_PHI | DPA_RENYI_H_HEUR));
    if (how & DPA_RENYI_H_PHI)
        snprintf(v->note, sizeof v->note,
                 "estimate: numerical quadrature (phi module); branch: continuation from the real axis along Re A "
                 "= %g%s",
                 creal(A), (how & DPA_RENYI_H_HEUR) ? " (followed numerically)" : "");
    else if (how & DPA_RENYI_H_HEUR)
        snprintf(v->note, sizeof v->note,
                 "closed forms/exact sums; branch: continuation from the real axis along Re A = %g, partly followed "
                 "by uncertified steps",
                 creal(A));
    else
        snprintf(v->note, sizeof v->note,
                 "closed forms/exact sums; branch: continuation from the real axis along Re A = %g (certified steps)",
                 creal(A));
    return DPA_OK;
}
