/* The phi (characteristic-function) method behind the accountant interface
 * (src/model/method.h): CF Algorithm 1 via src/phi/phi_acct.c.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Its brackets rest on quadrature error estimates (node doubling, docs/phi.md
 * §6), so every result has certified = 0: a tight cross-check of the PLD
 * method, not a proof.  Compositions of atoms only (randomized response,
 * pure, approx) are exact lattice sums there, but still reported through
 * the same flag for one rule per method. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/method.h"
#include "phi/phi.h"

static dpa_status phi_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    (void)opt;
    if (L->zcdp_path[0]) return dpa_method_refuse_zcdp(L, "phi", err);
    if (L->ra_path[0]) return dpa_method_refuse_ra(L, "phi", err);
    for (size_t i = 0; i < L->n; i++)
        if (!L->v[i].pair)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "method phi cannot take a subsampled composition (one batch shared by several "
                                 "mechanisms): its characteristic function has no closed form or cached "
                                 "quadrature here; use method pld (or auto), or rdp");
    return DPA_OK;
}

typedef struct phi_state {
    dpa_phi *ph;
    double accuracy; /* dpa_options.accuracy: sets accuracy_met only (phi
                      * bisects eps to 1e-10 relative; its bracket width is
                      * the quadrature's error estimate) */
    double delta_abs; /* dpa_options.delta_abs (the same, for delta queries) */
} phi_state;

static void phi_destroy(void *state)
{
    phi_state *s = state;
    if (!s) return;
    dpa_phi_free(s->ph);
    free(s);
}

static dpa_status phi_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    dpa_status st = phi_supports(L, opt, err);
    if (st) return st;
    phi_state *s = calloc(1, sizeof *s);
    if (!s) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    s->accuracy = opt->accuracy;
    s->delta_abs = opt->delta_abs;
    if (!(s->ph = dpa_phi_new(NULL, err))) {
        free(s);
        return err ? err->status : DPA_ENOMEM;
    }
    if ((st = dpa_phi_add_leafset(s->ph, L, err)) || (st = dpa_phi_prepare(s->ph, err))) {
        phi_destroy(s);
        return st;
    }
    *state = s;
    return DPA_OK;
}

/* Copy a phi result into the accountant's; tol: the accuracy target. */
static void fill(const dpa_phi_result *r, double tol, dpa_result *out)
{
    out->upper = r->upper;
    out->lower = r->lower + 0.0; /* -0 -> +0 */
    out->upper_remove = r->upper_remove;
    out->upper_add = r->upper_add;
    out->binding = r->binding == 1 ? DPA_DIR_REMOVE : r->binding == 2 ? DPA_DIR_ADD : DPA_DIR_BOTH;
    out->certified = 0;
    out->accuracy_met = r->certified && !isinf(out->upper) && !(out->upper - out->lower > tol);
    if (isinf(out->upper) && isinf(out->lower)) out->accuracy_met = 1; /* truly infinite */
    snprintf(out->note, sizeof out->note, "%s",
             r->note[0] ? r->note : "bracket from quadrature error estimates (node doubling), not a proof");
}

static dpa_status phi_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    phi_state *s = state;
    dpa_phi_result r;
    dpa_status st = dpa_phi_epsilon(s->ph, delta, &r, err);
    if (st) return st;
    fill(&r, s->accuracy * fmax(1.0, r.upper), out);
    return DPA_OK;
}

static dpa_status phi_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    (void)refine;
    phi_state *s = state;
    dpa_phi_result r;
    dpa_status st = dpa_phi_delta(s->ph, eps, &r, err);
    if (st) return st;
    fill(&r, s->accuracy * r.upper + s->delta_abs, out);
    return DPA_OK;
}

const dpa_method_ops dpa_method_phi_ops = {
    DPA_METHOD_PHI, phi_supports, phi_create, phi_destroy, phi_epsilon, phi_delta, NULL,
};
