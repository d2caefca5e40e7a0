/* The rdp method behind the accountant interface (src/model/method.h):
 * Renyi DP of the composition over the default orders (src/rdp/rdp_acct.c, rdp_query.c),
 * converted to (eps, delta) by dpa_options.rdp_conversion.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An upper bound only: Renyi divergences bound the privacy profile from
 * above, never from below, so `lower` is the trivial bound (0 for eps,
 * max(0, 1 - e^eps) for delta) and accuracy_met is 0 unless the two meet.
 * The upper bound is certified (every divergence is a certified upper
 * bound, the conversions are rounded up: docs/rdp.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "model/method.h"
#include "rdp/rdp.h"
#include "num/num.h"

typedef struct rdp_state {
    dpa_rdp *acct;
    dpa_rdp_conversion conv;
    double accuracy;
} rdp_state;

static dpa_status rdp_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    (void)opt;
    if (L->ra_path[0]) return dpa_method_refuse_ra(L, "rdp", err);
    /* what the RDP code cannot bound (e.g. a subsampled discrete Gaussian)
     * shows when its leaves are added: create() reports it */
    return DPA_OK;
}

static void rdp_destroy(void *state)
{
    rdp_state *s = state;
    if (!s) return;
    dpa_rdp_free(s->acct);
    free(s);
}

static dpa_status rdp_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    rdp_state *s = calloc(1, sizeof *s);
    if (!s) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    s->accuracy = opt->accuracy;
    s->conv = opt->rdp_conversion == DPA_CONV_CLASSICAL  ? DPA_RDP_CLASSICAL
              : opt->rdp_conversion == DPA_CONV_IMPROVED ? DPA_RDP_IMPROVED
                                                         : DPA_RDP_OPTIMAL;
    dpa_status st;
    if (!(s->acct = dpa_rdp_new(NULL, 0, err))) {
        free(s);
        return err ? err->status : DPA_ENOMEM;
    }
    if ((st = dpa_rdp_add_leafset(s->acct, L, err))) {
        rdp_destroy(s);
        return st;
    }
    *state = s;
    return DPA_OK;
}

static void fill(const rdp_state *s, const dpa_rdp_result *r, dpa_result *out)
{
    out->upper = r->value;
    out->upper_remove = r->value_dir[0];
    out->upper_add = r->value_dir[1];
    out->binding = r->value_dir[0] == r->value_dir[1] ? DPA_DIR_BOTH : r->binding == 1 ? DPA_DIR_ADD : DPA_DIR_REMOVE;
    out->order = r->alpha_dir[r->binding == 1 ? 1 : 0];
    (void)s;
    snprintf(out->note, sizeof out->note, "upper bound only: Renyi DP gives no lower bound (%s conversion)",
             dpa_rdp_conversion_name(s->conv));
}

static dpa_status rdp_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    rdp_state *s = state;
    dpa_rdp_result r;
    dpa_status st = dpa_rdp_epsilon(s->acct, delta, s->conv, &r, err);
    if (st) return st;
    fill(s, &r, out);
    out->lower = 0;
    out->accuracy_met = !(out->upper > s->accuracy);
    return DPA_OK;
}

static dpa_status rdp_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    (void)refine;
    rdp_state *s = state;
    dpa_rdp_result r;
    dpa_status st = dpa_rdp_delta(s->acct, eps, s->conv, &r, err);
    if (st) return st;
    fill(s, &r, out);
    /* delta >= 1 - e^eps always; -expm1 is rounded to nearest: round down */
    out->lower = eps < 0 ? -expm1(eps) * (1 - 2 * DPA_UNIT_ROUNDOFF) : 0.0;
    if (out->lower > out->upper) out->lower = out->upper;
    out->accuracy_met = !(out->upper - out->lower > s->accuracy * out->upper + 1e-14);
    return DPA_OK;
}

const dpa_method_ops dpa_method_rdp_ops = {
    DPA_METHOD_RDP, rdp_supports, rdp_create, rdp_destroy, rdp_epsilon, rdp_delta, NULL,
};
