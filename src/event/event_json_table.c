/* dpacct — the JSON reader of the table kinds: privacy_loss ("loss",
 * "mass"), privacy_profile ("epsilon", "delta") and mixture_of_gaussians
 * ("sigma", "sensitivities", "probabilities").
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "event_json.h"

/* A table kind's object: val is the object, at its path.  Numbers only (no
 * placeholder); the checks of the kind's constructor, with the offending
 * entry's path. */
dpa_event *dpa_evj_walk_table(walk *w, dpa_event_kind kind, json_t *val, const seg *at)
{
    const table_kind *tk = dpa_evj_table_of(kind);
    const char *name = dpa_ev_kind_name(kind);
    double scalar = 0;
    json_t *arr[2];
    const char *key;
    json_t *v;
    char q[128];
    if (!json_is_object(val)) {
        dpa_evj_fail(w, at, "expected an object, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    json_object_foreach(val, key, v) {
        if (strcmp(key, tk->key[0]) && strcmp(key, tk->key[1]) && !(tk->scalar && !strcmp(key, tk->scalar))) {
            dpa_evj_fail(w, at, "unknown key %s (expected %s%s%s, %s)", dpa_evj_quote(key, q, sizeof q), tk->scalar ? tk->scalar : "",
                 tk->scalar ? ", " : "", tk->key[0], tk->key[1]);
            return NULL;
        }
    }
    if (tk->scalar) {
        seg sub = {at, tk->scalar, 0, NULL};
        json_t *x = json_object_get(val, tk->scalar);
        int is_ph;
        char problem[256];
        dpa_param_info d;
        if (!x) {
            dpa_evj_fail(w, at, "missing key \"%s\"", tk->scalar);
            return NULL;
        }
        if (dpa_evj_read_number(w, x, &sub, &scalar, &is_ph) != DPA_OK) return NULL;
        dpa_ev_param_domain(kind, 0, NULL, &d);
        if (is_ph) {
            if (w->mode == MODE_SCAN) {
                memcpy(d.path, w->info.path, sizeof d.path);
                w->info = d;
                scalar = dpa_evj_feasible_point(&d);
            }
        }
        if (dpa_ev_check_value(&d, scalar, problem, sizeof problem)) {
            dpa_evj_fail(w, &sub, "%s", problem);
            return NULL;
        }
    }
    for (int j = 0; j < 2; j++) {
        seg sub = {at, tk->key[j], 0, NULL};
        if (!(arr[j] = json_object_get(val, tk->key[j]))) {
            dpa_evj_fail(w, at, "missing key \"%s\"", tk->key[j]);
            return NULL;
        }
        if (!json_is_array(arr[j]) || json_array_size(arr[j]) == 0) {
            dpa_evj_fail(w, &sub, "expected a non-empty array of numbers, got %s", dpa_evj_type_name(arr[j]));
            return NULL;
        }
    }
    size_t n = json_array_size(arr[0]);
    if (json_array_size(arr[1]) != n) {
        dpa_evj_fail(w, at, "\"%s\" has %zu entries and \"%s\" %zu: they must have the same length", tk->key[0], n,
             tk->key[1], json_array_size(arr[1]));
        return NULL;
    }
    if (n > DPA_MAX_TABLE_POINTS) {
        dpa_evj_fail(w, at, "at most %d points, got %zu", DPA_MAX_TABLE_POINTS, n);
        return NULL;
    }
    double *d = malloc(2 * n * sizeof *d);
    if (!d) {
        dpa_evj_fail(w, at, "out of memory");
        return NULL;
    }
    for (int j = 0; j < 2; j++) {
        seg sub = {at, tk->key[j], 0, NULL};
        for (size_t i = 0; i < n; i++) {
            seg el = {&sub, NULL, i, NULL};
            json_t *x = json_array_get(arr[j], i);
            if (dpa_evj_is_placeholder(x)) {
                dpa_evj_fail(w, &el, "a placeholder \"?\" cannot stand in a %s table", name);
                free(d);
                return NULL;
            }
            if (!json_is_number(x)) {
                dpa_evj_fail(w, &el, "expected a number, got %s", dpa_evj_type_name(x));
                free(d);
                return NULL;
            }
            double y = json_number_value(x);
            if (!(y >= tk->lo[j] && y <= tk->hi[j])) {
                if (tk->lo[j] < 0) dpa_evj_fail(w, &el, "must be finite with |%s| <= %g, got %.17g", tk->key[j], tk->hi[j], y);
                else dpa_evj_fail(w, &el, "must be in [%g, %g], got %.17g", tk->lo[j], tk->hi[j], y);
                free(d);
                return NULL;
            }
            d[j * n + i] = y;
        }
    }
    dpa_error e2;
    dpa_event *e = kind == DPA_EV_PRIVACY_LOSS      ? dpa_event_privacy_loss(d, d + n, n, &e2)
                   : kind == DPA_EV_PRIVACY_PROFILE ? dpa_event_privacy_profile(d, d + n, n, &e2)
                                                    : dpa_event_mixture_of_gaussians(scalar, d, d + n, n, &e2);
    free(d);
    size_t pre = strlen(name);
    if (!e)
        dpa_evj_fail(w, at, "%s", e2.message + (strncmp(e2.message, name, pre) || strncmp(e2.message + pre, ": ", 2) ? 0 : pre + 2));
    return e;
}
