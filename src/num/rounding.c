/* Directed rounding of long double results to double (num.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include "num/num.h"

double dpa_ld_up(long double x)
{
    if (isnan(x)) return INFINITY;
    double d = (double)x;
    if ((long double)d < x) d = nextafter(d, INFINITY);
    return d;
}

double dpa_ld_dn(long double x)
{
    if (isnan(x)) return -INFINITY;
    double d = (double)x;
    if ((long double)d > x) d = nextafter(d, -INFINITY);
    return d;
}
