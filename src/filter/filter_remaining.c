/* Privacy filters: the remaining budget and exhaustion
 * (include/dpacct/filter.h; docs/filters.md).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every shown amount is rounded down from the exact decimal state
 * (docs/filters.md, "Exact budgets"); the (eps, delta) views are certified
 * conversions rounded up. */
#include <math.h>
#include <stdio.h>
#include "filter/filter_internal.h"
#include "rdp/rdp.h"
#include "exact/exact.h"

/* ---------------- remaining budget ---------------- */
/* the remaining delta: the largest d with (1 - d) keep >= 1 - D, i.e.
 * 1 - (1 - D)/keep, rounded down */
static double rem_delta(const dpa_filter *f)
{
    dpa_dec q = dpa_dec_div(f->d_keep, f->keep, 1);
    return dpa_dec_to_double(dpa_dec_sub(dpa_dec_int(1), q, 0), 0);
}

/* budget - spent, rounded down, as a double */
static double rem_dec(dpa_dec budget, dpa_dec spent) { return dpa_dec_to_double(dpa_dec_sub(budget, spent, 0), 0); }

char *dpa_filter_remaining_json(const dpa_filter *f)
{
    if (!f) return NULL;
    dpa_f_sb b = {0};
    switch (f->kind) {
    case DPA_F_PURE: {
        double r = rem_dec(f->d_eps, f->spent_eps);
        dpa_f_sb_add(&b, "{\"epsilon\":");
        dpa_f_sb_num(&b, r);
        dpa_f_sb_add(&b, ",\"as_epsilon_delta\":{\"epsilon\":");
        dpa_f_sb_num(&b, r);
        dpa_f_sb_add(&b, ",\"delta\":0}}");
        break;
    }
    case DPA_F_BASIC: {
        double r = rem_dec(f->d_eps, f->spent_eps), d = rem_delta(f);
        dpa_f_sb_add(&b, "{\"epsilon\":");
        dpa_f_sb_num(&b, r);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, d);
        dpa_f_sb_add(&b, ",\"as_epsilon_delta\":{\"epsilon\":");
        dpa_f_sb_num(&b, r);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, d);
        dpa_f_sb_add(&b, "}}");
        break;
    }
    case DPA_F_NATURAL_DELTA: {
        double d = rem_delta(f);
        dpa_f_sb_add(&b, "{\"delta\":");
        dpa_f_sb_num(&b, d);
        dpa_f_sb_add(&b, ",\"as_epsilon_delta\":{\"epsilon\":0,\"delta\":");
        dpa_f_sb_num(&b, d);
        dpa_f_sb_add(&b, "}}");
        break;
    }
    case DPA_F_RDP: {
        /* remaining per order; as (eps, delta): the best order's conversion
         * (Balle et al. 2020 Thm 21) of the remaining budget */
        double best = INFINITY;
        dpa_f_sb_add(&b, "{\"rho\":%s", f->rdp_vector ? "[" : "");
        for (size_t i = 0; i < f->norders; i++) {
            double r = rem_dec(f->d_rho[i], f->spent_rho[i]);
            if (i) dpa_f_sb_add(&b, ",");
            dpa_f_sb_num(&b, r);
            double e = dpa_rdp_eps_from(DPA_RDP_IMPROVED, f->orders[i], r, f->report_delta);
            if (e < best) best = e;
        }
        dpa_f_sb_add(&b, "%s,\"order\":%s", f->rdp_vector ? "]" : "", f->rdp_vector ? "[" : "");
        for (size_t i = 0; i < f->norders; i++) {
            if (i) dpa_f_sb_add(&b, ",");
            dpa_f_sb_num(&b, f->orders[i]);
        }
        dpa_f_sb_add(&b, "%s,\"as_epsilon_delta\":{\"epsilon\":", f->rdp_vector ? "]" : "");
        dpa_f_sb_num(&b, best);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        dpa_f_sb_add(&b, "}}");
        break;
    }
    case DPA_F_ZCDP: {
        double r = rem_dec(f->d_rho[0], f->spent_rho[0]);
        /* Bun-Steinke 2016 Prop 1.3: rho-zCDP => (rho + 2 sqrt(rho log(1/delta)), delta) */
        double e = r > 0 ? dpa_f_up((r + 2 * sqrt(r * log(1 / f->report_delta))) * (1 + 1e-14)) : 0;
        dpa_f_sb_add(&b, "{\"rho\":");
        dpa_f_sb_num(&b, r);
        dpa_f_sb_add(&b, ",\"as_epsilon_delta\":{\"epsilon\":");
        dpa_f_sb_num(&b, e);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        dpa_f_sb_add(&b, "}}");
        break;
    }
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
    case DPA_F_NATURAL_GDP: {
        if (f->bcurve && !f->has_res) { /* the general residue filter, nothing accepted yet */
            dpa_f_sb_add(&b, "{\"tradeoff\":\"the configured budget\",\"delta\":");
            dpa_f_sb_num(&b, dpa_dec_to_double(f->delta_res, 0));
            dpa_f_sb_add(&b, "}");
            break;
        }
        /* sqrt of the remaining mu^2, rounded down (its shortest decimal squares to at most it) */
        double r = f->kind != DPA_F_NATURAL_GDP && f->has_res && dpa_dec_is_zero(f->mu2_spent)
                       ? f->mu_res /* the residue search's result itself */
                       : dpa_dec_sqrt_show(f->kind == DPA_F_NATURAL_GDP ? dpa_dec_sub(f->d_mu2, f->mu2_spent, 0)
                                                                        : dpa_f_gdp_rem2(f));
        double eu = 0, el = 0, d = f->kind == DPA_F_GDP_RESIDUE ? dpa_dec_to_double(f->delta_res, 0) : 0;
        int show_d = f->kind == DPA_F_GDP_RESIDUE && (f->delta > 0 || f->bcurve);
        if (d > 0) {
            /* G_r (+) R_{0,d} is (eps, d + (1 - d) delta_r(eps))-DP: eps at
             * delta_r = (report_delta - d)/(1 - d), rounded down; none (inf)
             * when report_delta <= d */
            double t = dpa_f_dn(dpa_f_dn(f->report_delta - d) / dpa_f_up(1 - d));
            eu = INFINITY;
            if (t > 0 && r > 0) dpa_exact_epsilon(r, t, &eu, &el);
            else if (t > 0) eu = 0;
        } else if (r > 0) {
            dpa_exact_epsilon(r, f->report_delta, &eu, &el);
        }
        dpa_f_sb_add(&b, "{\"mu\":");
        dpa_f_sb_num(&b, r);
        if (show_d) {
            dpa_f_sb_add(&b, ",\"delta\":");
            dpa_f_sb_num(&b, d);
        }
        dpa_f_sb_add(&b, ",\"as_epsilon_delta\":{\"epsilon\":");
        dpa_f_sb_num(&b, eu);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        dpa_f_sb_add(&b, "}}");
        break;
    }
    case DPA_F_ADDITIVE: {
        double e2, d2, n;
        dpa_f_thm9(f->eps, f->delta, f->max_queries, &e2, &d2, &n);
        dpa_f_sb_add(&b, "{\"levels\":[");
        for (size_t i = 0; i < f->nlev; i++) {
            if (i) dpa_f_sb_add(&b, ",");
            dpa_f_sb_num(&b, rem_dec(f->lev_budget[i], f->lev_spent[i]));
        }
        dpa_f_sb_add(&b, "],\"queries_left\":%.17g", fmax(0, f->max_queries - f->accepted));
        dpa_f_sb_add(&b, ",\"guarantee\":{\"epsilon\":");
        dpa_f_sb_num(&b, e2);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, d2);
        dpa_f_sb_add(&b, ",\"source\":\"RF Thm 15 (Alg 3, levels of eq (1)) with the constants of its proof: n = %.17g levels\"}}", n);
        break;
    }
    case DPA_F_NATURAL_APPROX: {
        double e2, d2, n;
        dpa_f_thm9(f->eps, f->delta, f->max_queries, &e2, &d2, &n);
        dpa_f_sb_add(&b, "{\"epsilon\":");
        dpa_f_sb_num(&b, f->eps);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->delta);
        dpa_f_sb_add(&b, ",\"delta_at_epsilon\":");
        dpa_f_sb_num(&b, f->last_delta);
        dpa_f_sb_add(&b, ",\"queries_left\":%.17g", fmax(0, f->max_queries - f->accepted));
        dpa_f_sb_add(&b, ",\"degraded_guarantee\":{\"epsilon\":");
        dpa_f_sb_num(&b, e2);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, d2);
        dpa_f_sb_add(&b, ",\"source\":\"RF Thm 9 with the constants of its proof (Thms 14, 15): n = %.17g levels\"}}", n);
        break;
    }
    }
    return dpa_f_sb_done(&b);
}

int dpa_filter_exhausted(const dpa_filter *f)
{
    if (!f) return 1;
    switch (f->kind) {
    case DPA_F_PURE: return dpa_dec_cmp(f->spent_eps, f->d_eps) >= 0;
    case DPA_F_BASIC: return dpa_dec_cmp(f->spent_eps, f->d_eps) >= 0 && dpa_dec_cmp(f->keep, f->d_keep) <= 0;
    case DPA_F_NATURAL_DELTA: return dpa_dec_cmp(f->keep, f->d_keep) <= 0;
    case DPA_F_RDP:
    case DPA_F_ZCDP:
        for (size_t i = 0; i < f->norders; i++)
            if (dpa_dec_cmp(f->spent_rho[i], f->d_rho[i]) >= 0) return 1;
        return 0;
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
        return (!f->bcurve || f->has_res) && dpa_dec_is_zero(dpa_f_gdp_rem2(f)) && dpa_dec_is_zero(f->delta_res); /* (0, d) queries fit a delta left */
    case DPA_F_NATURAL_GDP: return dpa_dec_cmp(f->mu2_spent, f->d_mu2) >= 0;
    case DPA_F_NATURAL_APPROX: return !(f->accepted < f->max_queries) || !(f->last_delta < f->delta);
    case DPA_F_ADDITIVE: return !(f->accepted < f->max_queries);
    }
    return 1;
}
