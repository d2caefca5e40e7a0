/* dpacct command-line front end: number formatting with directed rounding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A printed upper bound must never be below the bound it stands for, and a
 * printed lower bound never above: every bound goes through the library's
 * dpa_decimal_format (include/dpacct/decimal.h), which rounds the exact
 * decimal expansion of the double in the bound's safe direction.  Here: NaN
 * as "nan", the shortest round-trip form of a given value, and how many
 * digits a bracket deserves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

void cli_format(char *buf, size_t n, double x, int digits, int dir)
{
    if (isnan(x)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (digits < 1)
        digits = 1;
    if (digits > DPA_DECIMAL_DIGITS_MAX)
        digits = DPA_DECIMAL_DIGITS_MAX;
    /* every caller's buffer holds CLI_NUM_BUF >= DPA_DECIMAL_BUF bytes */
    if (dpa_decimal_format(buf, n, x, digits, (dpa_rounding)dir, NULL) != DPA_OK)
        snprintf(buf, n, "?");
}

void cli_format_shortest(char *buf, size_t n, double x)
{
    if (!isfinite(x)) {
        cli_format(buf, n, x, 1, DPA_ROUND_NEAREST);
        return;
    }
    for (int p = 1; p <= DPA_DECIMAL_DIGITS_MAX; p++) {
        cli_format(buf, n, x, p, DPA_ROUND_NEAREST);
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
