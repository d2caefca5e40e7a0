/* Exact decimal numbers with directed rounding for the filters' budgets
 * (filter_decimal.h; docs/filters.md, "Exact budgets").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Values are m * 10^e with m < 10^36 in an unsigned 128-bit integer.  Every
 * operation computes the exact result's leading digits and remembers whether
 * a nonzero digit was dropped ("sticky"); rounding up adds one unit in the
 * last kept place when it was, rounding down truncates.  All values are
 * >= 0, so truncation is rounding down.  Conversions from doubles read the
 * exact binary value from glibc's printf, which prints every requested digit
 * exactly (a double has at most 767 significant decimal digits).
 *
 * libmpdec (Debian libmpdec-dev) was evaluated to replace the operations
 * below: it fits them (exact up to 36 digits, else correctly rounded in the
 * named direction) but not the conversions from doubles; the switch is
 * pending (docs/filters.md, "A maintained decimal library"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter/filter_decimal.h"

#define DIG 36 /* digits kept */
/* Smallest exponent kept: a product below 10^-EXP_MIN (a repeated
 * 1 - delta raised to a huge count) is 0 rounded down, 10^-EXP_MIN up. */
#define EXP_MIN 100000

static dpa_u128 p10(int k)
{
    dpa_u128 r = 1;
    while (k-- > 0) r *= 10;
    return r;
}

static int ndig(dpa_u128 m)
{
    int n = 0;
    while (m) {
        m /= 10;
        n++;
    }
    return n;
}

static dpa_dec norm(dpa_u128 m, int e)
{
    dpa_dec r = {m, e};
    if (!m) {
        r.e = 0;
        return r;
    }
    while (r.m % 10 == 0) {
        r.m /= 10;
        r.e++;
    }
    return r;
}

/* m * 10^e with the sticky flag of digits already dropped, to <= maxd digits */
static dpa_dec shrink(dpa_u128 m, int e, int maxd, int up, int sticky)
{
    while (ndig(m) > maxd) {
        sticky |= (m % 10) != 0;
        m /= 10;
        e++;
    }
    if (up > 0 && sticky) m += 1; /* may reach 10^maxd: norm strips it */
    return norm(m, e);
}

int dpa_dec_is_zero(dpa_dec a) { return a.m == 0; }

dpa_dec dpa_dec_int(unsigned long long k) { return norm(k, 0); }

/* reads digits (and a point and an exponent) of a decimal text, keeping
 * DIG significant digits and the sticky flag; 0 if malformed */
static int read_dec(const char *s, dpa_dec *out, int up, int *sticky)
{
    dpa_u128 m = 0;
    int e = 0, nd = 0, any = 0, point = 0;
    *sticky = 0;
    for (; *s; s++) {
        if (*s == '.' && !point) {
            point = 1;
            continue;
        }
        if (*s < '0' || *s > '9') break;
        any = 1;
        int d = *s - '0';
        if (nd < DIG + 1 && (nd > 0 || d > 0)) {
            m = m * 10 + (dpa_u128)d;
            nd++;
            if (point) e--;
        } else if (nd > 0) {
            *sticky |= d != 0;
            if (!point) e++;
        } else if (point) {
            e--; /* a leading zero after the point */
        }
    }
    if (!any) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        int neg = *s == '-';
        if (*s == '+' || *s == '-') s++;
        if (*s < '0' || *s > '9') return 0;
        long x = 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if (x < 100000) x = x * 10 + (*s - '0');
        if (x >= 100000) return 0;
        e += neg ? -(int)x : (int)x;
    }
    if (*s) return 0;
    *out = shrink(m, e, DIG, up, *sticky);
    return 1;
}

int dpa_dec_parse(const char *s, dpa_dec *out)
{
    int sticky;
    dpa_dec d;
    if (!s || !read_dec(s, &d, 0, &sticky) || sticky) return 0;
    /* more than DIG significant digits were rounded: refuse */
    *out = d;
    return 1;
}

dpa_dec dpa_dec_param(double x)
{
    char buf[40];
    int sticky;
    dpa_dec d = {0, 0};
    if (!(x > 0) || !isfinite(x)) return d;
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x) break;
    }
    read_dec(buf, &d, 0, &sticky);
    return d;
}

dpa_dec dpa_dec_from_double(double x, int up)
{
    static const int prec = 800; /* > 767: every digit of a double */
    char buf[900];
    int sticky;
    dpa_dec d = {0, 0};
    if (!(x > 0) || !isfinite(x)) return d;
    snprintf(buf, sizeof buf, "%.*e", prec, x);
    read_dec(buf, &d, up, &sticky);
    return d;
}

void dpa_dec_str(dpa_dec a, char *buf)
{
    char dig[48];
    int n = 0;
    dpa_u128 m = a.m;
    if (!m) {
        strcpy(buf, "0");
        return;
    }
    while (m) {
        dig[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    }
    char *p = buf;
    int pos = n + a.e; /* digits before the point */
    if (a.e >= 0 && pos <= 21) {
        while (n) *p++ = dig[--n];
        for (int i = 0; i < a.e; i++) *p++ = '0';
    } else if (a.e < 0 && pos > 0) {
        for (int i = 0; i < pos; i++) *p++ = dig[--n];
        *p++ = '.';
        while (n) *p++ = dig[--n];
    } else if (a.e < 0 && pos > -20) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -pos; i++) *p++ = '0';
        while (n) *p++ = dig[--n];
    } else {
        while (n) *p++ = dig[--n];
        p += sprintf(p, "e%d", a.e);
    }
    *p = 0;
}

double dpa_dec_to_double(dpa_dec a, int up)
{
    char buf[DPA_DEC_STRLEN];
    if (!a.m) return 0;
    dpa_dec_str(a, buf);
    double x = strtod(buf, NULL);
    if (up > 0) {
        if (dpa_dec_cmp(dpa_dec_from_double(x, 0), a) < 0) x = nextafter(x, INFINITY);
    } else if (dpa_dec_cmp(dpa_dec_from_double(x, 1), a) > 0) {
        x = nextafter(x, -INFINITY);
        if (x < 0) x = 0;
    }
    return x;
}

int dpa_dec_cmp(dpa_dec a, dpa_dec b)
{
    if (!a.m || !b.m) return (a.m != 0) - (b.m != 0);
    int na = ndig(a.m), nb = ndig(b.m);
    if (na + a.e != nb + b.e) return na + a.e < nb + b.e ? -1 : 1;
    dpa_u128 x = a.m, y = b.m;
    if (na < nb) x *= p10(nb - na);
    else y *= p10(na - nb);
    return (x > y) - (x < y);
}

/* aligns a and b to a common exponent: *x, *y and the exponent; y is the
 * operand with the smaller exponent, truncated when it cannot be scaled
 * (*sticky then says digits were dropped) */
static int align(dpa_dec a, dpa_dec b, dpa_u128 *x, dpa_u128 *y, int *sticky)
{
    /* a.e >= b.e */
    int k = a.e - b.e, room = DIG + 1 - ndig(a.m);
    int k1 = k < room ? k : room;
    *x = a.m * p10(k1);
    int e = a.e - k1, k2 = e - b.e;
    *sticky = 0;
    if (k2 > 38) {
        *y = 0;
        *sticky = b.m != 0;
    } else {
        dpa_u128 q = p10(k2);
        *y = b.m / q;
        *sticky = (b.m % q) != 0;
    }
    return e;
}

dpa_dec dpa_dec_add(dpa_dec a, dpa_dec b, int up)
{
    if (!a.m) return b;
    if (!b.m) return a;
    if (a.e < b.e) {
        dpa_dec t = a;
        a = b;
        b = t;
    }
    dpa_u128 x, y;
    int sticky, e = align(a, b, &x, &y, &sticky);
    return shrink(x + y, e, DIG, up, sticky);
}

dpa_dec dpa_dec_sub(dpa_dec a, dpa_dec b, int up)
{
    dpa_dec z = {0, 0};
    int c = dpa_dec_cmp(a, b);
    if (c <= 0) return z;
    if (!b.m) return a;
    dpa_u128 x, y;
    int sticky, e;
    if (a.e >= b.e) {
        e = align(a, b, &x, &y, &sticky);
        /* exact = x - y - frac, frac in [0, 1) (nonzero iff sticky) */
        dpa_u128 r = x - y;
        if (sticky && up <= 0) r -= 1;
        return shrink(r, e, DIG, up, 0);
    }
    /* b has the larger exponent: a's low digits are truncated */
    e = align(b, a, &y, &x, &sticky);
    /* exact = x + frac - y */
    dpa_u128 r = x - y;
    return shrink(r, e, DIG, up, sticky);
}

/* a * b: the operands (< 10^36) in base 10^18, the product's 72 digits as
 * p2 10^36 + p1 10^18 + p0, of which the leading 37 are kept */
dpa_dec dpa_dec_mul(dpa_dec a, dpa_dec b, int up)
{
    if (!a.m || !b.m) return norm(0, 0);
    if ((long)a.e + b.e < -EXP_MIN) return up > 0 ? norm(1, -EXP_MIN) : norm(0, 0);
    const dpa_u128 B = p10(18);
    dpa_u128 a1 = a.m / B, a0 = a.m % B, b1 = b.m / B, b0 = b.m % B;
    dpa_u128 c = a0 * b0, mid = a1 * b0 + a0 * b1 + c / B;
    dpa_u128 limb[2] = {mid % B, c % B}, m = a1 * b1 + mid / B;
    int e = a.e + b.e + 36, sticky = 0;
    for (int i = 0; i < 2; i++) { /* append the limbs' digits while m has room */
        int room = DIG + 1 - ndig(m);
        if (room > 18) room = 18;
        if (room < 0) room = 0;
        dpa_u128 q = p10(18 - room);
        m = m * p10(room) + limb[i] / q;
        sticky |= (limb[i] % q) != 0;
        e -= room;
    }
    return shrink(m, e, DIG, up, sticky);
}

/* a / b, b > 0: b to at most 18 digits (rounded against the quotient's
 * direction), then long division to 37 digits */
dpa_dec dpa_dec_div(dpa_dec a, dpa_dec b, int up)
{
    if (!a.m || !b.m) return norm(0, 0);
    dpa_dec y = b;
    int s2 = 0;
    while (ndig(y.m) > 18) {
        s2 |= (y.m % 10) != 0;
        y.m /= 10;
        y.e++;
    }
    if (up <= 0) y.m += s2; /* the denominator up: the quotient down */
    dpa_u128 q = a.m / y.m, r = a.m % y.m;
    int e = a.e - y.e;
    while (r && ndig(q) < DIG + 1) {
        q = q * 10 + (r * 10) / y.m;
        r = (r * 10) % y.m;
        e--;
    }
    return shrink(q, e, DIG, up, r != 0);
}

dpa_dec dpa_dec_pow(dpa_dec a, double k, int up)
{
    dpa_dec r = dpa_dec_int(1);
    unsigned long long n = (unsigned long long)k;
    while (n) {
        if (n & 1) r = dpa_dec_mul(r, a, up);
        n >>= 1;
        if (n) a = dpa_dec_mul(a, a, up);
        if (!a.m) return r.m && n ? norm(0, 0) : r;
    }
    return r;
}

/* D(r)^2 <= a, D the shortest decimal of r */
static int sq_fits(double r, dpa_dec a)
{
    dpa_dec d = dpa_dec_param(r);
    return dpa_dec_cmp(dpa_dec_mul(d, d, 1), a) <= 0;
}

double dpa_dec_sqrt_show(dpa_dec a)
{
    if (!a.m) return 0;
    double r = sqrt(dpa_dec_to_double(a, 0));
    for (int i = 0; i < 64 && r > 0 && !sq_fits(r, a); i++) r = nextafter(r, 0);
    for (int i = 0; i < 64 && sq_fits(nextafter(r, INFINITY), a); i++) r = nextafter(r, INFINITY);
    return r;
}
