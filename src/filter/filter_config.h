/* Privacy filters: the JSON configuration readers shared by filter.c and
 * the residue filters' budgets (filter_budget.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_FILTER_CONFIG_H
#define DPA_FILTER_CONFIG_H

#include <jansson.h>
#include "filter/filter_internal.h"

/* The number o[key] in [lo, hi] ((lo, hi] when lo_open) into *out; a
 * missing key is an error only when required.  Errors name the JSON path
 * prefix/key ("" for the top) and the domain. */
dpa_status dpa_f_get_num(json_t *o, const char *prefix, const char *key, int required, double lo, double hi, int lo_open,
                         double *out, dpa_error *err);
/* DPA_EINVAL naming prefix/key for a key of o not in the NULL-terminated
 * allowed list (filter fname). */
dpa_status dpa_f_check_keys(json_t *o, const char *prefix, const char *const *allowed, const char *fname, dpa_error *err);
/* "gdp-residue" {"mu": M, "delta": D, "report_delta": R} (delta optional)
 * and "residue" {"budget": {"tradeoff": {...}}, "report_delta": R}: sets
 * f->mu, f->delta, f->report_delta (docs/filters.md). */
dpa_status dpa_f_parse_residue(dpa_filter *f, json_t *o, const char *name, dpa_error *err);
/* ,"budget":{"tradeoff":{...}} of a budget curve as configured */
struct dpa_f_bcurve;
void dpa_f_bcurve_json(dpa_f_sb *b, const struct dpa_f_bcurve *c);

#endif
