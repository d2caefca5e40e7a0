/* Printing a double rounded in a chosen direction, exactly
 * (include/dpacct/decimal.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A printed upper bound must never be below the bound it stands for, and a
 * printed lower bound never above.  printf rounds to nearest, so instead we
 * take the exact decimal expansion of the double (every finite double has at
 * most 767 significant decimal digits, and glibc's printf prints them
 * exactly), truncate it to the digits wanted and step the last digit away
 * from zero when the direction asks for it and a dropped digit is non-zero.
 * The result is the exact directed rounding: no double round trip, no
 * dependence on the floating-point rounding mode.  The digits are read as
 * characters, so the locale's decimal point never matters. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/decimal.h"

#define EXACT_DIGITS 780 /* > 767 significant digits of any double */

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

/* %g-like layout of sign, digits and exponent, trailing zeros removed;
 * returns what snprintf returns. */
static int render(char *buf, size_t n, int neg, const char *dig, int digits, int e)
{
    const char *sign = neg ? "-" : "";
    int q = digits;
    while (q > 1 && dig[q - 1] == '0')
        q--;
    if (e < -4 || e >= digits) {
        if (q > 1)
            return snprintf(buf, n, "%s%c.%.*se%c%02d", sign, dig[0], q - 1, dig + 1,
                            e < 0 ? '-' : '+', abs(e));
        return snprintf(buf, n, "%s%ce%c%02d", sign, dig[0], e < 0 ? '-' : '+', abs(e));
    }
    if (e >= 0) {
        if (q > e + 1)
            return snprintf(buf, n, "%s%.*s.%.*s", sign, e + 1, dig, q - e - 1, dig + e + 1);
        return snprintf(buf, n, "%s%.*s", sign, e + 1, dig);
    }
    return snprintf(buf, n, "%s0.%.*s%.*s", sign, -e - 1, "0000", q, dig);
}

dpa_status dpa_decimal_format(char *buf, size_t size, double x, int digits, dpa_rounding dir,
                              dpa_error *err)
{
    char dig[DPA_DECIMAL_DIGITS_MAX], text[DPA_DECIMAL_BUF];
    int e = 0, neg = signbit(x) != 0, dropped, len;

    if (buf && size > 0)
        buf[0] = '\0';
    if (!buf)
        return dpa_error_set(err, DPA_EINVAL, "dpa_decimal_format: buf is NULL");
    if (isnan(x))
        return dpa_error_set(err, DPA_EINVAL, "dpa_decimal_format: x is NaN");
    if (digits < 1 || digits > DPA_DECIMAL_DIGITS_MAX)
        return dpa_error_set(err, DPA_EINVAL, "dpa_decimal_format: digits must be in [1, %d], got %d",
                             DPA_DECIMAL_DIGITS_MAX, digits);
    if (dir != DPA_ROUND_DOWN && dir != DPA_ROUND_NEAREST && dir != DPA_ROUND_UP)
        return dpa_error_set(err, DPA_EINVAL, "dpa_decimal_format: no such rounding direction (%d)",
                             (int)dir);
    if (isinf(x) || x == 0) {
        len = snprintf(text, sizeof text, "%s", isinf(x) ? (neg ? "-inf" : "inf") : "0");
    } else {
        dropped = split_decimal(x, digits, dir != DPA_ROUND_NEAREST, dig, &e);
        /* Truncation moved the magnitude toward zero: right for UP on
         * negatives and DOWN on positives; otherwise step away from zero. */
        if (dropped && ((dir == DPA_ROUND_UP && !neg) || (dir == DPA_ROUND_DOWN && neg)))
            step_up(dig, digits, &e);
        len = render(text, sizeof text, neg, dig, digits, e);
    }
    if (len < 0 || (size_t)len >= size)
        return dpa_error_set(err, DPA_EINVAL, "dpa_decimal_format: the buffer of %zu bytes is too "
                             "small for \"%s\" (%d bytes with the NUL)", size, text, len + 1);
    memcpy(buf, text, (size_t)len + 1);
    dpa_error_clear(err);
    return DPA_OK;
}
