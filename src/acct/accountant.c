/* Accountants: validate, pick a method, dispatch (src/model/method.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The accountant flattens the spec into distinct leaves once, picks the
 * method (the one asked for, or for auto the tightest that applies: exact,
 * else pld, else rdp), builds its state and forwards the queries after
 * checking their arguments.  Everything a method computes lives in its own
 * folder (src/exact, src/pld, src/phi, src/rdp, src/clt); the leaves and
 * the method interface are the leaf model below them (src/model).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "acct/accountant_internal.h"
#include "model/leaves.h"
#include "model/method.h"
#include "exact/exact.h"
#include "pld/pld_acct.h"
#include "phi/phi.h"
#include "rdp/rdp.h"
#include "clt/clt.h"

struct dpa_accountant {
    dpa_options opt;
    dpa_leafset leaves;         /* lent to the method's state */
    const dpa_method_ops *ops;
    void *state;
    /* auto only: the rdp method, built on the first eps query whose upper
     * bound the chosen method leaves at +inf (see fallback_rdp) */
    int fb_tried;
    void *fb_state;
};

const dpa_leafset *dpa_accountant_leafset(const dpa_accountant *a)
{
    return &a->leaves;
}

const dpa_method_ops *dpa_accountant_ops(const dpa_accountant *a)
{
    return a->ops;
}

void *dpa_accountant_state(const dpa_accountant *a)
{
    return a->state;
}

/* Every method's operations, by dpa_method value (AUTO: none). */
static const dpa_method_ops *ops_of(dpa_method m)
{
    switch (m) {
    case DPA_METHOD_EXACT: return &dpa_method_exact_ops;
    case DPA_METHOD_PLD: return &dpa_method_pld_ops;
    case DPA_METHOD_PHI: return &dpa_method_phi_ops;
    case DPA_METHOD_RDP: return &dpa_method_rdp_ops;
    case DPA_METHOD_GDP: return &dpa_method_gdp_ops;
    case DPA_METHOD_CLT: return &dpa_method_clt_ops;
    case DPA_METHOD_AUTO: break;
    }
    return NULL;
}

/* auto: the tightest applicable method first.  phi is never picked (its
 * brackets rest on error estimates, and pld takes everything phi takes). */
static const dpa_method auto_order[] = {DPA_METHOD_EXACT, DPA_METHOD_PLD, DPA_METHOD_RDP};

const char *dpa_method_name(dpa_method m)
{
    switch (m) {
    case DPA_METHOD_AUTO: return "auto";
    case DPA_METHOD_PLD: return "pld";
    case DPA_METHOD_EXACT: return "exact";
    case DPA_METHOD_PHI: return "phi";
    case DPA_METHOD_RDP: return "rdp";
    case DPA_METHOD_GDP: return "gdp";
    case DPA_METHOD_CLT: return "clt";
    }
    return NULL;
}

dpa_status dpa_method_parse(const char *name, dpa_method *out, dpa_error *err)
{
    if (!out) return dpa_error_set(err, DPA_EINVAL, "method parse: NULL output");
    for (int m = 0; name && m < DPA_METHOD_COUNT; m++)
        if (strcmp(name, dpa_method_name((dpa_method)m)) == 0) {
            *out = (dpa_method)m;
            return DPA_OK;
        }
    return dpa_error_set(err, DPA_EINVAL, "unknown method \"%s\" (expected auto, exact, pld, phi, rdp, gdp or clt)",
                         name ? name : "(null)");
}

const char *dpa_rdp_conv_name(dpa_rdp_conv c)
{
    switch (c) {
    case DPA_CONV_OPTIMAL: return "optimal";
    case DPA_CONV_IMPROVED: return "improved";
    case DPA_CONV_CLASSICAL: return "classical";
    }
    return NULL;
}

dpa_status dpa_rdp_conv_parse(const char *name, dpa_rdp_conv *out, dpa_error *err)
{
    if (!out) return dpa_error_set(err, DPA_EINVAL, "conversion parse: NULL output");
    for (int c = 0; name && c < 3; c++)
        if (strcmp(name, dpa_rdp_conv_name((dpa_rdp_conv)c)) == 0) {
            *out = (dpa_rdp_conv)c;
            return DPA_OK;
        }
    return dpa_error_set(err, DPA_EINVAL, "unknown RDP conversion \"%s\" (expected optimal, improved or classical)",
                         name ? name : "(null)");
}

const char *dpa_bound_source_name(dpa_bound_source s)
{
    switch (s) {
    case DPA_SOURCE_METHOD: return "method";
    case DPA_SOURCE_MAX_LOSS: return "largest_finite_loss";
    case DPA_SOURCE_DOMINATION: return "dp_domination";
    case DPA_SOURCE_CHERNOFF: return "chernoff";
    case DPA_SOURCE_RDP: return "rdp";
    }
    return "?";
}

const char *dpa_direction_name(dpa_direction d)
{
    switch (d) {
    case DPA_DIR_BOTH: return "both";
    case DPA_DIR_REMOVE: return "remove";
    case DPA_DIR_ADD: return "add";
    }
    return "?";
}

void dpa_options_init(dpa_options *opt)
{
    if (!opt) return;
    opt->method = DPA_METHOD_AUTO;
    opt->accuracy = 1e-4;
    opt->delta_abs = 1e-14;
    opt->grid_step = 0;
    opt->max_grid = (size_t)1 << 22;
    opt->threads = 0;
    opt->rdp_conversion = DPA_CONV_OPTIMAL;
    opt->fft_cache_dir = NULL;
}

static dpa_status check_options(const dpa_options *o, dpa_error *err)
{
    if (!dpa_method_name(o->method)) return dpa_error_set(err, DPA_EINVAL, "options: unknown method %d", (int)o->method);
    if (!(o->accuracy >= 1e-8 && o->accuracy <= 1))
        return dpa_error_set(err, DPA_EINVAL, "options: accuracy must be in [1e-8, 1], got %g", o->accuracy);
    if (!(o->delta_abs >= 1e-14 && o->delta_abs <= 1e-2))
        return dpa_error_set(err, DPA_EINVAL, "options: delta_abs must be in [1e-14, 1e-2], got %g", o->delta_abs);
    if (!(o->grid_step == 0 || (o->grid_step >= DPA_PLD_STEP_MIN && o->grid_step <= 1)))
        return dpa_error_set(err, DPA_EINVAL, "options: grid step must be 0 (automatic) or in [1e-7, 1], got %g", o->grid_step);
    if (!(o->max_grid >= ((size_t)1 << 10) && o->max_grid <= ((size_t)1 << 26)))
        return dpa_error_set(err, DPA_EINVAL, "options: max grid must be in [1024, 67108864], got %zu", o->max_grid);
    if (!(o->threads >= 0 && o->threads <= 64))
        return dpa_error_set(err, DPA_EINVAL, "options: threads must be in [0, 64], got %d", o->threads);
    if (!dpa_rdp_conv_name(o->rdp_conversion))
        return dpa_error_set(err, DPA_EINVAL, "options: unknown RDP conversion %d", (int)o->rdp_conversion);
    return DPA_OK;
}

void dpa_accountant_free(dpa_accountant *a)
{
    if (!a) return;
    if (a->ops && a->state) a->ops->destroy(a->state);
    if (a->fb_state) dpa_method_rdp_ops.destroy(a->fb_state);
    dpa_leaves_free(&a->leaves);
    free(a);
}

dpa_method dpa_accountant_method(const dpa_accountant *a)
{
    return a->ops->id;
}

dpa_accountant *dpa_accountant_new(const dpa_spec *spec, const dpa_options *opt, dpa_error *err)
{
    if (!spec) {
        dpa_error_set(err, DPA_EINVAL, "accountant: spec is NULL");
        return NULL;
    }
    dpa_accountant *a = calloc(1, sizeof *a);
    if (!a) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    if (opt) a->opt = *opt;
    else dpa_options_init(&a->opt);
    if (check_options(&a->opt, err) || dpa_leaves_build(spec, &a->leaves, err)) {
        dpa_accountant_free(a);
        return NULL;
    }
    if (a->opt.method == DPA_METHOD_AUTO) {
        /* the first method that supports the leaves; the last refusal is
         * reported if none does (every method refuses for a reason) */
        for (size_t i = 0; i < sizeof auto_order / sizeof *auto_order && !a->ops; i++) {
            const dpa_method_ops *o = ops_of(auto_order[i]);
            if (o->supports(&a->leaves, &a->opt, i + 1 < sizeof auto_order / sizeof *auto_order ? NULL : err) == DPA_OK)
                a->ops = o;
        }
        if (!a->ops) {
            dpa_accountant_free(a);
            return NULL;
        }
    } else {
        a->ops = ops_of(a->opt.method);
    }
    dpa_status st = a->ops->create(&a->leaves, &a->opt, &a->state, err);
    if (st) {
        a->state = NULL;
        dpa_accountant_free(a);
        return NULL;
    }
    return a;
}

/* A composition with a non_private step says so plainly in the note (its
 * eps is +inf at every delta below the step's probability of running). */
static dpa_status nonprivate_note(const dpa_accountant *a, dpa_status st, dpa_result *out)
{
    const char *p = a->leaves.nonprivate_path;
    /* (it replaces a method's own remark: this one decides the result) */
    if (st == DPA_OK && p[0])
        snprintf(out->note, sizeof out->note,
                 "non-private step at %.50s: its loss is +inf whenever it runs, so no finite epsilon "
                 "exists for a smaller delta",
                 p);
    return st;
}

/* A composition with a Poisson event of rate 0 says so in the note, after
 * any other remark (that event is the no-op and added nothing). */
static dpa_status noop_note(const dpa_accountant *a, dpa_status st, dpa_result *out)
{
    const char *p = a->leaves.noop_path;
    size_t n = strlen(out->note);
    if (st == DPA_OK && p[0] && n + 2 < sizeof out->note) /* after any other remark, cut to fit */
        snprintf(out->note + n, sizeof out->note - n, "%ssampling rate 0 at %.50s: no record is ever sampled, "
                 "so that event is the no-op and contributes nothing", n ? "; " : "", p);
    return st;
}

/* The rdp method's note for a composition of identities (no leaves): the
 * Renyi divergence is 0 at every order, so the bound is exact and no order
 * is singled out (order NAN). */
static void identities_rdp_note(dpa_result *out)
{
    if (out->method == DPA_METHOD_RDP)
        snprintf(out->note, sizeof out->note, "identical distributions: the Renyi divergence is 0 at every order, "
                 "the bound is exact");
}

/* auto's fallback for eps queries: where the chosen method (exact or pld)
 * certifies no finite upper bound although the privacy loss is not +inf
 * with probability >= delta (lower < +inf), the rdp method's upper bound
 * (a certified bound for every leaf set pld takes, docs/rdp.md) replaces
 * it.  Typical: delta below the PLD method's floating-point floor (a
 * Poisson-subsampled Gaussian at delta = 1e-16; pld's round-off allowance
 * is ~1e-13).  The lower bound stays the method's; upper_source says "rdp"
 * and the note which method answered.  Not used when a method was asked
 * for by name (its own answer, +inf included, is what was asked). */
static dpa_status fallback_rdp(dpa_accountant *a, double delta, dpa_result *out, dpa_error *err)
{
    if (a->opt.method != DPA_METHOD_AUTO || a->ops->id == DPA_METHOD_RDP) return DPA_OK;
    if (!isinf(out->upper) || isinf(out->lower) || a->leaves.nonprivate_path[0]) return DPA_OK;
    if (!a->fb_tried) {
        a->fb_tried = 1;
        if (dpa_method_rdp_ops.supports(&a->leaves, &a->opt, NULL) != DPA_OK) return DPA_OK;
        dpa_status st = dpa_method_rdp_ops.create(&a->leaves, &a->opt, &a->fb_state, err);
        if (st == DPA_ENOMEM) return st;
        if (st) {
            a->fb_state = NULL; /* rdp cannot take it after all: keep the method's answer */
            return DPA_OK;
        }
    }
    if (!a->fb_state) return DPA_OK;
    dpa_result r;
    dpa_method_result_init(&r, DPA_METHOD_RDP);
    dpa_status st = dpa_method_rdp_ops.epsilon(a->fb_state, delta, &r, err);
    if (st) return st;
    if (!(r.upper < out->upper)) return DPA_OK;
    /* per direction the smaller of the two certified bounds */
    double ur = fmin(out->upper_remove, r.upper_remove), ua = fmin(out->upper_add, r.upper_add);
    int both = out->binding == DPA_DIR_BOTH && r.binding == DPA_DIR_BOTH;
    out->upper_remove = ur;
    out->upper_add = ua;
    out->upper = fmax(ur, ua);
    out->binding = both ? DPA_DIR_BOTH : ur >= ua ? DPA_DIR_REMOVE : DPA_DIR_ADD;
    out->order = r.order;
    out->upper_source = DPA_SOURCE_RDP;
    out->accuracy_met = 0;
    if (out->lower > out->upper) out->lower = out->upper; /* cannot happen (both certified) */
    snprintf(out->note, sizeof out->note,
             "upper bound from method rdp (Renyi order %.6g): %s certified no finite bound at this delta (%s); "
             "the lower bound is %s's",
             r.order, dpa_method_name(a->ops->id),
             a->ops->id == DPA_METHOD_PLD ? "below its floating-point floor" : "within its round-off of the +inf mass",
             dpa_method_name(a->ops->id));
    return DPA_OK;
}

dpa_status dpa_accountant_epsilon(dpa_accountant *a, double delta, dpa_result *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "epsilon: NULL argument");
    if (!(delta >= 0 && delta < 1)) return dpa_error_set(err, DPA_EINVAL, "delta must be in [0, 1), got %g", delta);
    dpa_method_result_init(out, a->ops->id);
    if (a->leaves.n == 0) { /* nothing but identities (no_op, eps 0): eps = 0 exactly */
        out->upper = out->lower = out->upper_remove = out->upper_add = 0;
        out->certified = out->method != DPA_METHOD_PHI && out->method != DPA_METHOD_GDP; /* as the method labels */
        if (delta == 0) out->certified = 1;
        identities_rdp_note(out);
        return noop_note(a, DPA_OK, out);
    }
    if (delta == 0) /* pure DP: from the leaves' loss ranges, whatever the method */
        return noop_note(a, nonprivate_note(a, dpa_accountant_epsilon_pure(&a->leaves, a->ops->id, out, err), out), out);
    dpa_status st = a->ops->epsilon(a->state, delta, out, err);
    if (st == DPA_OK) st = fallback_rdp(a, delta, out, err);
    return noop_note(a, nonprivate_note(a, st, out), out);
}

dpa_status dpa_accountant_delta(dpa_accountant *a, double eps, dpa_result *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "delta: NULL argument");
    if (!isfinite(eps)) return dpa_error_set(err, DPA_EINVAL, "epsilon must be finite, got %g", eps);
    dpa_method_result_init(out, a->ops->id);
    if (a->leaves.n == 0) { /* identical distributions: delta(eps) = (1 - e^eps)_+ */
        out->upper = out->lower = out->upper_remove = out->upper_add = eps < 0 ? -expm1(eps) : 0;
        out->certified = out->method != DPA_METHOD_PHI && out->method != DPA_METHOD_GDP;
        identities_rdp_note(out);
        return noop_note(a, DPA_OK, out);
    }
    return noop_note(a, nonprivate_note(a, a->ops->delta(a->state, eps, 1, out, err), out), out);
}

dpa_status dpa_accountant_profile(dpa_accountant *a, const double *eps, size_t n,
                                  double *upper, double *lower, dpa_error *err)
{
    if (!a || (n && (!eps || !upper || !lower))) return dpa_error_set(err, DPA_EINVAL, "profile: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(eps[i])) return dpa_error_set(err, DPA_EINVAL, "profile: epsilon[%zu] must be finite, got %g", i, eps[i]);
    if (a->leaves.n == 0) { /* identical distributions */
        for (size_t i = 0; i < n; i++) upper[i] = lower[i] = eps[i] < 0 ? -expm1(eps[i]) : 0;
        return DPA_OK;
    }
    if (a->ops->profile) return a->ops->profile(a->state, eps, n, upper, lower, err);
    dpa_result r;
    for (size_t i = 0; i < n; i++) {
        dpa_method_result_init(&r, a->ops->id);
        dpa_status st = a->ops->delta(a->state, eps[i], 1, &r, err);
        if (st) return st;
        upper[i] = r.upper;
        lower[i] = r.lower;
    }
    return DPA_OK;
}

dpa_status dpa_accountant_clt_info(const dpa_accountant *a, dpa_clt_info *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "clt info: NULL argument");
    if (a->ops->id != DPA_METHOD_GDP && a->ops->id != DPA_METHOD_CLT)
        return dpa_error_set(err, DPA_EUNSUPPORTED, "clt info: the accountant's method is %s; only gdp and clt have it",
                             dpa_method_name(a->ops->id));
    if (a->leaves.n == 0) { /* no state: identities only, every functional 0 */
        memset(out, 0, sizeof *out);
        out->limit_mu = NAN;
        out->symmetric = out->clt_regime = 1;
        return DPA_OK;
    }
    dpa_clt_state_info(a->state, out);
    return DPA_OK;
}
