/* dpacct — the JSON reader of a bandmf object (banded matrix factorization,
 * docs/spec.md and docs/bandmf.md): its keys, their domains with the path of
 * the offending value, the placeholders a template may put in it
 * (noise_multiplier, rate), and its expansion (event_bandmf.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_json.h"

/* The number at key of obj into *out; required (else "missing key"). A "?"
 * is allowed when dom is given (its domain: MODE_SCAN records it and puts a
 * feasible point in *out), refused otherwise. */
static dpa_status number_key(walk *w, json_t *obj, const seg *at, const char *key, const dpa_param_info *dom,
                             double *out)
{
    seg sub = {at, key, 0, NULL};
    json_t *x = json_object_get(obj, key);
    char problem[256];
    int is_ph;
    if (!x)
        return dpa_evj_fail(w, at, "missing key \"%s\"", key);
    if (!dom && dpa_evj_is_placeholder(x))
        return dpa_evj_fail(w, &sub, "cannot be calibrated (a \"?\" here); calibrate noise_multiplier or rate");
    if (dpa_evj_read_number(w, x, &sub, out, &is_ph) != DPA_OK)
        return DPA_EINVAL;
    if (!dom)
        return DPA_OK;
    if (is_ph && w->mode == MODE_SCAN) {
        char path[sizeof w->info.path];
        memcpy(path, w->info.path, sizeof path);
        w->info = *dom;
        memcpy(w->info.path, path, sizeof path);
        *out = dpa_evj_feasible_point(dom);
    }
    if (dpa_ev_check_value(dom, *out, problem, sizeof problem))
        return dpa_evj_fail(w, &sub, "%s", problem);
    return DPA_OK;
}

/* The participation object: {"poisson": {"rate": q}} or {"fixed":
 * {"epochs": k, "separation": sep}} (sep optional: 0 stands for b). */
static dpa_status read_participation(walk *w, json_t *val, const seg *at, double *rate, double *k, double *sep)
{
    static const char *const kinds[] = {"poisson", "fixed"};
    json_t *p = json_object_get(val, "participation"), *x;
    seg ps = {at, "participation", 0, NULL};
    *rate = *k = *sep = 0;
    if (!p)
        return dpa_evj_fail(w, at, "missing key \"participation\"");
    if (!json_is_object(p) || json_object_size(p) != 1)
        return dpa_evj_fail(w, &ps, "expected an object with one key, \"poisson\" or \"fixed\", got %s",
                            json_is_object(p) ? "another object" : dpa_evj_type_name(p));
    if (dpa_evj_known_keys(w, p, &ps, kinds, 2, "poisson or fixed") != DPA_OK)
        return DPA_EINVAL;
    if ((x = json_object_get(p, "poisson"))) {
        static const char *const keys[] = {"rate"};
        seg s = {&ps, "poisson", 0, NULL};
        dpa_param_info dom;
        if (!json_is_object(x))
            return dpa_evj_fail(w, &s, "expected an object, got %s", dpa_evj_type_name(x));
        dpa_ev_param_domain(DPA_EV_POISSON, 0, NULL, &dom);
        /* a bandmf round samples with a positive rate: (0, 1] (a poisson
         * event's rate 0 is the no-op; here 0 would mean no participation) */
        dom.lo = 0;
        dom.lo_open = 1;
        return dpa_evj_known_keys(w, x, &s, keys, 1, "rate") ? DPA_EINVAL : number_key(w, x, &s, "rate", &dom, rate);
    }
    {
        static const char *const keys[] = {"epochs", "separation"};
        seg s = {&ps, "fixed", 0, NULL};
        x = json_object_get(p, "fixed");
        if (!json_is_object(x))
            return dpa_evj_fail(w, &s, "expected an object, got %s", dpa_evj_type_name(x));
        if (dpa_evj_known_keys(w, x, &s, keys, 2, "epochs, separation") || number_key(w, x, &s, "epochs", NULL, k))
            return DPA_EINVAL;
        if (!json_object_get(x, "separation"))
            return DPA_OK;
        if (number_key(w, x, &s, "separation", NULL, sep))
            return DPA_EINVAL;
        if (*sep == 0) { /* 0 stands for "not given" in dpa_event_bandmf */
            seg t = {&s, "separation", 0, NULL};
            return dpa_evj_fail(w, &t, "must be an integer >= the number of bands, got 0");
        }
        return DPA_OK;
    }
}

/* The coefficients array into a new buffer (*c, *b entries). */
static dpa_status read_coefficients(walk *w, json_t *val, const seg *at, double **c, size_t *b)
{
    json_t *a = json_object_get(val, "coefficients");
    seg s = {at, "coefficients", 0, NULL};
    *c = NULL;
    *b = 0;
    if (!a)
        return dpa_evj_fail(w, at, "missing key \"coefficients\"");
    if (!json_is_array(a))
        return dpa_evj_fail(w, &s, "expected an array of numbers, got %s", dpa_evj_type_name(a));
    if (json_array_size(a) == 0)
        return dpa_evj_fail(w, &s, "must not be empty (the first column of the strategy, c0 first)");
    if ((double)json_array_size(a) > DPA_BANDMF_MAX_BANDS)
        return dpa_evj_fail(w, &s, "has %zu entries, more than %d", json_array_size(a), DPA_BANDMF_MAX_BANDS);
    if (!(*c = malloc(json_array_size(a) * sizeof **c))) {
        dpa_error_set(w->err, DPA_ENOMEM, "bandmf: out of memory");
        return DPA_ENOMEM;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        seg e = {&s, NULL, i, NULL};
        json_t *x = json_array_get(a, i);
        if (!json_is_number(x)) {
            free(*c);
            *c = NULL;
            return dpa_evj_fail(w, &e, "expected a number%s, got %s",
                                dpa_evj_is_placeholder(x) ? " (a coefficient cannot be calibrated)" : "",
                                dpa_evj_type_name(x));
        }
        (*c)[i] = json_number_value(x);
    }
    *b = json_array_size(a);
    return DPA_OK;
}

/* {"bandmf": {"coefficients": [c0, ...], "noise_multiplier": s,
 * "iterations": n, "participation": {...}}}: val is the object, at its path. */
dpa_event *dpa_evj_walk_bandmf(walk *w, json_t *val, const seg *at)
{
    static const char *const keys[] = {"coefficients", "noise_multiplier", "iterations", "participation"};
    double *c = NULL, noise = 0, n = 0, rate, k, sep;
    size_t b = 0, index;
    dpa_param_info dom;
    dpa_bandmf_field f;
    char problem[384];
    dpa_event *e = NULL;
    if (!json_is_object(val)) {
        dpa_evj_fail(w, at, "expected an object, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    if (dpa_evj_known_keys(w, val, at, keys, 4, "coefficients, noise_multiplier, iterations, participation"))
        return NULL;
    if (w->nb == DPA_REPLACE) {
        dpa_evj_fail(w, at, "a bandmf run is accounted under add/remove neighbours (clip norm 1) but the spec is "
                            "\"replace\"; a spec has one neighbouring relation: use \"add_remove\" (for fixed "
                            "participation under replace-one neighbours, give 2 c as the coefficients)");
        return NULL;
    }
    if (read_coefficients(w, val, at, &c, &b) != DPA_OK)
        return NULL;
    dpa_ev_param_domain(DPA_EV_GAUSSIAN, 0, NULL, &dom);
    snprintf(dom.name, sizeof dom.name, "noise_multiplier");
    if (number_key(w, val, at, "noise_multiplier", &dom, &noise) || number_key(w, val, at, "iterations", NULL, &n) ||
        read_participation(w, val, at, &rate, &k, &sep))
        goto done;
    if (dpa_ev_bandmf_problem(c, b, noise, n, rate, k, sep, &f, &index, problem, sizeof problem)) {
        seg ps = {at, "participation", 0, NULL};
        seg pk = {&ps, f == DPA_BANDMF_RATE ? "poisson" : "fixed", 0, NULL};
        seg fs = {f == DPA_BANDMF_RATE || f == DPA_BANDMF_EPOCHS || f == DPA_BANDMF_SEPARATION ? &pk : at,
                  dpa_ev_bandmf_field_name(f), 0, NULL};
        seg is = {&fs, NULL, index, NULL};
        dpa_evj_fail(w, index != (size_t)-1 ? &is : &fs, "%s", problem);
        goto done;
    }
    {
        dpa_error e2;
        if (!(e = dpa_event_bandmf(c, b, noise, n, rate, k, sep, &e2)))
            dpa_evj_fail(w, at, "%s", e2.message);
    }
done:
    free(c);
    return e;
}
