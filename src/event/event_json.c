/* dpacct — the JSON form of specs (docs/spec.md) and calibration templates.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reading: jansson parses the text (duplicate keys rejected); one recursive
 * walk then checks the tree and builds the event.  Every message starts with
 * the JSON path of the offending value ("/repeat/event/poisson/rate: ...").
 * Parameter domains are not checked here: the walk calls the checks of
 * event.c (dpa_ev_check_params / dpa_ev_check_value) and prefixes the path.
 *
 * The same walk serves three modes: a plain spec ("?" is an error), a
 * template scan (the single "?" is recorded with its domain and replaced by a
 * feasible value so that the rest of the spec is fully validated), and a
 * template instantiation ("?" replaced by the caller's value).
 *
 * Writing: a small string builder emits canonical compact JSON.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "event_internal.h"


/* Deepest accepted nesting of events (the root is level 1). */
#define MAX_EVENT_DEPTH 256
/* Room for any path within MAX_EVENT_DEPTH (segments are at most ~25 chars). */
#define PATH_FULL_MAX 16384

#define EVENT_KEY_LIST "gaussian, laplace, discrete_laplace, discrete_gaussian, " \
    "randomized_response, pure, approx, zcdp, gdp, compose, repeat, poisson, sample, no_op, non_private, " \
    "privacy_loss, privacy_profile, mixture_of_gaussians, sample_with_replacement, truncated_poisson, " \
    "exponential_mechanism, permute_and_flip, report_noisy_max, tree_aggregation, repeat_and_select, " \
    "laplace_svt, gaussian_svt, dpsgd"

typedef enum walk_mode { MODE_SPEC, MODE_SCAN, MODE_INST } walk_mode;

/* A JSON path as a chain of segments, leaf first; NULL is the root "/".
 * key: an object key (always a static string of this module), or NULL for
 * the array index `index`. */
typedef struct seg {
    const struct seg *up;
    const char *key;
    size_t index;
    const char *label; /* the "name" of the event object at this segment, or NULL */
} seg;

typedef struct walk {
    walk_mode mode;
    double value;        /* MODE_INST: the value of the placeholder */
    int found;           /* placeholders met so far */
    dpa_param_info info; /* MODE_SCAN: the placeholder found */
    dpa_neighboring nb;  /* the spec's (read before the events) */
    dpa_error *err;
} walk;

struct dpa_template {
    json_t *root;        /* the parsed text, "?" included */
    dpa_param_info info;
};

/* ---- paths and messages ---- */

static const char *quote(const char *s, char *buf, size_t n);

static void path_append(const seg *s, char *buf, size_t cap, size_t *len)
{
    char idx[32];
    const char *txt;
    if (!s)
        return;
    path_append(s->up, buf, cap, len);
    txt = s->key;
    if (!txt) {
        snprintf(idx, sizeof idx, "%zu", s->index);
        txt = idx;
    }
    if (*len + 1 + strlen(txt) < cap)
        *len += (size_t)snprintf(buf + *len, cap - *len, "/%s", txt);
    if (s->label) {
        char q[128];
        const char *t = quote(s->label, q, sizeof q);
        if (*len + 4 + strlen(t) < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, " (%s)", t);
    }
}

/* Render s as "/a/b/0/c" ("/" for the root) into out[n]; a path too long
 * keeps its head and tail around "/...". */
static void path_render(const seg *s, char *out, size_t n)
{
    char full[PATH_FULL_MAX];
    size_t len = 0, head, tail;
    full[0] = '\0';
    path_append(s, full, sizeof full, &len);
    if (len == 0) {
        snprintf(out, n, "/");
        return;
    }
    if (len < n) {
        memcpy(out, full, len + 1);
        return;
    }
    /* Cut at segment boundaries: "/a/b" + "/..." + "/y/z". */
    head = n / 4;
    while (head > 0 && full[head] != '/')
        head--;
    tail = len - (n - head - 5); /* "/..." plus the NUL */
    while (full[tail] && full[tail] != '/')
        tail++;
    snprintf(out, n, "%.*s/...%s", (int)head, full, full + tail);
}

/* Set w->err to DPA_EINVAL "PATH: message"; returns DPA_EINVAL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static dpa_status fail(walk *w, const seg *at, const char *fmt, ...)
{
    char path[256], msg[DPA_ERROR_MESSAGE_MAX];
    va_list ap;
    path_render(at, path, sizeof path);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dpa_error_set(w->err, DPA_EINVAL, "%s: %s", path, msg);
}

/* A user-supplied string quoted for a message: at most 40 characters,
 * quotes, backslashes and control characters escaped. */
static const char *quote(const char *s, char *buf, size_t n)
{
    size_t j = 0;
    buf[j++] = '"';
    for (size_t i = 0; s[i] && j + 8 < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i == 40) {
            j += (size_t)snprintf(buf + j, n - j, "...");
            break;
        }
        if (ch == '"' || ch == '\\')
            j += (size_t)snprintf(buf + j, n - j, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            j += (size_t)snprintf(buf + j, n - j, "\\x%02x", ch);
        else
            buf[j++] = (char)ch;
    }
    buf[j++] = '"';
    buf[j] = '\0';
    return buf;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

/* ---- numbers and the placeholder ---- */

static int is_placeholder(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) == 1 &&
           json_string_value(v)[0] == '?';
}

/* Read the number at `at` into *out.  The string "?" is the placeholder:
 * an error for a plain spec, *is_ph = 1 otherwise (MODE_INST also sets *out
 * to the template value; MODE_SCAN leaves *out for the caller). */
static dpa_status read_number(walk *w, json_t *v, const seg *at, double *out, int *is_ph)
{
    char first[256];
    *is_ph = 0;
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
        return DPA_OK;
    }
    if (json_is_real(v)) {
        *out = json_real_value(v);
        return DPA_OK;
    }
    if (!is_placeholder(v))
        return fail(w, at, "expected a number, got %s", type_name(v));
    if (w->mode == MODE_SPEC)
        return fail(w, at, "the placeholder \"?\" is only allowed in a calibration template");
    if (++w->found > 1) {
        snprintf(first, sizeof first, "%s", w->info.path);
        return fail(w, at, "more than one \"?\" placeholder (the first is at %s); "
                    "a template has exactly one", first);
    }
    *is_ph = 1;
    if (w->mode == MODE_INST)
        *out = w->value;
    else
        path_render(at, w->info.path, sizeof w->info.path);
    return DPA_OK;
}

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

/* A value inside dom, substituted for the placeholder while scanning. */
static double feasible_point(const dpa_param_info *d)
{
    if (!d->lo_open)
        return d->lo;
    if (d->hi < DBL_MAX && !d->hi_open)
        return d->hi;
    if (d->hi >= DBL_MAX)
        return d->lo + 1;
    return d->lo + (d->hi - d->lo) / 2;
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
            return fail(w, at, "unknown key %s (expected %s)", quote(key, q, sizeof q), exp);
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
            return fail(w, at, "give exactly one of \"epsilon\" and \"p\", not both");
        if (pv) {
            *node = pv;
            pa->rr_p = 1;
        }
        if (!*node)
            return fail(w, at, "missing key \"epsilon\" (or \"p\")");
    }
    return DPA_OK;
}

/* The names of report_noisy_max's noise (index: dpa_rnm_noise). */
static const char *const RNM_NOISE[] = {"gumbel", "laplace", "exponential"};

/* report_noisy_max's "noise": one of RNM_NOISE, stored as its index. */
static dpa_status read_noise(walk *w, json_t *v, const seg *at, double *out)
{
    char q[128];
    if (is_placeholder(v))
        return fail(w, at, "the noise cannot be calibrated (a \"?\" here); calibrate epsilon");
    if (!json_is_string(v))
        return fail(w, at, "expected a string (\"gumbel\", \"laplace\" or \"exponential\"), got %s", type_name(v));
    for (size_t i = 0; i < sizeof RNM_NOISE / sizeof RNM_NOISE[0]; i++) {
        if (!strcmp(json_string_value(v), RNM_NOISE[i])) {
            *out = (double)i;
            return DPA_OK;
        }
    }
    return fail(w, at, "must be \"gumbel\", \"laplace\" or \"exponential\", got %s",
                quote(json_string_value(v), q, sizeof q));
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
            return fail(w, at, "missing key \"%s\"", sub.key);
        }
        if (pa->rr_p && s == 0)
            sub.key = "p";
        if (k == DPA_EV_REPORT_NOISY_MAX && s == 1) {
            if (read_noise(w, node, &sub, &pa->p[s]) != DPA_OK)
                return DPA_EINVAL;
            continue;
        }
        if (read_number(w, node, &sub, &pa->p[s], &is_ph) != DPA_OK)
            return DPA_EINVAL;
        if (is_ph && k == DPA_EV_RANDOMIZED_RESPONSE && s == 1)
            return fail(w, &sub, "the number of buckets cannot be calibrated (a \"?\" here); calibrate epsilon");
        if (!is_ph && k == DPA_EV_REPEAT_AND_SELECT && s == 1 && pa->p[s] == DPA_REPSEL_POISSON)
            return fail(w, &sub, "must be >= 0 and finite, got -1 (omit \"shape\" for a Poisson number of runs)");
        if (is_ph && k == DPA_EV_REPEAT_AND_SELECT && s == 1)
            return fail(w, &sub, "the shape cannot be calibrated (a \"?\" here); calibrate the mean");
        if (is_ph && k == DPA_EV_TRUNCATED_POISSON)
            return fail(w, &sub, "%s cannot be calibrated (a \"?\" here): the bound for truncated Poisson "
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
        if (s != pa->ph && dpa_ev_check_value(&d, pa->p[s], problem, sizeof problem))
            return fail(w, &sub, "%s", problem);
    }
    if (pa->rr_p && pa->ph == 0)
        rr_p_domain(&d, pa->p[1]);
    else
        dpa_ev_param_domain(k, pa->ph, pa->p, &d);
    memcpy(d.path, w->info.path, sizeof d.path); /* set by read_number */
    w->info = d;
    pa->p[pa->ph] = feasible_point(&d);
    return DPA_OK;
}

/* Check every parameter (path-prefixed messages of event.c's checks);
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
            return fail(w, &sub, "%s", problem);
        /* eps = log(p (k - 1) / (1 - p)); exactly 0 at p = 1/k */
        double k = pa->p[1] >= 2 ? pa->p[1] : 2;
        pa->p[0] = pa->p[0] * k == 1 ? 0 : fmax(0, log(pa->p[0]) - log1p(-pa->p[0]) + log(k - 1));
    }
    if (dpa_ev_check_params(k, pa->p, &bad, problem, sizeof problem)) {
        seg sub = {at, dpa_ev_param_name(k, bad), 0, NULL};
        return fail(w, &sub, "%s", problem);
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
        fail(w, at, "expected an array of events, got %s", type_name(val));
        return NULL;
    }
    if (n == 0) {
        fail(w, at, "must be a non-empty array of events");
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

/* The two arrays of a table kind: privacy_loss {"loss": [...], "mass": [...]}
 * and privacy_profile {"epsilon": [...], "delta": [...]}. */
typedef struct table_kind {
    const char *scalar; /* a required number besides the arrays (slot 0), or NULL */
    const char *key[2];
    double lo[2], hi[2]; /* closed ranges of the entries (key[0]: |x| <= hi[0] if lo[0] < 0) */
} table_kind;

static const table_kind TABLE_LOSS = {NULL, {"loss", "mass"}, {-DPA_MAX_TABLE_LOSS, 0}, {DPA_MAX_TABLE_LOSS, 1}};
static const table_kind TABLE_PROFILE = {NULL, {"epsilon", "delta"}, {0, 0}, {DPA_MAX_PROFILE_EPS, 1}};
static const table_kind TABLE_MIXTURE = {"sigma", {"sensitivities", "probabilities"}, {0, 0}, {DBL_MAX, 1}};

static const table_kind *table_of(dpa_event_kind k)
{
    return k == DPA_EV_PRIVACY_LOSS ? &TABLE_LOSS : k == DPA_EV_PRIVACY_PROFILE ? &TABLE_PROFILE : &TABLE_MIXTURE;
}

/* A table kind's object: val is the object, at its path.  Numbers only (no
 * placeholder); the checks of the kind's constructor, with the offending
 * entry's path. */
static dpa_event *walk_table(walk *w, dpa_event_kind kind, json_t *val, const seg *at)
{
    const table_kind *tk = table_of(kind);
    const char *name = dpa_ev_kind_name(kind);
    double scalar = 0;
    json_t *arr[2];
    const char *key;
    json_t *v;
    char q[128];
    if (!json_is_object(val)) {
        fail(w, at, "expected an object, got %s", type_name(val));
        return NULL;
    }
    json_object_foreach(val, key, v) {
        if (strcmp(key, tk->key[0]) && strcmp(key, tk->key[1]) && !(tk->scalar && !strcmp(key, tk->scalar))) {
            fail(w, at, "unknown key %s (expected %s%s%s, %s)", quote(key, q, sizeof q), tk->scalar ? tk->scalar : "",
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
            fail(w, at, "missing key \"%s\"", tk->scalar);
            return NULL;
        }
        if (read_number(w, x, &sub, &scalar, &is_ph) != DPA_OK) return NULL;
        dpa_ev_param_domain(kind, 0, NULL, &d);
        if (is_ph) {
            if (w->mode == MODE_SCAN) {
                memcpy(d.path, w->info.path, sizeof d.path);
                w->info = d;
                scalar = feasible_point(&d);
            }
        }
        if (dpa_ev_check_value(&d, scalar, problem, sizeof problem)) {
            fail(w, &sub, "%s", problem);
            return NULL;
        }
    }
    for (int j = 0; j < 2; j++) {
        seg sub = {at, tk->key[j], 0, NULL};
        if (!(arr[j] = json_object_get(val, tk->key[j]))) {
            fail(w, at, "missing key \"%s\"", tk->key[j]);
            return NULL;
        }
        if (!json_is_array(arr[j]) || json_array_size(arr[j]) == 0) {
            fail(w, &sub, "expected a non-empty array of numbers, got %s", type_name(arr[j]));
            return NULL;
        }
    }
    size_t n = json_array_size(arr[0]);
    if (json_array_size(arr[1]) != n) {
        fail(w, at, "\"%s\" has %zu entries and \"%s\" %zu: they must have the same length", tk->key[0], n,
             tk->key[1], json_array_size(arr[1]));
        return NULL;
    }
    if (n > DPA_MAX_TABLE_POINTS) {
        fail(w, at, "at most %d points, got %zu", DPA_MAX_TABLE_POINTS, n);
        return NULL;
    }
    double *d = malloc(2 * n * sizeof *d);
    if (!d) {
        fail(w, at, "out of memory");
        return NULL;
    }
    for (int j = 0; j < 2; j++) {
        seg sub = {at, tk->key[j], 0, NULL};
        for (size_t i = 0; i < n; i++) {
            seg el = {&sub, NULL, i, NULL};
            json_t *x = json_array_get(arr[j], i);
            if (is_placeholder(x)) {
                fail(w, &el, "a placeholder \"?\" cannot stand in a %s table", name);
                free(d);
                return NULL;
            }
            if (!json_is_number(x)) {
                fail(w, &el, "expected a number, got %s", type_name(x));
                free(d);
                return NULL;
            }
            double y = json_number_value(x);
            if (!(y >= tk->lo[j] && y <= tk->hi[j])) {
                if (tk->lo[j] < 0) fail(w, &el, "must be finite with |%s| <= %g, got %.17g", tk->key[j], tk->hi[j], y);
                else fail(w, &el, "must be in [%g, %g], got %.17g", tk->lo[j], tk->hi[j], y);
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
        fail(w, at, "%s", e2.message + (strncmp(e2.message, name, pre) || strncmp(e2.message + pre, ": ", 2) ? 0 : pre + 2));
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
        return walk_table(w, k, val, at);
    if (!json_is_object(val)) {
        fail(w, at, "expected an object, got %s", type_name(val));
        return NULL;
    }
    if (check_keys(w, k, val, at) != DPA_OK)
        return NULL;
    if (dpa_ev_arity(k) == 1 && !(child_node = json_object_get(val, "event"))) {
        fail(w, at, "missing key \"event\"");
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

/* ---- dpsgd: a DP-SGD run, expanded into its event tree ---- */

#define DPSGD_KEYS "dataset_size, batch_size, epochs, steps, noise, sampling"
static const char *const DPSGD_SAMPLING[] = {"poisson", "without_replacement"};

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
    if (is_placeholder(x) && !dom)
        return fail(w, &sub, "%s", why);
    if (read_number(w, x, &sub, out, &is_ph) != DPA_OK)
        return DPA_EINVAL;
    if (is_ph && w->mode == MODE_SCAN) {
        dpa_param_info d = *dom;
        memcpy(d.path, w->info.path, sizeof d.path);
        w->info = d;
        *out = feasible_point(&d);
    }
    if (dom && dpa_ev_check_value(dom, *out, problem, sizeof problem))
        return fail(w, &sub, "%s", problem);
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
        return fail(w, at, "missing key \"%s\"", key);
    if (dpa_ev_check_value(dom, *out, problem, sizeof problem))
        return fail(w, &sub, "%s%s", problem, suffix);
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
static dpa_event *walk_dpsgd(walk *w, json_t *val, const seg *at)
{
    static const char NOT_MONOTONE[] =
        "cannot be calibrated (a \"?\" here): with the epochs fixed the step count ceil(epochs N / B) moves "
        "with N and B, so epsilon is not monotone in them; calibrate noise, steps or epochs (or use "
        "`dpacct dpsgd --batch-size`)";
    const char *key;
    json_t *v, *js;
    char q[128], why[512];
    dpa_ev_dpsgd d = {0, 0, 0, 0, 0, 0};
    dpa_param_info dom;
    int has_e, has_t, has;
    if (!json_is_object(val)) {
        fail(w, at, "expected an object, got %s", type_name(val));
        return NULL;
    }
    json_object_foreach(val, key, v) {
        static const char *const keys[] = {"dataset_size", "batch_size", "epochs", "steps", "noise", "sampling"};
        size_t i = 0;
        while (i < sizeof keys / sizeof keys[0] && strcmp(key, keys[i]))
            i++;
        if (i == sizeof keys / sizeof keys[0]) {
            fail(w, at, "unknown key %s (expected " DPSGD_KEYS ")", quote(key, q, sizeof q));
            return NULL;
        }
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
        int ph = is_placeholder(json_object_get(val, "epochs"));
        dpsgd_domain(&dom, "epochs", DPA_ROLE_BUDGET, 0, 0, 1, ph ? DPA_MAX_COUNT * (d.b / d.n) * (1 - 1e-12) : DBL_MAX);
        if (dpsgd_number(w, val, at, "epochs", &dom, NULL, &d.epochs, &has_e) != DPA_OK)
            return NULL;
    }
    dpsgd_domain(&dom, "steps", DPA_ROLE_BUDGET, 1, 1, 0, DPA_MAX_COUNT);
    if (dpsgd_number(w, val, at, "steps", &dom, NULL, &d.steps, &has_t) != DPA_OK)
        return NULL;
    if (has_e && has_t) {
        fail(w, at, "give exactly one of \"epochs\" and \"steps\", not both");
        return NULL;
    }
    if (!has_e && !has_t) {
        fail(w, at, "missing key \"epochs\" (or \"steps\")");
        return NULL;
    }
    if (has_e && !(dpa_dpsgd_steps(d.epochs, d.n, d.b) >= 1)) {
        seg sub = {at, "epochs", 0, NULL};
        fail(w, &sub, "%.17g epochs of %.17g examples in batches of %.17g is more than 1e+15 steps", d.epochs, d.n,
             d.b);
        return NULL;
    }
    dpa_ev_param_domain(DPA_EV_GAUSSIAN, 0, NULL, &dom);
    snprintf(dom.name, sizeof dom.name, "noise");
    if (dpsgd_number(w, val, at, "noise", &dom, NULL, &d.noise, &has) != DPA_OK)
        return NULL;
    if (!has) {
        fail(w, at, "missing key \"noise\"");
        return NULL;
    }
    if ((js = json_object_get(val, "sampling"))) {
        seg sub = {at, "sampling", 0, NULL};
        if (is_placeholder(js)) {
            fail(w, &sub, "the sampling cannot be calibrated (a \"?\" here)");
            return NULL;
        }
        if (!json_is_string(js)) {
            fail(w, &sub, "expected a string (\"poisson\" or \"without_replacement\"), got %s", type_name(js));
            return NULL;
        }
        if (!strcmp(json_string_value(js), "without_replacement"))
            d.wor = 1;
        else if (strcmp(json_string_value(js), "poisson")) {
            fail(w, &sub, "must be \"poisson\" or \"without_replacement\", got %s",
                 quote(json_string_value(js), q, sizeof q));
            return NULL;
        }
    }
    if (d.wor != (w->nb == DPA_REPLACE)) {
        if (d.wor)
            fail(w, at, "sampling \"without_replacement\" is accounted under replace-one neighbours "
                 "(sample(N, B) with sensitivity 2) but the spec is \"add_remove\"; a spec has one neighbouring "
                 "relation: give \"neighboring\": \"replace\" at the top level, or use sampling \"poisson\"");
        else
            fail(w, at, "sampling \"poisson\" (the default) is accounted under add/remove neighbours "
                 "(poisson(B/N) with sensitivity 1; dpacct refuses poisson under replace) but the spec is "
                 "\"replace\"; a spec has one neighbouring relation: use sampling \"without_replacement\", or "
                 "\"neighboring\": \"add_remove\"");
        return NULL;
    }
    {
        dpa_error e2;
        dpa_event *e = dpa_ev_dpsgd_expand(&d, &e2);
        if (!e)
            fail(w, at, "%s", e2.message);
        return e;
    }
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
        if ((top && !strcmp(key, "neighboring")) || (!dpa_ev_kind_from_name(key, &k) && strcmp(key, "dpsgd")))
            continue;
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : ": ",
                                    quote(key, q, sizeof q));
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
            return fail(w, &sub, "only allowed at the top level of a spec");
        }
        if (!strcmp(key, "dpsgd")) {
            /* a template kind: expanded by walk_dpsgd into a repeat */
            found++;
            *name = "dpsgd";
            *kind = DPA_EV_REPEAT;
            continue;
        }
        if (!dpa_ev_kind_from_name(key, kind))
            return fail(w, at, "unknown event kind %s (expected " EVENT_KEY_LIST "%s)",
                        quote(key, q, sizeof q), top ? ", or the top-level key neighboring" : "");
        found++;
        *name = dpa_ev_kind_name(*kind);
    }
    if (found == 1)
        return DPA_OK;
    list_event_keys(obj, top, list, sizeof list);
    return fail(w, at, "expected exactly one event key (" EVENT_KEY_LIST "), found %zu%s",
                found, list);
}

/* An event object at `at` (depth: 1 for the root). */
static dpa_event *walk_event(walk *w, json_t *obj, const seg *at, int depth, int top)
{
    const char *name = NULL;
    dpa_event_kind k;
    if (depth > MAX_EVENT_DEPTH) {
        fail(w, at, "events nested deeper than %d levels", MAX_EVENT_DEPTH);
        return NULL;
    }
    if (!json_is_object(obj)) {
        fail(w, at, "expected an event object, got %s", type_name(obj));
        return NULL;
    }
    /* the optional label: checked first, so that messages below name it */
    json_t *jn = json_object_get(obj, "name");
    const char *label = NULL;
    if (jn) {
        char problem[128];
        seg ns = {at, "name", 0, NULL};
        if (!json_is_string(jn)) {
            fail(w, &ns, "an event name must be a string, got %s", type_name(jn));
            return NULL;
        }
        label = json_string_value(jn);
        if (strlen(label) != json_string_length(jn)) {
            fail(w, &ns, "an event name must not contain NUL characters");
            return NULL;
        }
        if (dpa_ev_name_problem(label, problem, sizeof problem)) {
            fail(w, &ns, "an event name %s", problem);
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
        dpa_event *e = !strcmp(name, "dpsgd") ? walk_dpsgd(w, json_object_get(obj, name), &sub)
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
        return fail(w, &at, "expected a string, got %s", type_name(v));
    if (!strcmp(json_string_value(v), "add_remove"))
        return DPA_OK;
    if (!strcmp(json_string_value(v), "replace")) {
        *nb = DPA_REPLACE;
        return DPA_OK;
    }
    return fail(w, &at, "must be \"add_remove\" or \"replace\", got %s",
                quote(json_string_value(v), q, sizeof q));
}

static dpa_spec *walk_spec(walk *w, json_t *root)
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
static json_t *load_text(const char *text, dpa_error *err)
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
    json_t *root = load_text(text, err);
    dpa_spec *s;
    if (!root)
        return NULL;
    s = walk_spec(&w, root);
    json_decref(root);
    return s;
}

/* ---- templates ---- */

dpa_template *dpa_template_from_json(const char *text, dpa_error *err)
{
    walk w = {.mode = MODE_SCAN, .err = err};
    json_t *root = load_text(text, err);
    dpa_spec *s;
    dpa_template *t;
    if (!root)
        return NULL;
    s = walk_spec(&w, root);
    if (!s) {
        json_decref(root);
        return NULL;
    }
    dpa_spec_free(s);
    if (w.found == 0) {
        json_decref(root);
        fail(&w, NULL, "no \"?\" placeholder: a template has exactly one numeric "
             "parameter written \"?\"");
        return NULL;
    }
    t = malloc(sizeof *t);
    if (!t) {
        json_decref(root);
        dpa_error_set(err, DPA_ENOMEM, "template: out of memory");
        return NULL;
    }
    t->root = root;
    t->info = w.info;
    return t;
}

const dpa_param_info *dpa_template_param(const dpa_template *t)
{
    return t ? &t->info : NULL;
}

dpa_spec *dpa_template_instantiate(const dpa_template *t, double value, dpa_error *err)
{
    walk w = {.mode = MODE_INST, .value = value, .err = err};
    if (!t) {
        dpa_error_set(err, DPA_EINVAL, "template: NULL template");
        return NULL;
    }
    /* The walk only reads the tree, so one template may be instantiated
     * from several threads at once. */
    return walk_spec(&w, t->root);
}

void dpa_template_free(dpa_template *t)
{
    if (!t)
        return;
    json_decref(t->root);
    free(t);
}

/* ---- writing ---- */

typedef struct sbuf {
    char *buf;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        char *nb;
        while (cap < b->len + n + 1)
            cap *= 2;
        nb = realloc(b->buf, cap);
        if (!nb) {
            b->oom = 1;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n + 1);
    b->len += n;
}

/* "name":V with V in %.17g (integers print as integers: no exponent below 1e17). */
static void sb_param(sbuf *b, const char *name, double v, int first)
{
    char num[40];
    snprintf(num, sizeof num, "%.17g", v);
    sb_put(b, first ? "\"" : ",\"");
    sb_put(b, name);
    sb_put(b, "\":");
    sb_put(b, num);
}

static void write_event(sbuf *b, const dpa_event *e);

/* "kind":BODY, without the enclosing braces. */
static void write_kind(sbuf *b, const dpa_event *e)
{
    if (e->dpsgd) {
        const dpa_ev_dpsgd *d = e->dpsgd;
        sb_put(b, "\"dpsgd\":{");
        sb_param(b, "dataset_size", d->n, 1);
        sb_param(b, "batch_size", d->b, 0);
        if (d->epochs > 0)
            sb_param(b, "epochs", d->epochs, 0);
        else
            sb_param(b, "steps", d->steps, 0);
        sb_param(b, "noise", d->noise, 0);
        sb_put(b, ",\"sampling\":\"");
        sb_put(b, DPSGD_SAMPLING[d->wor ? 1 : 0]);
        sb_put(b, "\"}");
        return;
    }
    sb_put(b, "\"");
    sb_put(b, dpa_ev_kind_name(e->kind));
    sb_put(b, "\":");
    if (e->kind == DPA_EV_COMPOSE) {
        sb_put(b, "[");
        for (size_t i = 0; i < e->nchild; i++) {
            if (i)
                sb_put(b, ",");
            write_event(b, e->child[i]);
        }
        sb_put(b, "]");
        return;
    }
    sb_put(b, "{");
    if (e->kind == DPA_EV_PRIVACY_LOSS || e->kind == DPA_EV_PRIVACY_PROFILE || e->kind == DPA_EV_MIXTURE_OF_GAUSSIANS) {
        size_t n = e->ndata / 2;
        const table_kind *tk = table_of(e->kind);
        if (tk->scalar) {
            sb_param(b, tk->scalar, e->p[0], 1);
            sb_put(b, ",");
        }
        for (int j = 0; j < 2; j++) {
            sb_put(b, j ? ",\"" : "\"");
            sb_put(b, tk->key[j]);
            sb_put(b, "\":[");
            for (size_t i = 0; i < n; i++) {
                char num[40];
                snprintf(num, sizeof num, "%s%.17g", i ? "," : "", e->data[j * n + i]);
                sb_put(b, num);
            }
            sb_put(b, "]");
        }
    }
    for (int s = 0; s < dpa_ev_num_params(e->kind) && e->kind != DPA_EV_MIXTURE_OF_GAUSSIANS; s++) {
        /* binary randomized response is written as before k existed */
        if (e->kind == DPA_EV_RANDOMIZED_RESPONSE && s == 1 && e->p[1] == 2)
            continue;
        if (e->kind == DPA_EV_REPEAT_AND_SELECT && s == 1 && e->p[1] == DPA_REPSEL_POISSON)
            continue; /* Poisson: shape omitted */
        if (e->kind == DPA_EV_REPORT_NOISY_MAX && s == 1) {
            sb_put(b, ",\"noise\":\"");
            sb_put(b, RNM_NOISE[(int)e->p[1]]);
            sb_put(b, "\"");
            continue;
        }
        sb_param(b, dpa_ev_param_name(e->kind, s), e->p[s], s == 0);
    }
    if (e->nchild == 1) {
        sb_put(b, ",\"event\":");
        write_event(b, e->child[0]);
    }
    sb_put(b, "}");
}

/* "name":"...", (the event's label, JSON-escaped) before its kind */
static void write_name(sbuf *b, const dpa_event *e)
{
    if (!e->name)
        return;
    json_t *s = json_string(e->name);
    char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!t) {
        b->oom = 1;
        return;
    }
    sb_put(b, "\"name\":");
    sb_put(b, t);
    sb_put(b, ",");
    free(t);
}

static void write_event(sbuf *b, const dpa_event *e)
{
    sb_put(b, "{");
    write_name(b, e);
    write_kind(b, e);
    sb_put(b, "}");
}

char *dpa_spec_to_json(const dpa_spec *s)
{
    sbuf b = {NULL, 0, 0, 0};
    if (!s || !s->root)
        return NULL;
    sb_put(&b, "{");
    write_name(&b, s->root);
    write_kind(&b, s->root);
    sb_put(&b, s->nb == DPA_REPLACE ? ",\"neighboring\":\"replace\"}"
                                    : ",\"neighboring\":\"add_remove\"}");
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
