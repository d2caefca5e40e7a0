/* The PLD method's composed grid measures handed out as they are: the
 * upper (pessimistic) and lower (optimistic) measure of one direction, with
 * their grids and error budgets (dpa_accountant_pld, docs/guarantees.md
 * §3 "The exported PLD").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Nothing is copied: the measures are the accountant's own compositions
 * (pld_acct.h comp[d][0], comp[d][1]), lent until its next query or its
 * free.  The bounds a caller computes from them are the query's bounds
 * (src/pld/method.c, pld_delta_dir):
 *   delta_upper(eps) = (sum_i u_i (1 - e^{eps - z_i})_+ + u_inf) (1 + 2 n u + rel_err)
 *                      + tail_above + roundoff
 *   delta_lower(eps) = (sum_i l_i (1 - e^{eps - z_i})_+ + l_inf) (1 - 2 n u - rel_err)
 *                      - tail_outside - roundoff
 * z_i = (offset + i) step, u the unit round-off. */
#include <math.h>
#include <string.h>
#include "pld/pld_acct.h"

/* Tail budget (each side) of an export made before any query: the delta
 * queries' own (src/pld/method.c DEFAULT_TAIL), so the measures serve every
 * delta anyone claims. */
#define EXPORT_TAIL 1e-16
/* The delta at which an export made before any query sizes its first grid
 * (dpa_pld_initial_step from the rough eps estimate there): the middle of
 * the deltas people claim. */
#define EXPORT_SIZING_DELTA 1e-6

static void measure_of(const dpa_composed *c, double cstep, dpa_pld_measure *m)
{
    m->step = cstep > 0 ? c->step : 0;
    m->offset = c->lo;
    m->n = c->n;
    m->mass = c->mass;
    m->inf = c->inf;
    m->tail_above = c->tail_above;
    m->tail_outside = c->tail_outside;
    m->roundoff = c->roundoff;
    m->rel_err = c->rel_err;
}

dpa_status dpa_pld_export_dir(void *state, dpa_direction dir, dpa_pld_export *out, dpa_error *err)
{
    dpa_pld_acct *a = state;
    int d = (dir == DPA_DIR_ADD && a->ndir == 2) ? 1 : 0;
    double step = a->built ? a->step
                           : dpa_pld_initial_step(a, a->opt.accuracy, dpa_pld_eps_estimate(a, EXPORT_SIZING_DELTA));
    double tau = a->built ? a->tau : EXPORT_TAIL, used;
    /* both measures of the direction, composed on the accurate path at the
     * finest step asked so far (no rough upper measure: its round-off
     * allowance is larger) */
    dpa_status st = dpa_pld_ensure(a, 3u << (2 * d), 0u, step, tau, &used, err);
    if (st) return st;
    if (!a->built || !a->cstep[d][0] || !a->cstep[d][1])
        return dpa_error_set(err, DPA_ENUMERIC, "pld export: the compositions of direction %s were not built",
                             d ? "add" : "remove");
    memset(out, 0, sizeof *out);
    out->direction = a->ndir == 1 ? DPA_DIR_BOTH : d ? DPA_DIR_ADD : DPA_DIR_REMOVE;
    measure_of(&a->comp[d][0], a->cstep[d][0], &out->upper);
    measure_of(&a->comp[d][1], a->cstep[d][1], &out->lower);
    out->lower_certified = !a->envelope_lower;
    return DPA_OK;
}
