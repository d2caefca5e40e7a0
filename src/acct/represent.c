/* The accountant's representations out: the PLD method's composed grid
 * measures, the characteristic function of the privacy loss, and the
 * privacy profile from the Renyi curve (LT §3) (include/dpacct/
 * accountant.h; docs/guarantees.md §3.17, docs/phi.md §9, docs/rdp.md §7).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Argument checks and dispatch only: the PLD measures are the pld method's
 * (src/pld/export.c), phi(t) and the inverse Laplace transform the phi
 * module's (src/phi/phi_cf.c), the bound the rdp method's conversion. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "acct/accountant_internal.h"
#include "model/leaves.h"
#include "model/method.h"
#include "pld/pld_acct.h"
#include "phi/phi.h"

dpa_status dpa_accountant_pld(dpa_accountant *a, dpa_direction dir, dpa_pld_export *out, dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "pld export: NULL argument");
    if (dir != DPA_DIR_BOTH && dir != DPA_DIR_REMOVE && dir != DPA_DIR_ADD)
        return dpa_error_set(err, DPA_EINVAL, "pld export: direction must be remove or add, got %d", (int)dir);
    const dpa_method_ops *ops = dpa_accountant_ops(a);
    if (ops->id != DPA_METHOD_PLD)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "pld export: the accountant's method is %s; only pld has a privacy loss distribution "
                             "(build it with method pld)", dpa_method_name(ops->id));
    if (dpa_accountant_leafset(a)->n == 0) {
        /* no step (identities only): P = Q, the loss is 0 with probability 1 */
        static const double unit = 1.0;
        memset(out, 0, sizeof *out);
        out->direction = DPA_DIR_BOTH;
        out->upper = (dpa_pld_measure){1.0, 0, 1, &unit, 0, 0, 0, 0, 0};
        out->lower = out->upper;
        out->lower_certified = 1;
        return DPA_OK;
    }
    return dpa_pld_export_dir(dpa_accountant_state(a), dir, out, err);
}

/* The phi module's composition of the spec's leaves (refusals as the phi
 * method's, naming the spec's JSON paths). */
static dpa_phi *phi_of(const dpa_spec *spec, dpa_leafset *L, const char *what, dpa_error *err)
{
    dpa_status st = dpa_leaves_build(spec, L, err);
    if (st) return NULL;
    if (L->zcdp_path[0] || L->ra_path[0]) {
        dpa_error_set(err, DPA_EUNSUPPORTED, "%s: %s: %s has no loss distribution here (only the %s method accounts "
                      "it)", what, L->zcdp_path[0] ? L->zcdp_path : L->ra_path,
                      L->zcdp_path[0] ? "a Renyi-DP bound" : "random allocation", L->zcdp_path[0] ? "rdp" : "pld");
        dpa_leaves_free(L);
        return NULL;
    }
    dpa_phi *ph = dpa_phi_new(NULL, err);
    if (ph && dpa_phi_add_leafset(ph, L, err) != DPA_OK) {
        dpa_phi_free(ph);
        ph = NULL;
    }
    if (!ph) dpa_leaves_free(L);
    return ph;
}

dpa_status dpa_characteristic(const dpa_spec *spec, dpa_direction dir, const double *t, size_t n, double *re,
                              double *im, double *error, int *certified, dpa_error *err)
{
    if (!spec || !t || !re || !im || !error || !certified)
        return dpa_error_set(err, DPA_EINVAL, "characteristic function: NULL argument");
    if (n == 0) return dpa_error_set(err, DPA_EINVAL, "characteristic function: no points (n = 0)");
    if (dir != DPA_DIR_BOTH && dir != DPA_DIR_REMOVE && dir != DPA_DIR_ADD)
        return dpa_error_set(err, DPA_EINVAL, "characteristic function: direction must be remove or add, got %d",
                             (int)dir);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(t[i]))
            return dpa_error_set(err, DPA_EINVAL, "characteristic function: t[%zu] must be finite, got %g", i, t[i]);
    dpa_leafset L;
    dpa_phi *ph = phi_of(spec, &L, "characteristic function", err);
    if (!ph) return err ? err->status : DPA_EINVAL;
    size_t nl;
    const dpa_phi_leaf *lv = dpa_phi_leaves(ph, dir == DPA_DIR_ADD, &nl);
    dpa_status st = dpa_phi_cf(lv, nl, t, n, re, im, error, certified, err);
    dpa_phi_free(ph);
    dpa_leaves_free(&L);
    return st;
}

/* The bound: the rdp method's delta at each eps (NULL info->bound_note
 * filled where the rdp method cannot take the spec). */
static dpa_status lt_bound(const dpa_spec *spec, const dpa_options *opt, const double *eps, size_t n,
                           dpa_lt_point *out, dpa_lt_info *info, dpa_error *err)
{
    dpa_options o;
    if (opt) o = *opt;
    else dpa_options_init(&o);
    o.method = DPA_METHOD_RDP;
    dpa_error e2;
    dpa_error_clear(&e2);
    dpa_accountant *acc = dpa_accountant_new(spec, &o, &e2);
    if (!acc) {
        if (e2.status != DPA_EUNSUPPORTED) return dpa_error_set(err, e2.status, "%s", e2.message);
        snprintf(info->bound_note, sizeof info->bound_note, "%s", e2.message);
        return DPA_OK;
    }
    dpa_status st = DPA_OK;
    for (size_t i = 0; i < n && !st; i++) {
        dpa_result r;
        st = dpa_accountant_delta(acc, eps[i], &r, &e2);
        out[i].bound = r.upper;
    }
    dpa_accountant_free(acc);
    if (st) return dpa_error_set(err, st, "%s", e2.message);
    info->has_bound = 1;
    return DPA_OK;
}

/* The estimate (LT eq 37) of both directions, where the composition has a
 * smooth leaf (phi.h dpa_phi_leaf_smooth: the Bromwich integrand decays). */
static dpa_status lt_estimate(const dpa_spec *spec, const double *eps, size_t n, dpa_lt_point *out,
                              dpa_lt_info *info, dpa_error *err)
{
    dpa_leafset L;
    dpa_error e2;
    dpa_error_clear(&e2);
    dpa_phi *ph = phi_of(spec, &L, "inverse Laplace transform", &e2);
    if (!ph) {
        if (e2.status != DPA_EUNSUPPORTED) return dpa_error_set(err, e2.status, "%s", e2.message);
        snprintf(info->estimate_note, sizeof info->estimate_note, "%s", e2.message);
        return DPA_OK;
    }
    size_t nl;
    const dpa_phi_leaf *lv = dpa_phi_leaves(ph, 0, &nl);
    int smooth = 0;
    for (size_t i = 0; i < nl; i++) smooth |= dpa_phi_leaf_smooth(&lv[i]);
    dpa_status st = DPA_OK;
    if (!smooth) {
        snprintf(info->estimate_note, sizeof info->estimate_note,
                 "no Gaussian-type step: the loss law has atoms or jumps (or is a point mass), whose Renyi function "
                 "does not decay along vertical lines, so the Bromwich integral (LT eq 37) does not converge");
        goto done;
    }
    for (size_t i = 0; i < n && !st; i++) {
        double v[2], e[2];
        for (int d = 0; d < 2 && !st; d++) {
            lv = dpa_phi_leaves(ph, d, &nl);
            st = dpa_phi_lt_estimate(lv, nl, eps[i], &v[d], &e[d], err);
        }
        if (st) break;
        out[i].estimate_remove = v[0];
        out[i].estimate_add = v[1];
        int b = v[1] > v[0];
        out[i].estimate = v[b];
        out[i].error_estimate = e[b];
    }
    if (!st) info->has_estimate = 1;
done:
    dpa_phi_free(ph);
    dpa_leaves_free(&L);
    return st;
}

dpa_status dpa_lt_profile(const dpa_spec *spec, const dpa_options *opt, const double *eps, size_t n,
                          dpa_lt_point *out, dpa_lt_info *info, dpa_error *err)
{
    if (!spec || !eps || !out || !info) return dpa_error_set(err, DPA_EINVAL, "inverse Laplace transform: NULL argument");
    if (n == 0) return dpa_error_set(err, DPA_EINVAL, "inverse Laplace transform: no points (n = 0)");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(eps[i]))
            return dpa_error_set(err, DPA_EINVAL, "inverse Laplace transform: eps[%zu] must be finite, got %g", i, eps[i]);
    memset(info, 0, sizeof *info);
    for (size_t i = 0; i < n; i++)
        out[i] = (dpa_lt_point){eps[i], NAN, NAN, NAN, NAN, INFINITY};
    dpa_status st = lt_estimate(spec, eps, n, out, info, err);
    if (!st) st = lt_bound(spec, opt, eps, n, out, info, err);
    if (st) return st;
    if (!info->has_estimate && !info->has_bound)
        return dpa_error_set(err, DPA_EUNSUPPORTED, "inverse Laplace transform: no estimate (%s) and no bound (%s)",
                             info->estimate_note, info->bound_note);
    return DPA_OK;
}
