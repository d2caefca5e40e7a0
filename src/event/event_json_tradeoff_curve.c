/* dpacct — the JSON reader of tradeoff_curve leaves,
 * {"tradeoff_curve": {"points": [[alpha, beta], ...]}} (docs/spec.md,
 * docs/fdp.md §11): read into the privacy_profile event of
 * dpa_event_tradeoff_curve (event_tradeoff_curve.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "event_json.h"

/* 1 if x is a finite JSON number in [0, 1]; otherwise the error at `at`. */
static int read_unit(walk *w, json_t *x, const seg *at, const char *name, double *out)
{
    if (dpa_evj_is_placeholder(x)) {
        dpa_evj_fail(w, at, "a placeholder \"?\" cannot stand in a tradeoff_curve");
        return 0;
    }
    if (!json_is_number(x)) {
        dpa_evj_fail(w, at, "%s: expected a number, got %s", name, dpa_evj_type_name(x));
        return 0;
    }
    *out = json_number_value(x);
    if (!(*out >= 0 && *out <= 1)) {
        dpa_evj_fail(w, at, "%s must be in [0, 1], got %.17g", name, *out);
        return 0;
    }
    return 1;
}

dpa_event *dpa_evj_walk_tradeoff_curve(walk *w, json_t *val, const seg *at)
{
    if (!json_is_object(val)) {
        dpa_evj_fail(w, at, "expected an object {\"points\": [[alpha, beta], ...]}, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    static const char *const keys[] = {"points"};
    if (dpa_evj_known_keys(w, val, at, keys, 1, "points") != DPA_OK)
        return NULL;
    json_t *pts = json_object_get(val, "points");
    seg sub = {at, "points", 0, NULL};
    if (!pts) {
        dpa_evj_fail(w, at, "missing key \"points\" (a list of [alpha, beta] pairs)");
        return NULL;
    }
    size_t n = json_is_array(pts) ? json_array_size(pts) : 0;
    if (n == 0) {
        dpa_evj_fail(w, &sub, "expected a non-empty array of [alpha, beta] pairs, got %s",
                     json_is_array(pts) ? "an empty array" : dpa_evj_type_name(pts));
        return NULL;
    }
    if (n > DPA_MAX_TRADEOFF_POINTS) {
        dpa_evj_fail(w, &sub, "at most %d points, got %zu", DPA_MAX_TRADEOFF_POINTS, n);
        return NULL;
    }
    double *d = malloc(2 * n * sizeof *d);
    if (!d) {
        dpa_evj_fail(w, at, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        seg el = {&sub, NULL, i, NULL};
        json_t *pt = json_array_get(pts, i);
        if (!json_is_array(pt) || json_array_size(pt) != 2) {
            dpa_evj_fail(w, &el, "expected a pair [alpha, beta], got %s",
                         json_is_array(pt) ? "an array of another length" : dpa_evj_type_name(pt));
            free(d);
            return NULL;
        }
        seg ea = {&el, NULL, 0, NULL}, eb = {&el, NULL, 1, NULL};
        if (!read_unit(w, json_array_get(pt, 0), &ea, "alpha", &d[i]) ||
            !read_unit(w, json_array_get(pt, 1), &eb, "beta", &d[n + i])) {
            free(d);
            return NULL;
        }
    }
    dpa_error e2;
    dpa_event *e = dpa_event_tradeoff_curve(d, d + n, n, &e2);
    free(d);
    static const char pre[] = "tradeoff_curve: ";
    if (!e) dpa_evj_fail(w, &sub, "%s", e2.message + (strncmp(e2.message, pre, sizeof pre - 1) ? 0 : sizeof pre - 1));
    return e;
}
