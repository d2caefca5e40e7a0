/* Privacy filters: online budget managers for adaptively chosen queries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A filter holds a budget and decides, for each query before it runs,
 * whether running it keeps the whole interaction within the budget against
 * every adaptive analyst (RF = "Privacy filters and residues", Regehr et al.; docs/filters.md).
 * An accepted query is charged (the state changes); a rejected one is not
 * (RF: a rejection is the analyst passing, U(B, Id) = B).
 *
 * Filters (the "filter" names of the JSON configuration):
 *   "pure"        {"epsilon": E}: accept while sum eps_i <= E.
 *   "basic"       {"epsilon": E, "delta": D}: sum eps_i <= E and
 *                 prod (1 - delta_i) >= 1 - D.
 *   "rdp"         {"rho": R, "order": A} (one order) or {"rho": [R...],
 *                 "order": [A...]} (a vector: accepts while EVERY order's sum
 *                 stays within its budget, Feldman-Zrnic at each order; "some
 *                 order" is not covered by their theorem under adaptivity):
 *                 sum rdp_i(A) <= R.
 *   "zcdp"        {"rho": R}: sum rho_i <= R.
 *   "gdp"         {"mu": M}: naive GDP, sum nu_i^2 <= M^2 with nu_i the
 *                 query's smallest GDP parameter (certified upper bound).
 *   "gdp-residue" {"mu": M}: RF Thm 5, state mu_rem.
 *   "natural"     {"mu": M} or {"delta": D} (budget G_M or the (0, D) pair):
 *                 RF Alg 2 for totally ordered families (GDP / (0, delta)
 *                 queries; RF Cor 5, 6); other queries are refused with the reason.
 *   "natural-approx" {"epsilon": E, "delta": D, "allow_degraded": true,
 *                 "max_queries": K}: the natural (eps, delta) filter; not free
 *                 (RF Cor 1, 3); only with allow_degraded, and it reports the
 *                 degraded guarantee of RF Thm 9 for at most K queries.
 *   "gdp-residue" with "delta": D: the approximate-GDP budget G_M (+) R_{0,D}
 *                 (RF Thm 1; the residue G_m (+) R_{0,d}), queries with a
 *                 delta accepted; state key "delta_residue".
 *   "residue"     {"budget": {"tradeoff": T}}: the general residue filter (RF
 *                 Thm 1, Alg 1), T one of {"mu": M, "delta": D} (then it is
 *                 "gdp-residue"), {"points": [[alpha, beta], ...]} (read as
 *                 the tradeoff_curve leaf reads them) or {"eps_delta":
 *                 [[eps, delta], ...]}; after the first accepted query the
 *                 budget is G_m (+) R_{0,d}.
 *   "additive-profile" {"epsilon": E, "delta": D, "max_queries": K}: RF Alg 3
 *                 with the levels of RF eq (1); not free, it reports RF Thm
 *                 15's guarantee; symmetric queries only.
 * Every configuration also takes "report_delta" (default 1e-6): the delta at
 * which the remaining budget is also shown as (eps, delta).
 * What each filter charges for a query (which event kinds it can account)
 * is in docs/filters.md.
 *
 * Numbers are the decimals the JSON wrote; budgets and spent amounts are
 * exact decimals where the costs are (a budget of 1 takes exactly four
 * queries of 0.25), and every other numerical error is pushed toward
 * rejection and toward less remaining budget (docs/filters.md, "Exact
 * budgets").  All computations are deterministic: replaying the same
 * queries from the same configuration gives bit-identical states (the
 * ledger's `verify` relies on this).
 *
 * Ownership: a dpa_filter owns its state; strings returned by *_json
 * functions are malloc'ed and owned by the caller (free()).
 */
#ifndef DPACCT_FILTER_H
#define DPACCT_FILTER_H

#include <stddef.h>
#include "dpacct/status.h"
#include "dpacct/event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpa_filter dpa_filter;

/* Build a filter with its full budget from a JSON configuration
 * ({"filter": "gdp-residue", "mu": 1}, see above).  Errors: DPA_EINVAL with
 * the JSON path and the violated domain; DPA_ENOMEM. */
dpa_filter *dpa_filter_new_json(const char *config, dpa_error *err);
void dpa_filter_free(dpa_filter *f);
dpa_filter *dpa_filter_copy(const dpa_filter *f, dpa_error *err);

/* The canonical configuration (round-trips through dpa_filter_new_json). */
char *dpa_filter_config_json(const dpa_filter *f);
/* The filter's name ("gdp-residue", ...). */
const char *dpa_filter_name(const dpa_filter *f);

/* The state (what has been spent) as a JSON text that restores it exactly
 * (decimal accumulators as strings, doubles printed with 17 significant
 * digits, no -0; docs/filters.md "Determinism and state"). */
char *dpa_filter_state_json(const dpa_filter *f);
/* Restore a state produced by dpa_filter_state_json for a filter of the
 * same configuration.  DPA_EINVAL on malformed or mismatched state (the
 * filter is then unchanged). */
dpa_status dpa_filter_set_state_json(dpa_filter *f, const char *state, dpa_error *err);

typedef struct dpa_filter_decision {
    int accepted;        /* 1 accepted (state charged), 0 rejected (state unchanged) */
    char reason[256];    /* why rejected, or a remark on the charge ("" if none) */
} dpa_filter_decision;

/* Decide on one query (any spec the accountants support; its neighbouring
 * relation is the spec's).  On DPA_OK, *out says accepted or rejected and the
 * state is charged only if accepted.  Errors (the state unchanged, *out
 * undefined): DPA_EINVAL for NULL arguments, DPA_EUNSUPPORTED for a query the
 * filter cannot account (e.g. an approx query under "gdp": no finite mu; a
 * Gaussian query under "natural" with a (0, delta) budget), with the reason;
 * DPA_ENOMEM. */
dpa_status dpa_filter_request(dpa_filter *f, const dpa_spec *query, dpa_filter_decision *out,
                              dpa_error *err);

/* The remaining budget as JSON in the filter's own terms, e.g.
 * {"mu": 0.85999}, {"epsilon": 0.3, "delta": 1e-6}, {"rho": [...], "order": [...]},
 * plus, where meaningful, "as_epsilon_delta": {"epsilon": E, "delta": D}
 * (the remaining budget as an (eps, delta) guarantee at a stated delta), and
 * for natural-approx "degraded_guarantee": {...} (RF Thm 9). */
char *dpa_filter_remaining_json(const dpa_filter *f);

/* 1 if nothing more can be accepted except queries that are free (e.g.
 * the remaining budget is exactly 0). */
int dpa_filter_exhausted(const dpa_filter *f);

#ifdef __cplusplus
}
#endif
#endif
