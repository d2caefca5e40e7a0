/* GDP filters: naive (Koskela et al. 2022; RF Remark 2) and the GDP residue
 * filter (RF Thm 5).  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * State: a base (the budget M as the decimal the JSON wrote, or, under
 * gdp-residue, mu_res: the double the last residue search returned) and
 * mu2_spent, the decimal sum of the nu_i^2 charged since; the remaining
 * budget is G_sqrt(base^2 - mu2_spent) (docs/filters.md, "Exact budgets").
 *  naive    nu^2 = a certified upper bound on the square of the query's
 *           smallest GDP parameter (filter_cost.c; exact for Gaussian
 *           queries with decimal parameters); accept iff nu^2 <= base^2 -
 *           mu2_spent; then mu2_spent += nu^2.  A query with no certified
 *           finite nu is refused (DPA_EUNSUPPORTED).
 *  residue  a Gaussian query (gaussian/gdp leaves, no sampling) G_nu: the
 *           residue of G_M after G_nu is exactly G_sqrt(M^2 - nu^2) (GDP
 *           compositions are totally ordered, RF Cor 5), so it is charged
 *           as in the naive filter, exactly.  Any other query L: accept iff
 *           L <= G_M; then the base becomes m, the largest mu' found by
 *           bisection with G_mu' (+) L <= G_M (filter_dominance.c: every
 *           test certified, the result one that passed), and mu2_spent 0;
 *           M is a double at most the remaining mu (the base itself when
 *           nothing was charged since).  An eps-DP query whose naive update
 *           (nu(eps)) leaves more is charged as in the naive filter. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "filter/filter_internal.h"

/* The residue search is skipped for an eps-DP query with nu(eps)^2 <=
 * NEGLIGIBLE M^2: it could gain at most M - sqrt(M^2 - nu^2) <= NEGLIGIBLE
 * M / 2 over the naive update, less than its own bisection tolerance
 * (RES_TOL = 1e-8 M in filter_dominance.c). */
#define NEGLIGIBLE 1e-8

dpa_dec dpa_f_gdp_rem2(const dpa_filter *f)
{
    dpa_dec b2 = f->d_mu2;
    if (f->has_res) {
        dpa_dec b = dpa_dec_from_double(f->mu_res, 0);
        b2 = dpa_dec_mul(b, b, 0);
    }
    return dpa_dec_sub(b2, f->mu2_spent, 0);
}

/* A double M <= the remaining mu for the dominance tests: the base when
 * nothing was charged since, else the displayed square root (whose
 * shortest decimal squares to at most the remaining mu^2), moved down to a
 * double not above that decimal. */
static double mu_for_tests(const dpa_filter *f)
{
    if (f->has_res && dpa_dec_is_zero(f->mu2_spent)) return f->mu_res;
    return dpa_dec_to_double(dpa_dec_param(dpa_dec_sqrt_show(dpa_f_gdp_rem2(f))), 0);
}

/* A Gaussian query that exactly exhausts the budget is accepted. */
static int charge_sq(dpa_filter *f, dpa_dec nu2, dpa_filter_decision *out, const char *how)
{
    dpa_dec rem2 = dpa_f_gdp_rem2(f);
    if (dpa_dec_cmp(nu2, rem2) > 0) {
        snprintf(out->reason, sizeof out->reason, "rejected: query nu %.17g > remaining mu %.17g (%.120s)",
                 sqrt(dpa_dec_to_double(nu2, 1)), dpa_dec_sqrt_show(rem2), how);
        return 0;
    }
    f->mu2_spent = dpa_dec_add(f->mu2_spent, nu2, 1);
    return 1;
}

/* The general residue filter's first query under a budget curve (RF Thm 1,
 * Alg 1): accept iff R_{0,d} (+) L <= B; the residue G_m (+) R_{0,d} becomes
 * the state's budget (filter_dominance.c, dpa_f_residue_update_curve). */
static dpa_status request_curve(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_f_query *fq;
    char remark[200];
    dpa_status st = dpa_f_query_new(q, &fq, remark, sizeof remark, err);
    if (st) return st;
    int acc;
    double m, d;
    st = dpa_f_residue_update_curve(fq, f->bcurve, &acc, &m, &d, err);
    dpa_f_query_free(fq);
    if (st) return st;
    if (!acc) {
        snprintf(out->reason, sizeof out->reason, "rejected: the query is not certified below the budget curve (RF Thm 1)%s%.120s",
                 remark[0] ? "; " : "", remark);
        return DPA_OK;
    }
    f->has_res = 1;
    f->mu_res = m + 0.0;
    f->mu2_spent = dpa_dec_int(0);
    f->delta_res = dpa_dec_from_double(d, 0);
    snprintf(out->reason, sizeof out->reason, "residue G_mu (+) R_{0,delta} of the budget curve (RF Thm 1)%s%.120s",
             remark[0] ? "; " : "", remark);
    f->accepted += 1;
    out->accepted = 1;
    return DPA_OK;
}

dpa_status dpa_f_request_gdp(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    dpa_dec nu2;
    if (f->bcurve && !f->has_res) return request_curve(f, q, out, err);
    if (f->kind == DPA_F_GDP) {
        char how[200];
        if ((st = dpa_f_gdp_nu(q, &nu2, how, sizeof how, err))) return st;
        if (!charge_sq(f, nu2, out, how)) return DPA_OK;
        snprintf(out->reason, sizeof out->reason, "charged nu = %.17g (%.180s)", sqrt(dpa_dec_to_double(nu2, 1)), how);
    } else if (dpa_f_gaussian_sq(q, &nu2)) {
        if (!charge_sq(f, nu2, out, "Gaussian query, RF Cor 5")) return DPA_OK;
    } else if ((f->delta > 0 || f->bcurve) && dpa_f_zero_eps_delta(q, &nu2)) {
        /* a (0, a) query under G_m (+) R_{0,d}: the residue G_m (+)
         * R_{0,d'}, 1 - d' = (1 - d)/(1 - a) rounded up (R_{0,d'} (+) R_{0,a}
         * = R_{0, 1-(1-d')(1-a)}, RF Cor 6); mu is untouched */
        dpa_dec one = dpa_dec_int(1), keep = nu2; /* 1 - a, rounded down */
        dpa_dec q1 = dpa_dec_div(dpa_dec_sub(one, f->delta_res, 1), keep, 1);
        if (dpa_dec_cmp(q1, one) > 0) {
            snprintf(out->reason, sizeof out->reason, "rejected: the query's delta %.6g > remaining delta %.6g (RF Cor 6)",
                     1 - dpa_dec_to_double(keep, 0), dpa_dec_to_double(f->delta_res, 0));
            return DPA_OK;
        }
        f->delta_res = dpa_dec_sub(one, q1, 0);
        snprintf(out->reason, sizeof out->reason, "(0, delta) query: charged to the budget's delta (RF Cor 6)");
    } else {
        /* the naive update is a residue too: an eps-DP query is dominated by
         * RR_eps, which is nu(eps)-GDP, so G_sqrt(M^2 - nu^2) (+) L <= G_M */
        dpa_dec pe, nu2n = {0, 0}, rem2 = dpa_f_gdp_rem2(f);
        dpa_error e2;
        int naive = 0;
        if (dpa_f_pure_eps(q, &pe, &e2) == DPA_OK) {
            dpa_dec n = dpa_dec_from_double(dpa_f_nu_pure(dpa_dec_to_double(pe, 1)), 1);
            nu2n = dpa_dec_mul(n, n, 1);
            naive = dpa_dec_cmp(nu2n, rem2) <= 0;
        }
        /* far inside the budget (nu^2 <= NEGLIGIBLE rem^2): the residue
         * search cannot improve on the naive update by more than its own
         * tolerance (the largest residue is at most M, the naive one is
         * sqrt(M^2 - nu^2) >= M (1 - NEGLIGIBLE / 2)), so it is skipped: a
         * query such as 1e15 repeats of a 1e-300-DP leaf is decided in
         * microseconds instead of building its law (about 2 minutes) */
        if (naive && dpa_dec_cmp(nu2n, dpa_dec_mul(rem2, dpa_dec_param(NEGLIGIBLE), 0)) <= 0) {
            f->mu2_spent = dpa_dec_add(f->mu2_spent, nu2n, 1);
            snprintf(out->reason, sizeof out->reason, "eps-DP query far inside the budget: charged nu(eps) = %.3g (RF Remark 2)",
                     sqrt(dpa_dec_to_double(nu2n, 1)));
            f->accepted += 1;
            out->accepted = 1;
            return DPA_OK;
        }
        dpa_f_query *fq;
        char remark[200];
        if ((st = dpa_f_query_new(q, &fq, remark, sizeof remark, err))) return st;
        int acc;
        double m, dn, M = mu_for_tests(f), D = dpa_dec_to_double(f->delta_res, 0);
        st = dpa_f_residue_update(fq, M, D, &acc, &m, &dn, err);
        dpa_f_query_free(fq);
        if (st) return st;
        if (!acc && !naive) {
            if (f->delta > 0 || f->bcurve)
                snprintf(out->reason, sizeof out->reason,
                         "rejected: the query is not certified below G_mu (+) R_{0,delta} for the remaining mu %.17g, "
                         "delta %.6g (RF Thm 1, 5)%s%.100s",
                         M, D, remark[0] ? "; " : "", remark);
            else /* the mu-GDP budget: the message as before approximate budgets */
                snprintf(out->reason, sizeof out->reason,
                         "rejected: the query is not certified below G_mu for the remaining mu %.17g (RF Thm 5)%s%.120s",
                         M, remark[0] ? "; " : "", remark);
            return DPA_OK;
        }
        /* keep the larger: the search's m, or the naive update */
        m = fmin(m, M);
        dpa_dec md = dpa_dec_from_double(m, 1);
        if (acc && !(naive && dpa_dec_cmp(dpa_dec_mul(md, md, 1), dpa_dec_sub(rem2, nu2n, 0)) < 0)) {
            f->has_res = 1;
            f->mu_res = m;
            f->mu2_spent = dpa_dec_int(0);
            /* the query's own delta spent (the decimal kept when it has none) */
            if (dn != D) f->delta_res = dpa_dec_from_double(dn, 0);
        } else {
            f->mu2_spent = dpa_dec_add(f->mu2_spent, nu2n, 1);
        }
        snprintf(out->reason, sizeof out->reason, "%s", remark);
    }
    f->accepted += 1;
    out->accepted = 1;
    return DPA_OK;
}
