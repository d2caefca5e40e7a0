/* dpacct — the JSON reader of a dpsgd object (a DP-SGD run, docs/spec.md):
 * its keys and their domains, the neighbouring relation its sampling needs,
 * and its expansion into an event tree (event_dpsgd.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "event_json.h"

#define DPSGD_KEYS "dataset_size, batch_size, epochs, steps, noise, sampling"

/* One numeric key of a dpsgd object into *out (*present: given at all).
 * A placeholder is recorded with domain dom (MODE_SCAN: *out set to a
 * feasible point); without a domain (dom NULL) it is refused with why. */
static dpa_status dpsgd_number(walk *w, json_t *obj, const seg *at, const char *key, const dpa_param_info *dom,
                               const char *why, double *out, int *present)
{
    seg sub = {at, key, 0, NULL};
    json_t *x = json_object_get(obj, key);
    char problem[256];
    int is_ph;
    *present = x != NULL;
    if (!x)
        return DPA_OK;
    if (dpa_evj_is_placeholder(x) && !dom)
        return dpa_evj_fail(w, &sub, "%s", why);
    if (dpa_evj_read_number(w, x, &sub, out, &is_ph) != DPA_OK)
        return DPA_EINVAL;
    if (is_ph && w->mode == MODE_SCAN) {
        dpa_param_info d = *dom;
        memcpy(d.path, w->info.path, sizeof d.path);
        w->info = d;
        *out = dpa_evj_feasible_point(&d);
    }
    if (dom && dpa_ev_check_value(dom, *out, problem, sizeof problem))
        return dpa_evj_fail(w, &sub, "%s", problem);
    return DPA_OK;
}

/* A required size key of a dpsgd object (dataset_size, batch_size): present,
 * never a placeholder (refused with why), in domain dom (a violation's
 * message followed by suffix). */
static dpa_status dpsgd_size(walk *w, json_t *obj, const seg *at, const char *key, const dpa_param_info *dom,
                             const char *why, const char *suffix, double *out)
{
    seg sub = {at, key, 0, NULL};
    char problem[256];
    int has;
    if (dpsgd_number(w, obj, at, key, NULL, why, out, &has) != DPA_OK)
        return DPA_EINVAL;
    if (!has)
        return dpa_evj_fail(w, at, "missing key \"%s\"", key);
    if (dpa_ev_check_value(dom, *out, problem, sizeof problem))
        return dpa_evj_fail(w, &sub, "%s%s", problem, suffix);
    return DPA_OK;
}

static void dpsgd_domain(dpa_param_info *d, const char *name, dpa_param_role role, int integer, double lo,
                         int lo_open, double hi)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->role = role;
    d->is_integer = integer;
    d->lo = lo;
    d->lo_open = lo_open;
    d->hi = hi;
}

/* {"dpsgd": {"dataset_size": N, "batch_size": B, "epochs": E | "steps": T,
 * "noise": S, "sampling": "poisson" | "without_replacement"}}: val is the
 * object, at its path (docs/spec.md). */
dpa_event *dpa_evj_walk_dpsgd(walk *w, json_t *val, const seg *at)
{
    static const char NOT_MONOTONE[] =
        "cannot be calibrated (a \"?\" here): with the epochs fixed the step count ceil(epochs N / B) moves "
        "with N and B, so epsilon is not monotone in them; calibrate noise, steps or epochs (or use "
        "`dpacct dpsgd --batch-size`)";
    json_t *js;
    char q[128], why[512];
    dpa_ev_dpsgd d = {0, 0, 0, 0, 0, DPA_DPSGD_POISSON};
    dpa_param_info dom;
    int has_e, has_t, has;
    if (!json_is_object(val)) {
        dpa_evj_fail(w, at, "expected an object, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    {
        static const char *const keys[] = {"dataset_size", "batch_size", "epochs", "steps", "noise", "sampling"};
        if (dpa_evj_known_keys(w, val, at, keys, sizeof keys / sizeof keys[0], DPSGD_KEYS) != DPA_OK)
            return NULL;
    }
    /* the sizes first: the domains of the others depend on them */
    dpsgd_domain(&dom, "dataset_size", DPA_ROLE_NOISE, 1, 1, 0, DPA_MAX_COUNT);
    snprintf(why, sizeof why, "the dataset size %s", NOT_MONOTONE);
    if (dpsgd_size(w, val, at, "dataset_size", &dom, why, "", &d.n) != DPA_OK)
        return NULL;
    dpsgd_domain(&dom, "batch_size", DPA_ROLE_BUDGET, 1, 1, 0, d.n);
    snprintf(why, sizeof why, "the batch size %s", NOT_MONOTONE);
    if (dpsgd_size(w, val, at, "batch_size", &dom, why, " (the dataset_size)", &d.b) != DPA_OK)
        return NULL;
    /* epochs: (0, hi] with hi a little below DPA_MAX_COUNT steps when "?" */
    {
        int ph = dpa_evj_is_placeholder(json_object_get(val, "epochs"));
        json_t *js0 = json_object_get(val, "sampling");
        if (js0 && json_is_string(js0) && !strcmp(json_string_value(js0), "random_allocation")) {
            /* whole epochs of ceil(N / B) steps */
            unsigned long long n = (unsigned long long)d.n, b = (unsigned long long)d.b, t = n / b + (n % b != 0);
            dpsgd_domain(&dom, "epochs", DPA_ROLE_BUDGET, 1, 1, 0, floor(DPA_MAX_COUNT / (double)t));
        } else {
            dpsgd_domain(&dom, "epochs", DPA_ROLE_BUDGET, 0, 0, 1,
                         ph ? DPA_MAX_COUNT * (d.b / d.n) * (1 - 1e-12) : DBL_MAX);
        }
        if (dpsgd_number(w, val, at, "epochs", &dom, NULL, &d.epochs, &has_e) != DPA_OK)
            return NULL;
    }
    dpsgd_domain(&dom, "steps", DPA_ROLE_BUDGET, 1, 1, 0, DPA_MAX_COUNT);
    if (dpsgd_number(w, val, at, "steps", &dom, NULL, &d.steps, &has_t) != DPA_OK)
        return NULL;
    if (has_e && has_t) {
        dpa_evj_fail(w, at, "give exactly one of \"epochs\" and \"steps\", not both");
        return NULL;
    }
    if (!has_e && !has_t) {
        dpa_evj_fail(w, at, "missing key \"epochs\" (or \"steps\")");
        return NULL;
    }
    if (has_e && !(dpa_dpsgd_steps(d.epochs, d.n, d.b) >= 1)) {
        seg sub = {at, "epochs", 0, NULL};
        dpa_evj_fail(w, &sub, "%.17g epochs of %.17g examples in batches of %.17g is more than 1e+15 steps", d.epochs, d.n,
             d.b);
        return NULL;
    }
    dpa_ev_param_domain(DPA_EV_GAUSSIAN, 0, NULL, &dom);
    snprintf(dom.name, sizeof dom.name, "noise");
    if (dpsgd_number(w, val, at, "noise", &dom, NULL, &d.noise, &has) != DPA_OK)
        return NULL;
    if (!has) {
        dpa_evj_fail(w, at, "missing key \"noise\"");
        return NULL;
    }
    if ((js = json_object_get(val, "sampling"))) {
        seg sub = {at, "sampling", 0, NULL};
        if (dpa_evj_is_placeholder(js)) {
            dpa_evj_fail(w, &sub, "the sampling cannot be calibrated (a \"?\" here)");
            return NULL;
        }
        if (!json_is_string(js)) {
            dpa_evj_fail(w, &sub, "expected a string (\"poisson\", \"without_replacement\" or "
                         "\"random_allocation\"), got %s", dpa_evj_type_name(js));
            return NULL;
        }
        if (!strcmp(json_string_value(js), "without_replacement"))
            d.sampling = DPA_DPSGD_WITHOUT_REPLACEMENT;
        else if (!strcmp(json_string_value(js), "random_allocation"))
            d.sampling = DPA_DPSGD_RANDOM_ALLOCATION;
        else if (!strcmp(json_string_value(js), "shuffle")) {
            dpa_evj_fail(w, &sub, "\"shuffle\" has no single pair to compose (its certified bracket comes from "
                         "two: `dpacct dpsgd --sampling shuffle`, docs/training.md); in a spec use its upper "
                         "pair, a repeat of gaussian with sensitivity 2 per epoch under \"replace\"");
            return NULL;
        } else if (strcmp(json_string_value(js), "poisson")) {
            dpa_evj_fail(w, &sub, "must be \"poisson\", \"without_replacement\" or \"random_allocation\", got %s",
                 dpa_evj_quote(json_string_value(js), q, sizeof q));
            return NULL;
        }
    }
    if ((d.sampling == DPA_DPSGD_WITHOUT_REPLACEMENT) != (w->nb == DPA_REPLACE)) {
        if (d.sampling == DPA_DPSGD_WITHOUT_REPLACEMENT)
            dpa_evj_fail(w, at, "sampling \"without_replacement\" is accounted under replace-one neighbours "
                 "(sample(N, B) with sensitivity 2) but the spec is \"add_remove\"; a spec has one neighbouring "
                 "relation: give \"neighboring\": \"replace\" at the top level, or use sampling \"poisson\"");
        else if (d.sampling == DPA_DPSGD_RANDOM_ALLOCATION)
            dpa_evj_fail(w, at, "sampling \"random_allocation\" is accounted under add/remove neighbours "
                 "(random_allocation(ceil(N/B), 1) with sensitivity 1; dpacct refuses it under replace) but the "
                 "spec is \"replace\"; a spec has one neighbouring relation: give \"neighboring\": \"add_remove\"");
        else
            dpa_evj_fail(w, at, "sampling \"poisson\" (the default) is accounted under add/remove neighbours "
                 "(poisson(B/N) with sensitivity 1; dpacct refuses poisson under replace) but the spec is "
                 "\"replace\"; a spec has one neighbouring relation: use sampling \"without_replacement\", or "
                 "\"neighboring\": \"add_remove\"");
        return NULL;
    }
    {
        dpa_error e2;
        dpa_event *e = dpa_ev_dpsgd_expand(&d, &e2);
        if (!e)
            dpa_evj_fail(w, at, "%s", e2.message);
        return e;
    }
}
