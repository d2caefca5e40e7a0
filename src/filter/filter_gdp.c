/* GDP filters: naive (Koskela et al. 2022; RF Remark 2) and the GDP residue
 * filter (RF Thm 5).  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * State: mu_rem, the remaining GDP budget (rounded down).
 *  naive    nu = a certified upper bound on the query's smallest GDP
 *           parameter (filter_cost.c); accept iff nu <= mu_rem; then
 *           mu_rem <- sqrt(mu_rem^2 - nu^2) rounded down.  A query with no
 *           certified finite nu is refused (DPA_EUNSUPPORTED).
 *  residue  accept iff L <= G_mu_rem; then mu_rem <- the largest mu' found
 *           by bisection with G_mu' (+) L <= G_mu_rem (filter_dominance.c:
 *           every test certified, the result one that passed), i.e. rounded
 *           toward less remaining budget. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "filter/filter_internal.h"

dpa_status dpa_f_request_gdp(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    if (f->kind == DPA_F_GDP) {
        double nu;
        char how[200];
        if ((st = dpa_f_gdp_nu(q, &nu, how, sizeof how, err))) return st;
        if (!(nu <= f->mu_rem)) {
            snprintf(out->reason, sizeof out->reason, "rejected: query nu %.17g > remaining mu %.17g (%.120s)", nu,
                     f->mu_rem, how);
            return DPA_OK;
        }
        double r = sqrt((f->mu_rem - nu) * (f->mu_rem + nu)) * (1 - 8 * 1.1102230246251565e-16);
        f->mu_rem = dpa_f_dn(fmin(r, f->mu_rem));
        if (f->mu_rem < 0) f->mu_rem = 0;
        snprintf(out->reason, sizeof out->reason, "charged nu = %.17g (%.180s)", nu, how);
    } else {
        dpa_f_query *fq;
        char remark[200];
        if ((st = dpa_f_query_new(q, &fq, remark, sizeof remark, err))) return st;
        int acc;
        double m;
        st = dpa_f_residue_update(fq, f->mu_rem, &acc, &m, err);
        dpa_f_query_free(fq);
        if (st) return st;
        if (!acc) {
            snprintf(out->reason, sizeof out->reason,
                     "rejected: the query is not certified below G_mu for the remaining mu %.17g (RF Thm 5)%s%.120s",
                     f->mu_rem, remark[0] ? "; " : "", remark);
            return DPA_OK;
        }
        f->mu_rem = m;
        snprintf(out->reason, sizeof out->reason, "%s", remark);
    }
    f->accepted += 1;
    out->accepted = 1;
    return DPA_OK;
}
