/* Privacy filters: the string builder of the JSON texts (configuration,
 * state, remaining budget; filter_internal.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Doubles are written with "%.17g" (they round-trip exactly), 0 for -0 (one
 * spelling per value), non-finite values as strings ("inf"); decimals
 * (filter_decimal.h) as strings in their canonical spelling. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_internal.h"

void dpa_f_sb_add(dpa_f_sb *b, const char *fmt, ...)
{
    if (b->bad) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->bad = 1;
            return;
        }
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = (b->cap ? b->cap * 2 : 256) + (size_t)k;
        char *t = realloc(b->s, nc);
        if (!t) {
            b->bad = 1;
            return;
        }
        b->s = t;
        b->cap = nc;
    }
}

/* a double: %.17g if finite (0 for -0: one spelling per value), else a string */
void dpa_f_sb_num(dpa_f_sb *b, double x)
{
    if (x == 0) dpa_f_sb_add(b, "0");
    else if (isfinite(x)) dpa_f_sb_add(b, "%.17g", x);
    else dpa_f_sb_add(b, "\"%s\"", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

/* a decimal as a JSON string (exact; filter_decimal.h): ,"key":"0.75", or
 * an array element when key is "" or "," */
void dpa_f_sb_dec(dpa_f_sb *b, const char *key, dpa_dec a)
{
    char t[DPA_DEC_STRLEN];
    dpa_dec_str(a, t);
    if (!key[0] || !strcmp(key, ",")) dpa_f_sb_add(b, "%s\"%s\"", key, t);
    else dpa_f_sb_add(b, ",\"%s\":\"%s\"", key, t);
}

char *dpa_f_sb_done(dpa_f_sb *b)
{
    if (b->bad) {
        free(b->s);
        return NULL;
    }
    if (!b->s) dpa_f_sb_add(b, "%s", "");
    return b->s;
}

