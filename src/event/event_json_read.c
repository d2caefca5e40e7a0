/* dpacct — the JSON reader of specs (docs/spec.md): one recursive walk over
 * the parsed text that checks every value and builds the events.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reading: jansson parses the text (duplicate keys rejected); the walk then
 * checks the tree and builds the event.  Every message starts with the JSON
 * path of the offending value ("/repeat/event/poisson/rate: ...").
 * Parameter domains are not checked here: the walk calls the checks of
 * event_kinds.c (dpa_ev_check_params / dpa_ev_check_value) and prefixes the
 * path.
 *
 * The same walk serves three modes: a plain spec ("?" is an error), a
 * template scan (the single "?" is recorded with its domain and replaced by
 * a feasible value so that the rest of the spec is fully validated), and a
 * template instantiation ("?" replaced by the caller's value;
 * event_json_template.c).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_json.h"

/* Deepest accepted nesting of events (the root is level 1). */
#define MAX_EVENT_DEPTH 256

#define EVENT_KEY_LIST "gaussian, laplace, discrete_laplace, discrete_gaussian, " \
    "randomized_response, pure, approx, zcdp, gdp, compose, repeat, poisson, sample, no_op, non_private, " \
    "privacy_loss, privacy_profile, mixture_of_gaussians, sample_with_replacement, truncated_poisson, " \
    "exponential_mechanism, permute_and_flip, report_noisy_max, tree_aggregation, repeat_and_select, " \
    "laplace_svt, gaussian_svt, random_allocation, dpsgd, bandmf, tradeoff_curve"

/* Domain of the "p" form of randomized_response with k buckets (p the
 * probability of the true bucket): p = e^eps / (e^eps + k - 1) in [1/k, 1).
 * k outside its own domain: the binary one (k's check reports it). */
static void rr_p_domain(dpa_param_info *d, double k)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "p");
    d->role = DPA_ROLE_BUDGET;
    d->lo = k >= 2 && k <= DPA_MAX_RR_BUCKETS && k == floor(k) ? 1 / k : 0.5;
    d->hi = 1;
    d->hi_open = 1;
}

/* ---- parameters of one kind object ---- */

/* The raw values of one kind object: p[] in slot order; ph = slot of the
 * placeholder or -1; rr_p = 1 if randomized_response came as "p". */
typedef struct params {
    double p[DPA_EV_MAX_PARAMS];
    int ph;
    int rr_p;
} params;

/* Comma-separated keys accepted in a kind object, for "unknown key" messages. */
static void expected_keys(dpa_event_kind k, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < dpa_ev_num_params(k); s++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", s ? ", " : "",
                                dpa_ev_param_name(k, s));
    if (k == DPA_EV_RANDOMIZED_RESPONSE)
        len += (size_t)snprintf(buf + len, n - len, ", p");
    if (dpa_ev_arity(k) == 1)
        snprintf(buf + len, n - len, ", event");
    if (!buf[0])
        snprintf(buf, n, "no keys: {}");
}

static int key_allowed(dpa_event_kind k, const char *key)
{
    for (int s = 0; s < dpa_ev_num_params(k); s++)
        if (strcmp(key, dpa_ev_param_name(k, s)) == 0)
            return 1;
    if (k == DPA_EV_RANDOMIZED_RESPONSE && strcmp(key, "p") == 0)
        return 1;
    return dpa_ev_arity(k) == 1 && strcmp(key, "event") == 0;
}

/* Every key of obj (the object of kind k at `at`) is one k accepts. */
static dpa_status check_keys(walk *w, dpa_event_kind k, json_t *obj, const seg *at)
{
    const char *key;
    json_t *v;
    char q[128], exp[128];
    json_object_foreach(obj, key, v) {
        if (!key_allowed(k, key)) {
            expected_keys(k, exp, sizeof exp);
            return dpa_evj_fail(w, at, "unknown key %s (expected %s)", dpa_evj_quote(key, q, sizeof q), exp);
        }
    }
    return DPA_OK;
}

/* The JSON node of slot s, switching randomized_response to "p" if given. */
static dpa_status slot_node(walk *w, dpa_event_kind k, int s, json_t *obj,
                            const seg *at, params *pa, json_t **node)
{
    const char *name = dpa_ev_param_name(k, s);
    *node = json_object_get(obj, name);
    if (k == DPA_EV_RANDOMIZED_RESPONSE && s == 0) {
        json_t *pv = json_object_get(obj, "p");
        if (pv && *node)
            return dpa_evj_fail(w, at, "give exactly one of \"epsilon\" and \"p\", not both");
        if (pv) {
            *node = pv;
            pa->rr_p = 1;
        }
        if (!*node)
            return dpa_evj_fail(w, at, "missing key \"epsilon\" (or \"p\")");
    }
    return DPA_OK;
}

/* The names of report_noisy_max's noise (index: dpa_rnm_noise). */

/* report_noisy_max's "noise": one of DPA_EVJ_RNM_NOISE, stored as its index. */
static dpa_status read_noise(walk *w, json_t *v, const seg *at, double *out)
{
    char q[128];
    if (dpa_evj_is_placeholder(v))
        return dpa_evj_fail(w, at, "the noise cannot be calibrated (a \"?\" here); calibrate epsilon");
    if (!json_is_string(v))
        return dpa_evj_fail(w, at, "expected a string (\"gumbel\", \"laplace\" or \"exponential\"), got %s", dpa_evj_type_name(v));
    for (size_t i = 0; i < sizeof DPA_EVJ_RNM_NOISE / sizeof DPA_EVJ_RNM_NOISE[0]; i++) {
        if (!strcmp(json_string_value(v), DPA_EVJ_RNM_NOISE[i])) {
            *out = (double)i;
            return DPA_OK;
        }
    }
    return dpa_evj_fail(w, at, "must be \"gumbel\", \"laplace\" or \"exponential\", got %s",
                dpa_evj_quote(json_string_value(v), q, sizeof q));
}

/* Read the raw parameter values of kind k from obj (no domain checks yet). */
static dpa_status read_params(walk *w, dpa_event_kind k, json_t *obj, const seg *at,
                              params *pa)
{
    memset(pa->p, 0, sizeof pa->p);
    pa->ph = -1;
    pa->rr_p = 0;
    for (int s = 0; s < dpa_ev_num_params(k); s++) {
        json_t *node;
        int is_ph;
        seg sub = {at, dpa_ev_param_name(k, s), 0, NULL};
        if (slot_node(w, k, s, obj, at, pa, &node) != DPA_OK)
            return DPA_EINVAL;
        if (!node) {
            if (dpa_ev_param_default(k, s, &pa->p[s]))
                continue;
            return dpa_evj_fail(w, at, "missing key \"%s\"", sub.key);
        }
        if (pa->rr_p && s == 0)
            sub.key = "p";
        if (k == DPA_EV_REPORT_NOISY_MAX && s == 1) {
            if (read_noise(w, node, &sub, &pa->p[s]) != DPA_OK)
                return DPA_EINVAL;
            continue;
        }
        if (dpa_evj_read_number(w, node, &sub, &pa->p[s], &is_ph) != DPA_OK)
            return DPA_EINVAL;
        if (is_ph && k == DPA_EV_RANDOMIZED_RESPONSE && s == 1)
            return dpa_evj_fail(w, &sub, "the number of buckets cannot be calibrated (a \"?\" here); calibrate epsilon");
        if (!is_ph && k == DPA_EV_REPEAT_AND_SELECT && s == 1 && pa->p[s] == DPA_REPSEL_POISSON)
            return dpa_evj_fail(w, &sub, "must be >= 0 and finite, got -1 (omit \"shape\" for a Poisson number of runs)");
        if (!is_ph && k == DPA_EV_DISCRETE_GAUSSIAN && s == 2 && pa->p[s] == DPA_DG_UNTRUNCATED)
            return dpa_evj_fail(w, &sub, "must be an integer >= 0, got -1 (omit \"truncation\" for the "
                                "untruncated discrete Gaussian)");
        if (is_ph && k == DPA_EV_DISCRETE_GAUSSIAN && s == 2)
            return dpa_evj_fail(w, &sub, "the truncation cannot be calibrated (a \"?\" here): the bound is not "
                                "monotone in it; calibrate sigma");
        if (is_ph && k == DPA_EV_REPEAT_AND_SELECT && s == 1)
            return dpa_evj_fail(w, &sub, "the shape cannot be calibrated (a \"?\" here); calibrate the mean");
        if (is_ph && k == DPA_EV_TRUNCATED_POISSON)
            return dpa_evj_fail(w, &sub, "%s cannot be calibrated (a \"?\" here): the bound for truncated Poisson "
                        "subsampling is not monotone in it; calibrate the child's sigma", sub.key);
        if (is_ph)
            pa->ph = s;
    }
    return DPA_OK;
}

/* Scan mode: check the other parameters on their own, then record the
 * placeholder's domain (given its siblings) and put a feasible value in. */
static dpa_status record_placeholder(walk *w, dpa_event_kind k, const seg *at, params *pa)
{
    char problem[256];
    dpa_param_info d;
    for (int s = 0; s < dpa_ev_num_params(k); s++) {
        seg sub = {at, dpa_ev_param_name(k, s), 0, NULL};
        dpa_ev_param_domain(k, s, NULL, &d);
        if (k == DPA_EV_REPEAT_AND_SELECT && s == 1 && pa->p[s] == DPA_REPSEL_POISSON)
            continue; /* the Poisson sentinel */
        if (k == DPA_EV_DISCRETE_GAUSSIAN && s == 2 && pa->p[s] == DPA_DG_UNTRUNCATED)
            continue; /* the untruncated sentinel */
        if (s != pa->ph && dpa_ev_check_value(&d, pa->p[s], problem, sizeof problem))
            return dpa_evj_fail(w, &sub, "%s", problem);
    }
    if (pa->rr_p && pa->ph == 0)
        rr_p_domain(&d, pa->p[1]);
    else
        dpa_ev_param_domain(k, pa->ph, pa->p, &d);
    memcpy(d.path, w->info.path, sizeof d.path); /* set by read_number */
    w->info = d;
    pa->p[pa->ph] = dpa_evj_feasible_point(&d);
    return DPA_OK;
}

/* Check every parameter (path-prefixed messages of event_kinds.c's checks);
 * converts randomized_response's p to epsilon. */
static dpa_status check_params(walk *w, dpa_event_kind k, const seg *at, params *pa)
{
    char problem[256];
    int bad;
    if (w->mode == MODE_SCAN && pa->ph >= 0 && record_placeholder(w, k, at, pa) != DPA_OK)
        return DPA_EINVAL;
    if (pa->rr_p) {
        dpa_param_info d;
        seg sub = {at, "p", 0, NULL};
        rr_p_domain(&d, pa->p[1]);
        if (dpa_ev_check_value(&d, pa->p[0], problem, sizeof problem))
            return dpa_evj_fail(w, &sub, "%s", problem);
        /* eps = log(p (k - 1) / (1 - p)); exactly 0 at p = 1/k */
        double k = pa->p[1] >= 2 ? pa->p[1] : 2;
        pa->p[0] = pa->p[0] * k == 1 ? 0 : fmax(0, log(pa->p[0]) - log1p(-pa->p[0]) + log(k - 1));
    }
    if (dpa_ev_check_params(k, pa->p, &bad, problem, sizeof problem)) {
        seg sub = {at, dpa_ev_param_name(k, bad), 0, NULL};
        return dpa_evj_fail(w, &sub, "%s", problem);
    }
    return DPA_OK;
}

/* ---- the walk ---- */

static dpa_event *walk_event(walk *w, json_t *obj, const seg *at, int depth, int top);

/* {"compose": [E, ...]}: val is the array, at its path. */
static dpa_event *walk_compose(walk *w, json_t *val, const seg *at, int depth)
{
    size_t n = json_is_array(val) ? json_array_size(val) : 0;
    dpa_event **kids, *e;
    if (!json_is_array(val)) {
        dpa_evj_fail(w, at, "expected an array of events, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    if (n == 0) {
        dpa_evj_fail(w, at, "must be a non-empty array of events");
        return NULL;
    }
    kids = calloc(n, sizeof *kids);
    if (!kids) {
        dpa_error_set(w->err, DPA_ENOMEM, "compose: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        seg sub = {at, NULL, i, NULL};
        kids[i] = walk_event(w, json_array_get(val, i), &sub, depth + 1, 0);
        if (!kids[i]) {
            for (size_t j = 0; j < i; j++)
                dpa_event_free(kids[j]);
            free(kids);
            return NULL;
        }
    }
    e = dpa_ev_make(DPA_EV_COMPOSE, NULL, kids, n, w->err);
    free(kids);
    return e;
}

/* A leaf or a one-child combinator: val is the parameter object, at its path. */
static dpa_event *walk_kind(walk *w, dpa_event_kind k, json_t *val, const seg *at, int depth)
{
    params pa;
    json_t *child_node = NULL;
    dpa_event *child;
    if (k == DPA_EV_COMPOSE)
        return walk_compose(w, val, at, depth);
    if (k == DPA_EV_PRIVACY_LOSS || k == DPA_EV_PRIVACY_PROFILE || k == DPA_EV_MIXTURE_OF_GAUSSIANS)
        return dpa_evj_walk_table(w, k, val, at);
    if (!json_is_object(val)) {
        dpa_evj_fail(w, at, "expected an object, got %s", dpa_evj_type_name(val));
        return NULL;
    }
    if (check_keys(w, k, val, at) != DPA_OK)
        return NULL;
    if (dpa_ev_arity(k) == 1 && !(child_node = json_object_get(val, "event"))) {
        dpa_evj_fail(w, at, "missing key \"event\"");
        return NULL;
    }
    if (read_params(w, k, val, at, &pa) != DPA_OK || check_params(w, k, at, &pa) != DPA_OK)
        return NULL;
    if (!child_node)
        return dpa_ev_make(k, pa.p, NULL, 0, w->err);
    {
        seg sub = {at, "event", 0, NULL};
        child = walk_event(w, child_node, &sub, depth + 1, 0);
    }
    return child ? dpa_ev_make(k, pa.p, &child, 1, w->err) : NULL;
}

/* "found N: "a", "b"" for a message about several event keys. */
static void list_event_keys(json_t *obj, int top, char *buf, size_t n)
{
    const char *key;
    json_t *v;
    char q[128];
    size_t len = 0;
    dpa_event_kind k;
    buf[0] = '\0';
    json_object_foreach(obj, key, v) {
        if ((top && !strcmp(key, "neighboring")) || (!dpa_ev_kind_from_name(key, &k) && strcmp(key, "dpsgd") && strcmp(key, "bandmf") &&
                                                  strcmp(key, "tradeoff_curve")))
            continue;
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : ": ",
                                    dpa_evj_quote(key, q, sizeof q));
    }
}

/* The event key of obj (exactly one; "neighboring" is skipped at the top). */
static dpa_status find_event_key(walk *w, json_t *obj, const seg *at, int top,
                                 const char **name, dpa_event_kind *kind)
{
    const char *key;
    json_t *v;
    char q[128], list[DPA_ERROR_MESSAGE_MAX];
    size_t found = 0;
    json_object_foreach(obj, key, v) {
        if (!strcmp(key, "name"))
            continue; /* the event's label (walk_event) */
        if (!strcmp(key, "neighboring")) {
            seg sub = {at, "neighboring", 0, NULL};
            if (top)
                continue;
            return dpa_evj_fail(w, &sub, "only allowed at the top level of a spec");
        }
        if (!strcmp(key, "dpsgd")) {
            /* a template kind: expanded by walk_dpsgd into a repeat */
            found++;
            *name = "dpsgd";
            *kind = DPA_EV_REPEAT;
            continue;
        }
        if (!strcmp(key, "bandmf")) {
            /* a template kind: expanded by walk_bandmf (event_bandmf.c) */
            found++;
            *name = "bandmf";
            *kind = DPA_EV_REPEAT;
            continue;
        }
        if (!strcmp(key, "tradeoff_curve")) {
            /* read as a privacy_profile (event_json_tradeoff_curve.c) */
            found++;
            *name = "tradeoff_curve";
            *kind = DPA_EV_PRIVACY_PROFILE;
            continue;
        }
        if (!dpa_ev_kind_from_name(key, kind))
            return dpa_evj_fail(w, at, "unknown event kind %s (expected " EVENT_KEY_LIST "%s)",
                        dpa_evj_quote(key, q, sizeof q), top ? ", or the top-level key neighboring" : "");
        found++;
        *name = dpa_ev_kind_name(*kind);
    }
    if (found == 1)
        return DPA_OK;
    list_event_keys(obj, top, list, sizeof list);
    return dpa_evj_fail(w, at, "expected exactly one event key (" EVENT_KEY_LIST "), found %zu%s",
                found, list);
}

/* An event object at `at` (depth: 1 for the root). */
static dpa_event *walk_event(walk *w, json_t *obj, const seg *at, int depth, int top)
{
    const char *name = NULL;
    dpa_event_kind k;
    if (depth > MAX_EVENT_DEPTH) {
        dpa_evj_fail(w, at, "events nested deeper than %d levels", MAX_EVENT_DEPTH);
        return NULL;
    }
    if (!json_is_object(obj)) {
        dpa_evj_fail(w, at, "expected an event object, got %s", dpa_evj_type_name(obj));
        return NULL;
    }
    /* the optional label: checked first, so that messages below name it */
    json_t *jn = json_object_get(obj, "name");
    const char *label = NULL;
    if (jn) {
        char problem[128];
        seg ns = {at, "name", 0, NULL};
        if (!json_is_string(jn)) {
            dpa_evj_fail(w, &ns, "an event name must be a string, got %s", dpa_evj_type_name(jn));
            return NULL;
        }
        label = json_string_value(jn);
        if (strlen(label) != json_string_length(jn)) {
            dpa_evj_fail(w, &ns, "an event name must not contain NUL characters");
            return NULL;
        }
        if (dpa_ev_name_problem(label, problem, sizeof problem)) {
            dpa_evj_fail(w, &ns, "an event name %s", problem);
            return NULL;
        }
    }
    /* the event object's own segment, labelled (the root: an empty key) */
    seg here = at ? *at : (seg){NULL, "", 0, NULL};
    here.label = label;
    const seg *ep = label ? &here : at;
    if (find_event_key(w, obj, ep, top, &name, &k) != DPA_OK)
        return NULL;
    {
        seg sub = {ep, name, 0, NULL};
        dpa_event *e = !strcmp(name, "dpsgd")    ? dpa_evj_walk_dpsgd(w, json_object_get(obj, name), &sub)
                       : !strcmp(name, "bandmf") ? dpa_evj_walk_bandmf(w, json_object_get(obj, name), &sub)
                       : !strcmp(name, "tradeoff_curve") ? dpa_evj_walk_tradeoff_curve(w, json_object_get(obj, name), &sub)
                                                 : walk_kind(w, k, json_object_get(obj, name), &sub, depth);
        if (e && label && dpa_event_set_name(e, label, w->err) != DPA_OK) {
            dpa_event_free(e);
            return NULL;
        }
        return e;
    }
}

/* The optional top-level "neighboring" of root (root may be any JSON value). */
static dpa_status read_neighboring(walk *w, json_t *root, dpa_neighboring *nb)
{
    seg at = {NULL, "neighboring", 0, NULL};
    json_t *v = json_is_object(root) ? json_object_get(root, "neighboring") : NULL;
    char q[128];
    *nb = DPA_ADD_REMOVE;
    if (!v)
        return DPA_OK;
    if (!json_is_string(v))
        return dpa_evj_fail(w, &at, "expected a string, got %s", dpa_evj_type_name(v));
    if (!strcmp(json_string_value(v), "add_remove"))
        return DPA_OK;
    if (!strcmp(json_string_value(v), "replace")) {
        *nb = DPA_REPLACE;
        return DPA_OK;
    }
    if (!strcmp(json_string_value(v), "replace_special")) {
        *nb = DPA_REPLACE_SPECIAL;
        return DPA_OK;
    }
    return dpa_evj_fail(w, &at, "must be \"add_remove\" or \"replace\", got %s (or \"replace_special\")",
                dpa_evj_quote(json_string_value(v), q, sizeof q));
}

dpa_spec *dpa_evj_walk_spec(walk *w, json_t *root)
{
    dpa_neighboring nb = DPA_ADD_REMOVE;
    dpa_event *e;
    if (json_is_object(root) && read_neighboring(w, root, &nb) != DPA_OK)
        return NULL;
    w->nb = nb;
    e = walk_event(w, root, NULL, 1, 1);
    return e ? dpa_spec_new(e, nb, w->err) : NULL;
}

/* Parse text with jansson: syntax errors, duplicate keys and empty input are
 * DPA_EINVAL.  Returns a new reference or NULL. */
json_t *dpa_evj_load_text(const char *text, dpa_error *err)
{
    json_error_t je;
    json_t *root;
    if (!text) {
        dpa_error_set(err, DPA_EINVAL, "no input (NULL text)");
        return NULL;
    }
    if (text[strspn(text, " \t\r\n")] == '\0') {
        dpa_error_set(err, DPA_EINVAL, "empty input: expected a JSON event object");
        return NULL;
    }
    root = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!root)
        dpa_error_set(err, DPA_EINVAL, "JSON syntax error at line %d column %d: %s",
                      je.line, je.column, je.text);
    return root;
}

dpa_spec *dpa_spec_from_json(const char *text, dpa_error *err)
{
    walk w = {.mode = MODE_SPEC, .err = err};
    json_t *root = dpa_evj_load_text(text, err);
    dpa_spec *s;
    if (!root)
        return NULL;
    s = dpa_evj_walk_spec(&w, root);
    json_decref(root);
    return s;
}
