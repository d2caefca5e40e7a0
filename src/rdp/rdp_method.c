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
#include <string.h>
#include "model/method.h"
#include "rdp/rdp.h"
#include "num/num.h"

typedef struct rdp_state {
    dpa_rdp *acct;
    dpa_rdp_conversion conv;
    double accuracy;
    /* log P, P = prod (1 - delta_i)^{k_i} over the (eps_i, delta_i) steps
     * (0 < delta_i < 1, unsampled), rounded down; 0 if none: those steps
     * enter the Renyi curve as RR_{eps_i} and their delta apart */
    double log_keep;
    /* 1 if a leaf not kept apart has mass at loss +inf (e.g. a truncated
     * discrete_gaussian, docs/mechanisms.md §8): every order's bound is then
     * +inf, which the note says */
    int inf_leaf;
} rdp_state;

/* An (eps, delta)-DP step whose delta is kept apart: its pair RR_{eps,delta}
 * is the labelled mixture of RR_eps (probability 1 - delta) and a pair that
 * reveals the record (probability delta, loss +inf).  The composition is the
 * mixture over the labels, and its delta(eps) is at most
 *   (1 - P) + P delta_rest(eps),
 * delta_rest that of the composition with every such step replaced by
 * RR_eps (the hockey stick of a labelled mixture is the weighted sum, and
 * any label that reveals counts as delta 1).  dp_accounting's RDP
 * accountant does the same (its "extra delta"); docs/rdp.md §4.3. */
static int delta_apart(const dpa_leaf *l)
{
    return l->pair && !l->zcdp && !l->rdp_only && !isnan(l->rr_eps) && isnan(l->rate) && l->rr_delta > 0 &&
           l->rr_delta < 1;
}

/* A truncated discrete Gaussian step (unsampled, 2T >= s, sigma not
 * negligible) likewise: with A' and B' the two laws conditioned on their
 * common support [s - T, T] and m = A(o > T) = B(o < s - T) (the pair is
 * symmetric: o -> s - o), A = (1 - m) A' + m A_inf and B = (1 - m) B' + m B_inf,
 * A_inf and B_inf disjoint: the labelled mixture of (A', B') (probability
 * 1 - m) and a revealing pair (m), whose label forgotten is (A, B).  So m is
 * kept apart as the delta of an approx step, and (A', B') enters the curve
 * (dpa_rdp_add_dg_conditioned).  Returns m rounded up (the stored log mass
 * within 4u (|l| + 2), docs/rdp.md §2), or 0 if the step is not one. */
static double dg_apart(const dpa_leaf *l)
{
    if (!l->pair || l->kind != DPA_EV_DISCRETE_GAUSSIAN || !isnan(l->rate) || !(l->rpar[2] >= 0) ||
        !(2 * l->rpar[2] >= l->par[1]) || !(l->par[0] >= 1e-6))
        return 0;
    double lm = dpa_pair_log_inf(l->pair);
    if (!(lm > -INFINITY && lm < 0)) return 0;
    double m = exp(lm + 4 * DPA_UNIT_ROUNDOFF * (fabs(lm) + 2)) * (1 + 2 * DPA_UNIT_ROUNDOFF);
    return m < 1 ? m : 0;
}

/* Add L to s->acct with the delta_apart steps as RR_eps (eps 0: dropped). */
static dpa_status add_leaves(rdp_state *s, const dpa_leafset *L, dpa_error *err)
{
    size_t napart = 0;
    for (size_t i = 0; i < L->n; i++) {
        int ap = delta_apart(&L->v[i]) || dg_apart(&L->v[i]) > 0;
        napart += ap;
        if (!ap && L->v[i].pair && dpa_pair_log_inf(L->v[i].pair) > -INFINITY) s->inf_leaf = 1;
    }
    if (!napart) return dpa_rdp_add_leafset(s->acct, L, err);
    dpa_leafset c = *L;
    dpa_leaf *v = malloc(L->n * sizeof *v);
    dpa_pair **mine = malloc(napart * sizeof *mine); /* the RR_eps pairs made here */
    if (!v || !mine) {
        free(v), free(mine);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    double lk = 0, alk = 0;
    size_t n = 0, nmine = 0;
    dpa_status st = DPA_OK;
    for (size_t i = 0; i < L->n && !st; i++) {
        const dpa_leaf *l = &L->v[i];
        double mdg = dg_apart(l);
        if (mdg > 0) {
            double t = l->count * log1p(-mdg);
            lk += t;
            alk += fabs(t);
            st = dpa_rdp_add_dg_conditioned(s->acct, l->par[0], l->par[1], l->rpar[2], l->count, err);
            continue;
        }
        if (!delta_apart(l)) {
            v[n++] = *l;
            continue;
        }
        double t = l->count * log1p(-l->rr_delta);
        lk += t;
        alk += fabs(t);
        if (l->rr_eps == 0) continue; /* RR_0: identical laws */
        v[n] = *l;
        v[n].rr_delta = 0;
        if (!(v[n].pair = dpa_pair_rr(l->rr_eps, 0, err))) st = err ? err->status : DPA_ENOMEM;
        else mine[nmine++] = v[n++].pair;
    }
    if (!st) {
        c.v = v;
        c.n = n;
        st = dpa_rdp_add_leafset(s->acct, &c, err); /* (it copies the pairs) */
    }
    for (size_t i = 0; i < nmine; i++) dpa_pair_free(mine[i]);
    free(v), free(mine);
    /* each log1p and product: a few u relative; the sum (n + 2) u of sum |.| */
    s->log_keep = lk - 4 * ((double)L->n + 4) * DPA_UNIT_ROUNDOFF * alk;
    return st;
}

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
    if ((st = add_leaves(s, L, err))) {
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
    snprintf(out->note, sizeof out->note, "upper bound only: Renyi DP gives no lower bound (%s conversion)%s",
             dpa_rdp_conversion_name(s->conv),
             s->inf_leaf ? "; a leaf has mass at loss +inf: its Renyi DP is +inf above order 1" : "");
}

/* The note when some delta is kept apart. */
static void note_apart(const rdp_state *s, dpa_result *out)
{
    if (s->log_keep < 0) {
        size_t n = strlen(out->note);
        snprintf(out->note + n, sizeof out->note - n, "; (eps, delta) steps: extra delta %.3g kept apart",
                 -expm1(s->log_keep));
    }
}

static dpa_status rdp_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    rdp_state *s = state;
    dpa_rdp_result r;
    if (s->log_keep < 0) {
        /* delta_rest <= 1 - (1 - delta) / P, rounded down (a smaller
         * target gives a larger eps) */
        double d = -expm1(log1p(-delta) - s->log_keep);
        d -= 8 * DPA_UNIT_ROUNDOFF * fabs(d);
        if (!(d > 0)) { /* delta does not exceed the steps' own delta */
            out->upper = out->upper_remove = out->upper_add = INFINITY;
            out->lower = 0;
            out->accuracy_met = 0;
            snprintf(out->note, sizeof out->note, "upper bound only: delta is at most the (eps, delta) steps' extra delta");
            note_apart(s, out);
            return DPA_OK;
        }
        delta = d;
    }
    dpa_status st = dpa_rdp_epsilon(s->acct, delta, s->conv, &r, err);
    if (st) return st;
    fill(s, &r, out);
    note_apart(s, out);
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
    if (s->log_keep < 0) { /* (1 - P) + P delta_rest = 1 - P (1 - delta_rest), rounded up */
        for (int k = 0; k < 3; k++) {
            double *d = k == 0 ? &r.value : &r.value_dir[k - 1];
            double v = -expm1(s->log_keep + log1p(-fmin(*d, 1.0)));
            *d = fmin(1.0, v + 8 * DPA_UNIT_ROUNDOFF * v);
        }
    }
    fill(s, &r, out);
    note_apart(s, out);
    /* delta >= 1 - e^eps always; -expm1 is rounded to nearest: round down */
    out->lower = eps < 0 ? -expm1(eps) * (1 - 2 * DPA_UNIT_ROUNDOFF) : 0.0;
    if (out->lower > out->upper) out->lower = out->upper;
    out->accuracy_met = !(out->upper - out->lower > s->accuracy * out->upper + 1e-14);
    return DPA_OK;
}

const dpa_method_ops dpa_method_rdp_ops = {
    DPA_METHOD_RDP, rdp_supports, rdp_create, rdp_destroy, rdp_epsilon, rdp_delta, NULL,
};
