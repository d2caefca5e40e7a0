/* The JSON reader's shared parts: the walk over a parsed spec, JSON paths,
 * and the helpers every part of the reader uses.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One recursive walk (event_json_read.c) checks a parsed spec and builds its
 * events; the table kinds (event_json_table.c), dpsgd runs
 * (event_json_dpsgd.c), bandmf runs (event_json_bandmf.c) and tradeoff curves
 * (event_json_tradeoff_curve.c) have their own readers, templates
 * (event_json_template.c) run the same walk in their modes.  Every message
 * starts with the JSON path of the offending value (event_json_values.c).
 */
#ifndef DPA_EVENT_JSON_H
#define DPA_EVENT_JSON_H

#include <float.h>
#include <jansson.h>
#include "event_internal.h"

/* A plain spec ("?" is an error), a template scan (the single "?" is
 * recorded with its domain and replaced by a feasible value), a template
 * instantiation ("?" replaced by the caller's value). */
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

/* The names of report_noisy_max's noise (index: dpa_rnm_noise) and of a
 * dpsgd run's sampling (index: wor), read and written. */
static const char *const DPA_EVJ_RNM_NOISE[] = {"gumbel", "laplace", "exponential"};
static const char *const DPA_EVJ_DPSGD_SAMPLING[] = {"poisson", "without_replacement", "random_allocation"};

/* The two arrays of a table kind: privacy_loss {"loss": [...], "mass": [...]}
 * and privacy_profile {"epsilon": [...], "delta": [...]}; mixture_of_gaussians
 * adds its "sigma".  Read by event_json_table.c, written by event_json_write.c. */
typedef struct table_kind {
    const char *scalar; /* a required number besides the arrays (slot 0), or NULL */
    const char *key[2];
    double lo[2], hi[2]; /* closed ranges of the entries (key[0]: |x| <= hi[0] if lo[0] < 0) */
} table_kind;

static const table_kind TABLE_LOSS = {NULL, {"loss", "mass"}, {-DPA_MAX_TABLE_LOSS, 0}, {DPA_MAX_TABLE_LOSS, 1}};
static const table_kind TABLE_PROFILE = {NULL, {"epsilon", "delta"}, {0, 0}, {DPA_MAX_PROFILE_EPS, 1}};
static const table_kind TABLE_MIXTURE = {"sigma", {"sensitivities", "probabilities"}, {0, 0}, {DBL_MAX, 1}};

static inline const table_kind *dpa_evj_table_of(dpa_event_kind k)
{
    return k == DPA_EV_PRIVACY_LOSS ? &TABLE_LOSS : k == DPA_EV_PRIVACY_PROFILE ? &TABLE_PROFILE : &TABLE_MIXTURE;
}

/* ---- paths, messages, single values (event_json_values.c) ---- */
/* Set w->err to DPA_EINVAL "PATH: message"; returns DPA_EINVAL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
dpa_status dpa_evj_fail(walk *w, const seg *at, const char *fmt, ...);
/* A user-supplied string quoted for a message (at most 40 characters,
 * quotes, backslashes and control characters escaped), in buf[n]. */
const char *dpa_evj_quote(const char *s, char *buf, size_t n);
/* Every key of obj is one of keys[0..n-1]; otherwise "unknown key K
 * (expected EXPECTED)" at `at` (the template kinds' readers: dpsgd, bandmf,
 * tradeoff_curve). */
dpa_status dpa_evj_known_keys(walk *w, json_t *obj, const seg *at, const char *const *keys, size_t n,
                              const char *expected);
/* "object", "array", "string", "number", "boolean" or "null". */
const char *dpa_evj_type_name(const json_t *v);
/* 1 if v is the placeholder "?". */
int dpa_evj_is_placeholder(const json_t *v);
/* Read the number at `at` into *out.  The string "?" is the placeholder:
 * an error for a plain spec, *is_ph = 1 otherwise (MODE_INST also sets *out
 * to the template value; MODE_SCAN records its path in w->info and leaves
 * *out for the caller). */
dpa_status dpa_evj_read_number(walk *w, json_t *v, const seg *at, double *out, int *is_ph);
/* A value inside d, substituted for the placeholder while scanning. */
double dpa_evj_feasible_point(const dpa_param_info *d);

/* ---- the kinds with readers of their own ---- */
/* A table kind's object (privacy_loss, privacy_profile,
 * mixture_of_gaussians): val is the object, at its path
 * (event_json_table.c). */
dpa_event *dpa_evj_walk_table(walk *w, dpa_event_kind kind, json_t *val, const seg *at);
/* A dpsgd object, expanded into its event tree: val is the object, at its
 * path (event_json_dpsgd.c). */
dpa_event *dpa_evj_walk_dpsgd(walk *w, json_t *val, const seg *at);
/* A bandmf object, expanded into its event tree: val is the object, at its
 * path (event_json_bandmf.c). */
dpa_event *dpa_evj_walk_bandmf(walk *w, json_t *val, const seg *at);
/* A tradeoff_curve object, read into a privacy_profile event: val is the
 * object, at its path (event_json_tradeoff_curve.c). */
dpa_event *dpa_evj_walk_tradeoff_curve(walk *w, json_t *val, const seg *at);

/* ---- the walk (event_json_read.c) ---- */
/* Parse text with jansson: syntax errors, duplicate keys and empty input are
 * DPA_EINVAL.  Returns a new reference or NULL. */
json_t *dpa_evj_load_text(const char *text, dpa_error *err);
/* The spec of a parsed root (its optional "neighboring", then its event),
 * in w's mode. */
dpa_spec *dpa_evj_walk_spec(walk *w, json_t *root);

#endif
