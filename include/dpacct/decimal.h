/* dpacct — printing a double rounded in a chosen direction, exactly: an
 * upper bound rounded up, a lower bound rounded down.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * printf("%.5g") rounds to nearest, so a printed upper bound can be below
 * the bound it stands for (0.100000000000000005551 prints as 0.1).
 * dpa_decimal_format prints a double with a given number of significant
 * digits and rounds it up or down exactly: the printed decimal number is
 * >= x for DPA_ROUND_UP and <= x for DPA_ROUND_DOWN, compared as exact real
 * numbers (not after reading the text back into a double), and it is the
 * closest such number with at most that many significant digits.  It works
 * from the exact decimal expansion of the double, so it depends on neither
 * the floating-point rounding mode nor a double round trip.  This is how the
 * dpacct command prints every bound (docs/cli.md, "Output"). */
#ifndef DPACCT_DECIMAL_H
#define DPACCT_DECIMAL_H

#include <stddef.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpa_rounding {
    DPA_ROUND_DOWN = -1,   /* printed <= x: lower bounds */
    DPA_ROUND_NEAREST = 0, /* to nearest, as printf does (no direction guaranteed) */
    DPA_ROUND_UP = 1       /* printed >= x: upper bounds */
} dpa_rounding;

/* Largest significant digit count (17 digits tell any two doubles apart). */
#define DPA_DECIMAL_DIGITS_MAX 17
/* A buffer of this many bytes holds every output, the NUL included. */
#define DPA_DECIMAL_BUF 32

/* Print x into buf (size bytes, owned by the caller) with `digits`
 * significant digits, rounded in direction dir, and NUL-terminate it.
 *
 * Layout: that of printf's "%.{digits}g" with trailing zeros removed
 * ("0.30001", "4.3772", "1e-05", "1.25e+20"), always with '.' as the
 * decimal point whatever the locale.  +-0 print as "0" (a valid bound in
 * both directions), +inf as "inf", -inf as "-inf" (the exact values).
 *
 * Guarantee (finite x, dir UP or DOWN): the printed number p, read as an
 * exact decimal, satisfies p >= x (UP) or p <= x (DOWN), and no number with
 * at most `digits` significant digits lies strictly between x and p.  In
 * particular p == x exactly when x has at most `digits` significant
 * digits.  A number that carries into a new digit is printed as such
 * (9.99999 rounded up with 3 digits is "10").  DPA_ROUND_NEAREST prints
 * what printf("%.{digits}g") would, trailing zeros removed.
 *
 * Errors (buf is then "" when size > 0): DPA_EINVAL for x NaN, digits
 * outside [1, DPA_DECIMAL_DIGITS_MAX], dir not one of the three, buf NULL,
 * or a buffer too small for the text (DPA_DECIMAL_BUF bytes always
 * suffice).  Thread-safe; no allocation. */
dpa_status dpa_decimal_format(char *buf, size_t size, double x, int digits, dpa_rounding dir,
                              dpa_error *err);

#ifdef __cplusplus
}
#endif

#endif
