/* Exact decimal numbers with directed rounding: the filters' budgets and
 * accumulators (docs/filters.md, "Exact budgets").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A dpa_dec is m * 10^e with 0 <= m < 10^36, trailing zeros stripped (so
 * equal values have equal representations).  Every operation is exact when
 * its result has at most 36 significant digits, and otherwise rounded in the
 * direction its caller names (up > 0, down otherwise). */
#ifndef DPA_FILTER_DECIMAL_H
#define DPA_FILTER_DECIMAL_H

#include <stddef.h>

typedef unsigned __int128 dpa_u128;
typedef struct dpa_dec {
    dpa_u128 m;
    int e;
} dpa_dec;

/* Longest canonical text of a dpa_dec (dpa_dec_str), with its NUL. */
#define DPA_DEC_STRLEN 96

dpa_dec dpa_dec_int(unsigned long long k);
/* The number a JSON text wrote: the shortest decimal that reads back as x
 * (x >= 0 finite); the canonical spelling of a configured parameter. */
dpa_dec dpa_dec_param(double x);
/* The exact value of x >= 0 (finite), rounded to 36 digits (up > 0: up). */
dpa_dec dpa_dec_from_double(double x, int up);
/* The double nearest a, moved to the named side if it is not exact. */
double dpa_dec_to_double(dpa_dec a, int up);
dpa_dec dpa_dec_add(dpa_dec a, dpa_dec b, int up);
/* a - b for a >= b (0 if a < b). */
dpa_dec dpa_dec_sub(dpa_dec a, dpa_dec b, int up);
dpa_dec dpa_dec_mul(dpa_dec a, dpa_dec b, int up);
/* a / b, b > 0. */
dpa_dec dpa_dec_div(dpa_dec a, dpa_dec b, int up);
/* a^k for an integer k >= 0 given as a double (<= 2^53). */
dpa_dec dpa_dec_pow(dpa_dec a, double k, int up);
int dpa_dec_cmp(dpa_dec a, dpa_dec b); /* -1, 0, 1 */
int dpa_dec_is_zero(dpa_dec a);
/* The largest double r whose shortest decimal D(r) has D(r)^2 <= a: the
 * square root of a rounded down, shown as its JSON spelling. */
double dpa_dec_sqrt_show(dpa_dec a);
/* Canonical text ("0.75", "1e-300", "123"): buf of DPA_DEC_STRLEN. */
void dpa_dec_str(dpa_dec a, char *buf);
/* Reads a decimal text (digits, optional fraction and exponent, no sign);
 * 0 if malformed or longer than 36 significant digits. */
int dpa_dec_parse(const char *s, dpa_dec *out);

#endif
