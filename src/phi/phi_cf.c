/* The characteristic function of a composition's privacy loss on a grid of
 * t, and the inverse Laplace transform of its Renyi function (LT eq 37)
 * with the +inf mass: the two "representations out" of the phi module
 * (docs/phi.md §9; docs/rdp.md §7).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * phi(t) = M(it) = prod_i M_i(it)^{k_i} (CF Prop 12), each leaf as
 *   log M_i(it) = log M_i(0) + i t m_i(0) + psi_i(0; t)      (phi.h),
 * so the composition's log phi = sum_i k_i log M_i(it) is summed without
 * any product of huge powers and exponentiated once.
 *
 * Error of phi.  With Delta the error of the summed logarithm,
 * |e^{L + Delta} - e^L| <= |e^L| (e^{|Delta|} - 1); per leaf |Delta_i| is
 * psi's bound (dpa_phi_psi: round-off, rigorous to first order, plus the
 * quadrature's node-doubling estimate for the QUAD kinds) plus the
 * round-off of log M_i(0) (a log-sum of natoms + 1 terms: (natoms + 4) u;
 * none without atoms, where log M_i(0) = 0 is exact)
 * and of the products t m_i and k_i (...) (4 u of each term), and the sum
 * over leaves adds 4 u (|Re L| + |Im L|); exp, cos and sin add 4 u of
 * |phi|.  A QUAD leaf's inner_err is an estimate: such results are not
 * certified. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "phi/phi.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF

dpa_status dpa_phi_cf(const dpa_phi_leaf *lv, size_t nl, const double *t, size_t n, double *re, double *im,
                      double *error, int *certified, dpa_error *err)
{
    double tmax = 0;
    for (size_t j = 0; j < n; j++) tmax = fmax(tmax, fabs(t[j]));
    if (!(tmax > 0)) tmax = 1; /* every t is 0: any rule serves */
    dpa_phi_tilt *tl = calloc(nl ? nl : 1, sizeof *tl);
    double *lr = calloc(2 * n + 1, sizeof *lr), *li = lr ? lr + n : NULL;
    double *le = calloc(n + 1, sizeof *le);
    dpa_status st = DPA_OK;
    if (!tl || !lr || !le) {
        st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto done;
    }
    *certified = 1;
    for (size_t i = 0; i < nl; i++) {
        const dpa_phi_leaf *l = &lv[i];
        if ((st = dpa_phi_tilt_prepare(l, 0.0, tmax, &tl[i], err))) goto done;
        if (l->cont == DPA_PHI_CONT_QUAD_GAUSS || l->cont == DPA_PHI_CONT_QUAD_LAPLACE) *certified = 0;
        double k = l->count, lm = tl[i].logM, m = tl[i].mean;
        for (size_t j = 0; j < n; j++) {
            double e = 0;
            double complex p = dpa_phi_psi(l, &tl[i], t[j], &e);
            double tm = t[j] * m;
            lr[j] += k * (lm + creal(p));
            li[j] += k * (tm + cimag(p));
            le[j] += k * (e + (l->natoms ? (double)l->natoms + 4 : 0) * U + 4 * U * (fabs(lm) + fabs(tm) + cabs(p)));
        }
    }
    for (size_t j = 0; j < n; j++) {
        double mod = exp(lr[j]);
        double delta = le[j] + 4 * U * (fabs(lr[j]) + fabs(li[j]));
        re[j] = mod * cos(li[j]);
        im[j] = mod * sin(li[j]);
        error[j] = mod * (expm1(delta) + 4 * U);
        if (!isfinite(re[j]) || !isfinite(im[j]) || !(error[j] >= 0)) {
            st = dpa_error_set(err, DPA_ENUMERIC, "characteristic function: no finite value at t = %g", t[j]);
            goto done;
        }
    }
done:
    for (size_t i = 0; tl && i < nl; i++) dpa_phi_tilt_clear(&tl[i]);
    free(tl);
    free(lr);
    free(le);
    return st;
}

dpa_status dpa_phi_lt_estimate(const dpa_phi_leaf *lv, size_t nl, double x, double *value, double *error,
                               dpa_error *err)
{
    const dpa_phi_leaf **ptrs = malloc((nl ? nl : 1) * sizeof *ptrs);
    if (!ptrs) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t i = 0; i < nl; i++) ptrs[i] = &lv[i];
    dpa_phi_comp c = {nl, ptrs};
    dpa_phi_inv v;
    dpa_status st = dpa_phi_bromwich_H(&c, x, &v, err);
    free(ptrs);
    if (st) return st;
    double ilo, iup;
    dpa_phi_inf_mass(lv, nl, &ilo, &iup);
    /* H(x) + the +inf mass (LT eq 20); the estimate's error adds the +inf
     * mass's own bracket */
    *value = fmin(1.0, fmax(0.0, v.value + 0.5 * (ilo + iup)));
    *error = v.certified ? v.quad_err + v.trunc_err + v.round_err + 0.5 * (iup - ilo) : INFINITY;
    return DPA_OK;
}
