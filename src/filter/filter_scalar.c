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
 * Costs come from filter_cost.c (certified upper bounds, exact at decimal
 * parameters); sums and products are decimal (filter_decimal.h), exact
 * up to 36 digits and otherwise rounded toward less remaining budget, and
 * compared with the budget exactly: a query that lands exactly on the
 * budget is accepted (docs/filters.md, "Exact budgets"). */
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

static void dstr(dpa_dec a, char *buf) { dpa_dec_str(a, buf); }

dpa_status dpa_f_request_scalar(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    char b1[DPA_DEC_STRLEN], b2[DPA_DEC_STRLEN], b3[DPA_DEC_STRLEN];
    switch (f->kind) {
    case DPA_F_PURE: {
        dpa_dec e;
        if ((st = dpa_f_pure_eps(q, &e, err))) return st;
        dpa_dec s = dpa_dec_add(f->spent_eps, e, 1);
        if (dpa_dec_cmp(s, f->d_eps) > 0) {
            dstr(f->spent_eps, b1), dstr(e, b2), dstr(f->d_eps, b3);
            reason(out, "rejected: spent %s + query eps %s > budget %s", b1, b2, b3);
            return DPA_OK;
        }
        f->spent_eps = s;
        break;
    }
    case DPA_F_BASIC: {
        dpa_dec e, k;
        if ((st = dpa_f_approx(q, &e, &k, err))) return st;
        dpa_dec s = dpa_dec_add(f->spent_eps, e, 1), l = dpa_dec_mul(f->keep, k, 0);
        /* prod(1 - delta_i) >= 1 - D, the product rounded down */
        if (dpa_dec_cmp(s, f->d_eps) > 0) {
            dstr(f->spent_eps, b1), dstr(e, b2), dstr(f->d_eps, b3);
            reason(out, "rejected: spent eps %s + query eps %s > budget %s", b1, b2, b3);
            return DPA_OK;
        }
        if (dpa_dec_cmp(l, f->d_keep) < 0) {
            dstr(dpa_dec_sub(dpa_dec_int(1), l, 1), b1);
            reason(out, "rejected: 1 - prod(1 - delta_i) would be %.40s > budget delta %.17g", b1, f->delta);
            return DPA_OK;
        }
        f->spent_eps = s;
        f->keep = l;
        break;
    }
    case DPA_F_RDP:
    case DPA_F_ZCDP: {
        dpa_dec *c = malloc(f->norders * sizeof *c);
        if (!c) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        if (f->kind == DPA_F_ZCDP) st = dpa_f_zcdp(q, &c[0], err);
        else st = dpa_f_rdp(q, f->orders, f->norders, c, err);
        if (st) {
            free(c);
            return st;
        }
        for (size_t i = 0; i < f->norders; i++) {
            dpa_dec s = dpa_dec_add(f->spent_rho[i], c[i], 1);
            if (dpa_dec_cmp(s, f->d_rho[i]) > 0) {
                dstr(f->spent_rho[i], b1), dstr(c[i], b2), dstr(f->d_rho[i], b3);
                if (f->kind == DPA_F_ZCDP)
                    reason(out, "rejected: spent rho %s + query rho %s > budget %s", b1, b2, b3);
                else
                    reason(out, "rejected at order %.17g: spent %s + query RDP %s > budget %s", f->orders[i], b1, b2, b3);
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
