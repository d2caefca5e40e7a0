/* Scalar filters: pure, basic (eps, delta), RDP, zCDP (RF §3; docs/filters.md).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each is a residue filter (RF Thm 1, Remarks 3, 4) whose budget is a
 * number or a vector and whose update subtracts the query's cost:
 *  pure   sum eps_i <= E (Rogers et al. 2016; RF Remark 3).
 *  basic  sum eps_i <= E and prod (1 - delta_i) >= 1 - D (RF: R_{eps,delta}
 *         = R_{0,delta} (+) R_eps, R_{0,d1} (+) R_{0,d2} = R_{0, 1-(1-d1)(1-d2)},
 *         so the residue of R_{E,D} after R_{e,d} dominates
 *         R_{E-e, 1-(1-D)/(1-d)}).
 *  rdp    Feldman-Zrnic 2021 (RF Remark 4): at order a, sum rdp_i(a) <= R.
 *         With several orders the filter accepts only while EVERY order
 *         stays within its budget: then the interaction is (a, R_a)-RDP for
 *         each a at once (Feldman-Zrnic's theorem at each order: the filter
 *         is a stopping rule predictable in the past, and the sum at a is
 *         <= R_a surely), and the guarantee is the best conversion over the
 *         orders.  The weaker rule "while SOME order is within budget" is not
 *         covered by that theorem (which order holds depends on the
 *         adaptive history), so it is not offered (docs/filters.md).
 *  zcdp   sum rho_i <= R (Feldman-Zrnic 2021 for zCDP).
 * Costs come from filter_cost.c (certified upper bounds); sums are rounded
 * up, so a query that would land exactly on the budget in real arithmetic
 * may be rejected by one ulp (docs/filters.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_internal.h"

static void reason(dpa_filter_decision *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#include <stdarg.h>
static void reason(dpa_filter_decision *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}

dpa_status dpa_f_request_scalar(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    switch (f->kind) {
    case DPA_F_PURE: {
        double e;
        if ((st = dpa_f_pure_eps(q, &e, err))) return st;
        double s = dpa_f_up(f->spent_eps + e);
        if (!(s <= f->eps)) {
            reason(out, "rejected: spent %.17g + query eps %.17g > budget %.17g", f->spent_eps, e, f->eps);
            return DPA_OK;
        }
        f->spent_eps = s;
        break;
    }
    case DPA_F_BASIC: {
        double e, lk;
        if ((st = dpa_f_approx(q, &e, &lk, err))) return st;
        double s = dpa_f_up(f->spent_eps + e), l = dpa_f_dn(f->log_keep + lk);
        /* prod(1 - delta_i) >= 1 - D  <=>  sum log(1 - delta_i) >= log(1 - D)
         * (log1p(-D) rounded up: the check errs toward rejection) */
        double floor_l = dpa_f_up(log1p(-f->delta) * (1 - 8 * 1.1102230246251565e-16));
        if (f->delta == 0) floor_l = 0;
        if (!(s <= f->eps)) {
            reason(out, "rejected: spent eps %.17g + query eps %.17g > budget %.17g", f->spent_eps, e, f->eps);
            return DPA_OK;
        }
        if (!(l >= floor_l)) {
            reason(out, "rejected: 1 - prod(1 - delta_i) would be %.6g > budget delta %.17g", -expm1(l), f->delta);
            return DPA_OK;
        }
        f->spent_eps = s;
        f->log_keep = l;
        break;
    }
    case DPA_F_RDP:
    case DPA_F_ZCDP: {
        double *c = malloc(f->norders * sizeof *c);
        if (!c) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        if (f->kind == DPA_F_ZCDP) st = dpa_f_zcdp(q, &c[0], err);
        else st = dpa_f_rdp(q, f->orders, f->norders, c, err);
        if (st) {
            free(c);
            return st;
        }
        for (size_t i = 0; i < f->norders; i++) {
            double s = dpa_f_up(f->spent_rho[i] + c[i]);
            if (!(s <= f->rho[i])) {
                if (f->kind == DPA_F_ZCDP)
                    reason(out, "rejected: spent rho %.17g + query rho %.17g > budget %.17g", f->spent_rho[i], c[i],
                           f->rho[i]);
                else
                    reason(out, "rejected at order %.17g: spent %.17g + query RDP %.17g > budget %.17g", f->orders[i],
                           f->spent_rho[i], c[i], f->rho[i]);
                free(c);
                return DPA_OK;
            }
            c[i] = s;
        }
        memcpy(f->spent_rho, c, f->norders * sizeof *c);
        free(c);
        break;
    }
    default:
        return dpa_error_set(err, DPA_EINVAL, "internal: not a scalar filter");
    }
    f->accepted += 1;
    out->accepted = 1;
    return DPA_OK;
}
