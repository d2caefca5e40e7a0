/* dpacct command-line front end: number formatting with directed rounding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A printed upper bound must never be below the bound it stands for, and a
 * printed lower bound never above.  printf rounds to nearest, so instead we
 * take the exact decimal expansion of the double (every finite double has at
 * most 767 significant decimal digits, and glibc's printf prints them
 * exactly), truncate it to the digits wanted and step the last digit away
 * from zero when the direction asks for it and a dropped digit is non-zero.
 * The result is the exact directed rounding: no double round trip, no
 * dependence on the floating-point rounding mode. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define EXACT_DIGITS 780 /* > 767 significant digits of any double */
#define MAX_SIG 17

/* Leading significant digits of |x| (x finite, non-zero) as characters in
 * dig[0..digits-1], and the decimal exponent: |x| ~ d.ddd x 10^e.  With
 * exact != 0 the digits are truncated and the return value says whether
 * any dropped digit was non-zero; otherwise they are rounded to nearest. */
static int split_decimal(double x, int digits, int exact, char *dig, int *e)
{
    char text[EXACT_DIGITS + 32];
    const char *p = text;
    int k = 0, dropped = 0;

    snprintf(text, sizeof text, "%.*e", exact ? EXACT_DIGITS : digits - 1, fabs(x));
    for (; *p && *p != 'e'; p++) {
        if (!isdigit((unsigned char)*p))
            continue;
        if (k < digits)
            dig[k++] = *p;
        else if (*p != '0')
            dropped = 1;
    }
    while (k < digits)
        dig[k++] = '0';
    *e = *p == 'e' ? atoi(p + 1) : 0;
    return dropped;
}

/* Add one unit in the last place to dig (magnitude), carrying into e. */
static void step_up(char *dig, int digits, int *e)
{
    int i = digits - 1;
    while (i >= 0 && dig[i] == '9')
        dig[i--] = '0';
    if (i >= 0) {
        dig[i]++;
    } else {
        dig[0] = '1';
        *e += 1;
    }
}

/* %g-like layout of sign, digits and exponent, trailing zeros removed. */
static void render(char *buf, size_t n, int neg, const char *dig, int digits, int e)
{
    const char *sign = neg ? "-" : "";
    int q = digits;
    while (q > 1 && dig[q - 1] == '0')
        q--;
    if (e < -4 || e >= digits) {
        if (q > 1)
            snprintf(buf, n, "%s%c.%.*se%c%02d", sign, dig[0], q - 1, dig + 1,
                     e < 0 ? '-' : '+', abs(e));
        else
            snprintf(buf, n, "%s%ce%c%02d", sign, dig[0], e < 0 ? '-' : '+', abs(e));
    } else if (e >= 0) {
        if (q > e + 1)
            snprintf(buf, n, "%s%.*s.%.*s", sign, e + 1, dig, q - e - 1, dig + e + 1);
        else
            snprintf(buf, n, "%s%.*s", sign, e + 1, dig);
    } else {
        snprintf(buf, n, "%s0.%.*s%.*s", sign, -e - 1, "0000", q, dig);
    }
}

void cli_format(char *buf, size_t n, double x, int digits, int dir)
{
    char dig[MAX_SIG];
    int e, neg = signbit(x) != 0, dropped;

    if (isnan(x) || isinf(x) || x == 0) {
        snprintf(buf, n, "%s", isnan(x) ? "nan" : isinf(x) ? (neg ? "-inf" : "inf") : "0");
        return;
    }
    if (digits < 1)
        digits = 1;
    if (digits > MAX_SIG)
        digits = MAX_SIG;
    dropped = split_decimal(x, digits, dir != CLI_ROUND_NEAREST, dig, &e);
    /* Truncation moved the magnitude toward zero: right for UP on negatives
     * and DOWN on positives; otherwise step away from zero. */
    if (dropped && ((dir == CLI_ROUND_UP && !neg) || (dir == CLI_ROUND_DOWN && neg)))
        step_up(dig, digits, &e);
    render(buf, n, neg, dig, digits, e);
}

void cli_format_shortest(char *buf, size_t n, double x)
{
    if (!isfinite(x)) {
        cli_format(buf, n, x, 1, CLI_ROUND_NEAREST);
        return;
    }
    for (int p = 1; p <= MAX_SIG; p++) {
        cli_format(buf, n, x, p, CLI_ROUND_NEAREST);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* whole numbers below 1e16 in plain digits: 60, not 6e+01 */
    if (strchr(buf, 'e') && fabs(x) >= 1 && fabs(x) < 1e16 && x == floor(x))
        snprintf(buf, n, "%.0f", x);
}

int cli_digits_for(double upper, double lower)
{
    double r;
    int p;
    if (!isfinite(upper) || !isfinite(lower) || upper == 0)
        return 5;
    r = (upper - lower) / fabs(upper);
    if (!(r > 1e-10))
        return 10;
    p = (int)ceil(-log10(r));
    return p < 5 ? 5 : p > 10 ? 10 : p;
}
