/* Natural filters (RF Alg 2): accept iff L_1 (+) ... (+) L_t <= B.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The natural filter is free for every budget exactly when the query
 * family's compositions are totally ordered (RF Thm 8).  Two such families
 * are offered:
 *  {"mu": M}     GDP queries (compositions of gaussian/gdp leaves, no
 *                sampling): G_a (+) G_b = G_sqrt(a^2+b^2), totally ordered
 *                (RF Cor 5).  The composition is G_mu_spent; accept iff
 *                mu_spent^2 = sum mu_i^2 <= M^2 (exact decimals,
 *                docs/filters.md "Exact budgets").
 *  {"delta": D}  (0, delta) queries (approx leaves with epsilon 0):
 *                R_{0,d1} (+) R_{0,d2} = R_{0, 1-(1-d1)(1-d2)} (RF Cor 6);
 *                accept iff prod(1 - delta_i) >= 1 - D (exact decimals).
 * Any other query is refused (DPA_EUNSUPPORTED) with the reason: pure-DP
 * queries break it from 3 rounds on (RF Cor 2), (eps, delta) queries at 2
 * (RF Cor 1, 3), general queries even under a GDP budget (RF Cor 4).
 *
 * "natural-approx" is the natural filter with the budget R_{E,D} for
 * symmetric queries: accept iff the composition's delta(E) <= D (for
 * symmetric PLDs this is L <= R_{E,D}, RF §7), computed by the accountant
 * (certified upper bound).  It is NOT free (RF Cor 1, 3); it is offered only
 * with allow_degraded and a capacity k (max_queries), and reports RF Thm 9's
 * guarantee with the explicit constants of its proof:
 *   n = 1 + ceil(log2(k (E + 2) / E)),   L = ceil(log2(1/D)),
 *   eps' = n * 2 L * (9 E + 2),   delta' = n * (32 L + 4) * D
 * (Thm 15's proof: eps' = n 2 ceil(log(1/delta)) (9 eps + 2), delta' =
 * n 32 ceil(log(1/delta)) delta + 4 n delta; the paper does not say the base
 * of log: log2 >= ln is used, which only enlarges b*_i of its eq (5) and so
 * keeps the proof valid under either reading). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "filter/filter_internal.h"
#include "event/event_internal.h"
#include "model/leaves.h"
#include "dpacct/accountant.h"

void dpa_f_thm9(double eps, double delta, double k, double *eps_out, double *delta_out, double *n_out)
{
    double n = 1 + ceil(log2(k * (eps + 2) / eps));
    double L = ceil(log2(1 / delta));
    *n_out = n;
    *eps_out = dpa_f_up(n * 2 * L * (9 * eps + 2) * (1 + 1e-15));
    *delta_out = dpa_f_up(n * (32 * L + 4) * delta * (1 + 1e-15));
}

/* Checks that a query may enter natural-approx (or additive-profile):
 * symmetric PLD. */
dpa_status dpa_f_symmetric_query(const dpa_spec *q, const char *filter, dpa_error *err)
{
    dpa_leafset ls;
    dpa_status st = dpa_leaves_build(q, &ls, err);
    if (st) return st == DPA_EINVAL ? st : DPA_EUNSUPPORTED;
    int asym = ls.asymmetric;
    dpa_leaves_free(&ls);
    if (asym)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "%s: the query's PLD is asymmetric; RF Thm 9 covers symmetric queries only (use "
                             "the \"basic\" or \"gdp-residue\" filter)", filter);
    return DPA_OK;
}

static int push_spec(dpa_filter *f, char *s)
{
    if (f->nspecs == f->capspecs) {
        size_t nc = f->capspecs ? 2 * f->capspecs : 8;
        char **t = realloc(f->specs, nc * sizeof *t);
        if (!t) return 0;
        f->specs = t;
        f->capspecs = nc;
    }
    f->specs[f->nspecs++] = s;
    return 1;
}

/* The certified upper delta(E) of the composition of the accepted queries
 * and q (q may be NULL). */
static dpa_status comp_delta(const dpa_filter *f, const dpa_spec *q, double *out, dpa_error *err)
{
    size_t n = f->nspecs + (q ? 1 : 0);
    dpa_event **ch = calloc(n ? n : 1, sizeof *ch);
    if (!ch) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    dpa_status st = DPA_OK;
    for (size_t i = 0; i < f->nspecs; i++) {
        dpa_spec *s = dpa_spec_from_json(f->specs[i], err);
        if (!s) {
            st = err ? err->status : DPA_EINVAL;
            break;
        }
        ch[i] = dpa_event_copy(dpa_spec_root(s));
        dpa_spec_free(s);
        if (!ch[i]) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            break;
        }
    }
    if (!st && q && !(ch[n - 1] = dpa_event_copy(dpa_spec_root(q)))) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (st) {
        for (size_t i = 0; i < n; i++) dpa_event_free(ch[i]);
        free(ch);
        return st;
    }
    dpa_event *root = dpa_event_compose(ch, n, err); /* takes the children */
    free(ch);
    if (!root) return err ? err->status : DPA_ENOMEM;
    dpa_spec *c = dpa_spec_new(root, q ? dpa_spec_neighboring(q) : (dpa_neighboring)f->nb, err);
    if (!c) return err ? err->status : DPA_ENOMEM;
    dpa_accountant *a = dpa_accountant_new(c, NULL, err);
    dpa_spec_free(c);
    if (!a) return err && err->status == DPA_ENOMEM ? DPA_ENOMEM : DPA_EUNSUPPORTED;
    dpa_result r;
    st = dpa_accountant_delta(a, f->eps, &r, err);
    dpa_accountant_free(a);
    if (st) return st;
    *out = r.certified ? r.upper : INFINITY;
    return DPA_OK;
}

dpa_status dpa_f_natural_restore(dpa_filter *f, json_t *queries, dpa_error *err)
{
    for (size_t i = 0; i < json_array_size(queries); i++) {
        json_t *v = json_array_get(queries, i);
        if (!json_is_string(v)) return dpa_error_set(err, DPA_EINVAL, "state /queries/%zu: must be a string", i);
        dpa_error e2;
        dpa_spec *s = dpa_spec_from_json(json_string_value(v), &e2);
        if (!s) return dpa_error_set(err, DPA_EINVAL, "state /queries/%zu: %s", i, e2.message);
        char *c = dpa_spec_to_json(s);
        int nb = (int)dpa_spec_neighboring(s);
        dpa_spec_free(s);
        if (!c || strcmp(c, json_string_value(v)) || (f->nb >= 0 && nb != f->nb) || !push_spec(f, c)) {
            free(c);
            for (size_t j = 0; j < f->nspecs; j++) free(f->specs[j]);
            free(f->specs);
            f->specs = NULL;
            f->nspecs = f->capspecs = 0;
            return dpa_error_set(err, DPA_EINVAL, "state /queries/%zu: not a canonical spec of this filter", i);
        }
        f->nb = nb;
    }
    return DPA_OK;
}

dpa_status dpa_f_request_natural(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    if (f->kind == DPA_F_NATURAL_GDP) {
        dpa_dec m2;
        if (!dpa_f_gaussian_sq(q, &m2))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "natural filter with a GDP budget: only GDP queries (gaussian/gdp leaves, no sampling) "
                                 "keep it free (RF Cor 5); for other queries the natural filter is not free (RF Thm 8, "
                                 "Cor 2-4): use the \"gdp-residue\" filter");
        /* G_a (+) G_b = G_sqrt(a^2 + b^2): sum the squares, compare with M^2 */
        dpa_dec s = dpa_dec_add(f->mu2_spent, m2, 1);
        if (dpa_dec_cmp(s, f->d_mu2) > 0) {
            snprintf(out->reason, sizeof out->reason, "rejected: the composition would be %.17g-GDP > budget %.17g",
                     sqrt(dpa_dec_to_double(s, 1)), f->mu);
            return DPA_OK;
        }
        f->mu2_spent = s;
    } else if (f->kind == DPA_F_NATURAL_DELTA) {
        dpa_dec k;
        if (!dpa_f_zero_eps_delta(q, &k))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "natural filter with a (0, delta) budget: only (0, delta) queries (approx leaves with "
                                 "epsilon 0) keep it free (RF Cor 6); a Gaussian or (eps, delta) query breaks it (RF Thm "
                                 "8, Cor 1, 3): use \"basic\" or \"gdp-residue\"");
        dpa_dec l = dpa_dec_mul(f->keep, k, 0);
        if (dpa_dec_cmp(l, f->d_keep) < 0) {
            snprintf(out->reason, sizeof out->reason, "rejected: the composition's delta would be %.6g > budget %.17g",
                     1 - dpa_dec_to_double(l, 0), f->delta);
            return DPA_OK;
        }
        f->keep = l;
    } else {
        if ((st = dpa_f_symmetric_query(q, "natural-approx", err))) return st;
        if (f->nb >= 0 && (int)dpa_spec_neighboring(q) != f->nb)
            return dpa_error_set(err, DPA_EUNSUPPORTED, "natural-approx: the query's neighbouring relation differs from "
                                                        "the accepted queries'");
        if (!(f->accepted < f->max_queries)) {
            snprintf(out->reason, sizeof out->reason, "rejected: capacity of %.17g queries reached (RF Thm 9's k)",
                     f->max_queries);
            return DPA_OK;
        }
        double d = INFINITY;
        if ((st = comp_delta(f, q, &d, err))) return st;
        if (!(d <= f->delta)) {
            snprintf(out->reason, sizeof out->reason,
                     "rejected: the composition's delta(%.17g) would be %.6g > %.17g", f->eps, d, f->delta);
            return DPA_OK;
        }
        char *c = dpa_spec_to_json(q);
        if (!c || !push_spec(f, c)) {
            free(c);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        f->nb = (int)dpa_spec_neighboring(q);
        f->last_delta = d + 0.0; /* never -0: the state is canonical */
        double e2, d2, n;
        dpa_f_thm9(f->eps, f->delta, f->max_queries, &e2, &d2, &n);
        snprintf(out->reason, sizeof out->reason,
                 "natural (eps, delta) filter: not free (RF Cor 1, 3); the interaction is only guaranteed (%.6g, %.6g)-DP "
                 "(RF Thm 9)", e2, d2);
    }
    f->accepted += 1;
    out->accepted = 1;
    return DPA_OK;
}
