/* The additive discretized privacy-loss profile filter (RF Alg 3) with the
 * parameters of RF eq (1) and its guarantee, RF Thm 15.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * {"filter": "additive-profile", "epsilon": E, "delta": D, "max_queries": k}
 * (E > 0, D in (0, 1/4), k a positive integer): the levels
 *   n = 1 + ceil(log2(k (E + 2)/E)),  eps_0 = 0,  eps_i = (E + 2)/2^(n-1-i)
 *   (i = 1..n-1),  eps_n = inf,
 * and the budgets (RF eq (1))
 *   l_1 = k,  l_i = 8 max{l in N : H_{e^E}(RR_{eps_{i-1}}^(x)(l-1)) <= 2D}
 *   (1 < i < n),  l_n = 4D.
 * A symmetric query L is charged its discretized privacy-loss profile
 * (RF Def 13) p_i = P_{Z~L}(eps_{i-1} <= |Z| < eps_i) (p_n: |Z| >= eps_{n-1}),
 * and accepted iff the sums stay within l at every level and at most k
 * queries were accepted.  RF Thm 15: the interaction is (chi (E + 1), chi D)-
 * DP with the explicit constants of its proof (dpa_f_thm9, as for
 * natural-approx; RF Thm 14 is the reason that filter has the same bound).
 *
 * Soundness of what is computed.  Each l_i is the largest l whose
 * certified UPPER bound on H (the accountant, exact method) is <= 2D: at
 * most the paper's l_i.  Each p_i is an upper bound, from the accountant's
 * certified brackets of the loss tails (dpa_accountant_loss_tail):
 *   P(Z >= a) <= P(Z > a-), P(Z >= b) >= P(Z > b),
 *   P(Z <= -a) <= cdf_up(-a), P(Z <= -b) >= P(Z <= (-b)-)
 * (x- the double below x), sums rounded up.  Smaller budgets and larger
 * charges accept a subset of what the paper's rule accepts, so its
 * guarantee holds.  A rejection leaves the state (the analyst passes: an Id
 * round, which is data-independent and leaves the rest a post-processing
 * of the accepted rounds); k counts accepted queries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_internal.h"
#include "dpacct/accountant.h"

/* Largest capacity of the filter: the levels' budgets need compositions of
 * up to k/8 randomized responses (the exact method, a few ms each). */
#define ADDITIVE_K_MAX 1e5

/* The certified upper H_{e^E} of c-fold RR_e (c >= 1), or +inf on error. */
static double rr_power_delta(double e, double c, double E)
{
    char spec[160];
    snprintf(spec, sizeof spec, "{\"repeat\":{\"count\":%.17g,\"event\":{\"randomized_response\":{\"epsilon\":%.17g}}}}", c,
             e);
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(spec, &err);
    if (!s) return INFINITY;
    dpa_options o;
    dpa_options_init(&o);
    o.method = DPA_METHOD_EXACT;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    if (!a) return INFINITY;
    dpa_result r;
    double d = dpa_accountant_delta(a, E, &r, &err) == DPA_OK && r.certified ? r.upper : INFINITY;
    dpa_accountant_free(a);
    return d;
}

dpa_status dpa_f_additive_setup(dpa_filter *f, dpa_error *err)
{
    double k = f->max_queries, E = f->eps;
    size_t n = (size_t)(1 + ceil(log2(k * (E + 2) / E)));
    f->nlev = n;
    f->lev_eps = calloc(n, sizeof *f->lev_eps);
    f->lev_budget = calloc(n, sizeof *f->lev_budget);
    f->lev_spent = calloc(n, sizeof *f->lev_spent);
    if (!f->lev_eps || !f->lev_budget || !f->lev_spent) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    /* lev_eps[i - 1] = eps_i, i = 1..n-1 (eps_n = inf) */
    for (size_t i = 1; i < n; i++) f->lev_eps[i - 1] = (E + 2) / ldexp(1.0, (int)(n - 1 - i));
    f->lev_budget[0] = dpa_dec_param(k);
    f->lev_budget[n - 1] = dpa_dec_mul(dpa_dec_int(4), dpa_dec_param(f->delta), 0);
    double cmax = ceil(k / 8); /* c = l - 1 up to here: 8 (cmax + 1) > k never binds */
    for (size_t i = 2; i < n; i++) {
        double e = f->lev_eps[i - 2], lo = 0, hi = cmax; /* lo passes (c = 0: H = 0) */
        if (rr_power_delta(e, hi, E) <= 2 * f->delta) lo = hi;
        while (hi - lo > 1) {
            double mid = floor((lo + hi) / 2);
            if (rr_power_delta(e, mid, E) <= 2 * f->delta) lo = mid;
            else hi = mid;
        }
        f->lev_budget[i - 1] = dpa_dec_param(8 * (lo + 1)); /* l = c + 1 */
    }
    return DPA_OK;
}

/* Upper bounds on the query's discretized privacy-loss profile (RF Def 13). */
static dpa_status profile_of(const dpa_filter *f, const dpa_spec *q, double *p, dpa_error *err)
{
    dpa_accountant *a = dpa_accountant_new(q, NULL, err);
    if (!a) return err && err->status == DPA_ENOMEM ? DPA_ENOMEM : DPA_EUNSUPPORTED;
    size_t n = f->nlev;
    /* sge[i] >= P(Z >= eps_i), sgt[i] <= P(Z >= eps_i); cle[i] >= P(Z <= -eps_i),
     * clt[i] <= P(Z <= -eps_i), i = 1..n-1 (index i - 1) */
    double *b = calloc(4 * n, sizeof *b); /* n >= 2: 1 + ceil(log2(k (E + 2)/E)) with (E + 2)/E > 1 */
    if (!b) {
        dpa_accountant_free(a);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    double *sge = b, *sgt = b + n, *cle = b + 2 * n, *clt = b + 3 * n;
    dpa_status st = DPA_OK;
    for (size_t i = 0; i + 1 < n && !st; i++) {
        double e = f->lev_eps[i];
        dpa_loss_tail t1, t2, t3, t4;
        if ((st = dpa_accountant_loss_tail(a, nextafter(e, -INFINITY), DPA_DIR_REMOVE, &t1, err)) ||
            (st = dpa_accountant_loss_tail(a, e, DPA_DIR_REMOVE, &t2, err)) ||
            (st = dpa_accountant_loss_tail(a, -e, DPA_DIR_REMOVE, &t3, err)) ||
            (st = dpa_accountant_loss_tail(a, nextafter(-e, -INFINITY), DPA_DIR_REMOVE, &t4, err)))
            break;
        if (!(t1.certified && t2.certified && t3.certified && t4.certified)) {
            st = dpa_error_set(err, DPA_EUNSUPPORTED, "additive-profile: the query's loss tails are not certified");
            break;
        }
        sge[i] = fmin(1.0, t1.sf_upper), sgt[i] = fmax(0.0, t2.sf_lower);
        cle[i] = fmin(1.0, t3.cdf_upper), clt[i] = fmax(0.0, t4.cdf_lower);
    }
    if (!st) {
        /* p_1 = 1 - P(Z >= eps_1) - P(Z <= -eps_1) */
        p[0] = fmin(1.0, dpa_f_up(dpa_f_up(1 - sgt[0]) - clt[0]));
        for (size_t i = 1; i + 1 < n; i++) /* eps_i <= |Z| < eps_{i+1} (index i: level i + 1) */
            p[i] = fmin(1.0, dpa_f_up(dpa_f_up(sge[i - 1] - sgt[i]) + dpa_f_up(cle[i - 1] - clt[i])));
        p[n - 1] = fmin(1.0, dpa_f_up(sge[n - 2] + cle[n - 2]));
        for (size_t i = 0; i < n; i++) p[i] = fmax(0.0, p[i]);
    }
    free(b);
    dpa_accountant_free(a);
    return st;
}

dpa_status dpa_f_request_additive(dpa_filter *f, const dpa_spec *q, dpa_filter_decision *out, dpa_error *err)
{
    dpa_status st;
    if ((st = dpa_f_symmetric_query(q, "additive-profile", err))) return st;
    if (!(f->accepted < f->max_queries)) {
        snprintf(out->reason, sizeof out->reason, "rejected: capacity of %.17g queries reached (RF Alg 3's k)", f->max_queries);
        return DPA_OK;
    }
    double *p = malloc(f->nlev * sizeof *p);
    dpa_dec *s = malloc(f->nlev * sizeof *s);
    if (!p || !s) {
        free(p);
        free(s);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    if (!(st = profile_of(f, q, p, err))) {
        size_t bad = f->nlev;
        for (size_t i = 0; i < f->nlev; i++) {
            s[i] = dpa_dec_add(f->lev_spent[i], dpa_dec_from_double(p[i], 1), 1);
            if (bad == f->nlev && dpa_dec_cmp(s[i], f->lev_budget[i]) > 0) bad = i;
        }
        if (bad < f->nlev) {
            snprintf(out->reason, sizeof out->reason,
                     "rejected: level %zu (|loss| in [%.6g, %.6g)) would exceed its budget %.6g (RF Alg 3)", bad + 1,
                     bad ? f->lev_eps[bad - 1] : 0.0, bad + 1 < f->nlev ? f->lev_eps[bad] : INFINITY,
                     dpa_dec_to_double(f->lev_budget[bad], 0));
        } else {
            memcpy(f->lev_spent, s, f->nlev * sizeof *s);
            f->accepted += 1;
            out->accepted = 1;
            double e2, d2, nn;
            dpa_f_thm9(f->eps, f->delta, f->max_queries, &e2, &d2, &nn);
            snprintf(out->reason, sizeof out->reason,
                     "additive profile filter: not free; the interaction is guaranteed (%.6g, %.6g)-DP (RF Thm 15)", e2, d2);
        }
    }
    free(p);
    free(s);
    return st;
}
