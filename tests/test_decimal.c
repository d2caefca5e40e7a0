/* Tests of dpa_decimal_format (include/dpacct/decimal.h, src/decimal/):
 * a double printed with directed rounding.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reference: MPFR, independently of the implementation's decimal
 * expansion.  A printed string s is read with mpfr_set_str at 4096 bits,
 * rounded toward x's side: for UP, s is read rounded down (y <= s), and
 * y >= x proves s >= x exactly (x is a double, so if s >= x then the
 * largest 4096-bit number <= s is >= x); for DOWN, read rounded up and
 * y <= x.  Checked properties, for every digit count 1..17:
 *   - direction: UP >= x, DOWN <= x, exactly;
 *   - tightness: UP and DOWN are equal (x has at most `digits` digits,
 *     then equal to x) or one unit in the last digit apart, and
 *     round-to-nearest (printf "%.*e") is one of the two;
 *   - layout: the printed text has at most `digits` significant digits;
 *   - NEAREST is printf's "%.*g" up to trailing zeros.
 * Inputs: hand cases (0.1, 1e-300, denormals, 2^53 + 1, carries such as
 * 9.9999999 into a new digit, negatives, +-0, +-inf), then 20000 doubles
 * from random bit patterns and 20000 from random decimals (fixed seed).
 * Errors: NaN, digits out of range, a bad direction, NULL and too small
 * buffers are refused with DPA_EINVAL. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/dpacct.h"

#define PREC 4096

/* splitmix64: a fixed-seed generator, the same sequence everywhere */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fmt_ok(char *buf, double x, int digits, dpa_rounding dir)
{
    dpa_error err;
    dpa_status s = dpa_decimal_format(buf, DPA_DECIMAL_BUF, x, digits, dir, &err);
    if (s != DPA_OK)
        fail_msg("dpa_decimal_format(%.17g, %d, %d): %s", x, digits, (int)dir, err.message);
}

/* Significant digits of a printed number (leading zeros not counted). */
static int sig_digits(const char *s)
{
    int n = 0, started = 0;
    for (; *s && *s != 'e'; s++) {
        if (!isdigit((unsigned char)*s))
            continue;
        if (*s != '0')
            started = 1;
        if (started)
            n++;
    }
    return n ? n : 1;
}

/* x, UP and DOWN strings, nearest from printf: the properties above. */
static void check_one(double x, int digits)
{
    char up[DPA_DECIMAL_BUF], down[DPA_DECIMAL_BUF], near[DPA_DECIMAL_BUF], ref[64];
    mpfr_t u, d, n, gap, unit;
    long e10;

    fmt_ok(up, x, digits, DPA_ROUND_UP);
    fmt_ok(down, x, digits, DPA_ROUND_DOWN);
    fmt_ok(near, x, digits, DPA_ROUND_NEAREST);
    if (isinf(x) || x == 0) {
        assert_string_equal(up, isinf(x) ? (x > 0 ? "inf" : "-inf") : "0");
        assert_string_equal(down, up);
        assert_string_equal(near, up);
        return;
    }
    if (sig_digits(up) > digits || sig_digits(down) > digits)
        fail_msg("%.17g at %d digits: too many digits in %s / %s", x, digits, up, down);
    mpfr_inits2(PREC, u, d, n, gap, unit, (mpfr_ptr)0);
    assert_int_equal(mpfr_set_str(u, up, 10, MPFR_RNDD), 0);
    assert_int_equal(mpfr_set_str(d, down, 10, MPFR_RNDU), 0);
    if (mpfr_cmp_d(u, x) < 0 || mpfr_cmp_d(d, x) > 0)
        fail_msg("%.17g at %d digits: up %s, down %s not around it", x, digits, up, down);
    /* nearest, from printf (glibc rounds exactly to nearest) */
    snprintf(ref, sizeof ref, "%.*e", digits - 1, x);
    e10 = strtol(strchr(ref, 'e') + 1, NULL, 10);
    assert_int_equal(mpfr_set_str(n, ref, 10, MPFR_RNDN), 0);
    mpfr_set_str(u, up, 10, MPFR_RNDN);
    mpfr_set_str(d, down, 10, MPFR_RNDN);
    if (!mpfr_equal_p(n, u) && !mpfr_equal_p(n, d))
        fail_msg("%.17g at %d digits: nearest %s is neither %s nor %s", x, digits, ref, up, down);
    {
        /* printf's %g drops trailing zeros too (no '#' flag) */
        char near_ref[64];
        snprintf(near_ref, sizeof near_ref, "%.*g", digits, x);
        if (strcmp(near, near_ref))
            fail_msg("%.17g at %d digits: nearest %s, printf %s", x, digits, near, near_ref);
    }
    /* up - down: 0, or one unit of the last digit (the unit of the larger
     * exponent when the carry reached a new digit) */
    mpfr_sub(gap, u, d, MPFR_RNDN);
    mpfr_abs(gap, gap, MPFR_RNDN);
    if (!mpfr_zero_p(gap)) {
        char unit_text[32];
        int ok = 0;
        for (long k = e10 - digits; k <= e10 - digits + 1 && !ok; k++) {
            /* gap / 10^k == 1 up to the 4096-bit reading of the strings */
            snprintf(unit_text, sizeof unit_text, "1e%ld", k);
            mpfr_set_str(unit, unit_text, 10, MPFR_RNDN);
            mpfr_div(unit, gap, unit, MPFR_RNDN);
            mpfr_sub_ui(unit, unit, 1, MPFR_RNDN);
            ok = mpfr_zero_p(unit) || mpfr_get_exp(unit) < -4000;
        }
        /* the gap is one unit of the last digit, 10^(e10 - digits + 1), or
         * of the digit below when the carry reached a new digit (nearest
         * then has the larger exponent) */
        if (!ok)
            fail_msg("%.17g at %d digits: up %s and down %s are not one unit apart", x, digits, up, down);
    }
    /* equal strings: x has at most `digits` digits and is the value */
    if (!strcmp(up, down)) {
        mpfr_set_d(n, x, MPFR_RNDN);
        mpfr_set_str(u, up, 10, MPFR_RNDN);
        if (!mpfr_equal_p(n, u))
            fail_msg("%.17g at %d digits: up == down == %s but not x", x, digits, up);
    }
    mpfr_clears(u, d, n, gap, unit, (mpfr_ptr)0);
}

static void check_all_digits(double x)
{
    for (int digits = 1; digits <= DPA_DECIMAL_DIGITS_MAX; digits++) {
        check_one(x, digits);
        check_one(-x, digits);
    }
}

static void test_hand_cases(void **state)
{
    (void)state;
    const double xs[] = {0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1e-300, 1e300, 5e-324, 2.2250738585072009e-308,
                         DBL_MIN, DBL_MAX, 9007199254740993.0 /* 2^53 + 1, as a double 2^53 */,
                         9007199254740992.0 + 2, 9.9999999, 99999.5, 0.99999999999999989, 1.5, 4.37717809568122,
                         123456789012345678.0, 1e-5, 1e-4, 0.00099999, 1e16, 1e17, 12345.678};
    char b[DPA_DECIMAL_BUF];
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
        check_all_digits(xs[i]);
    check_all_digits(0.0);
    check_all_digits(HUGE_VAL);
    /* exact expectations */
    fmt_ok(b, 0.1, 5, DPA_ROUND_UP);
    assert_string_equal(b, "0.10001"); /* 0.1000000000000000055... */
    fmt_ok(b, 0.1, 5, DPA_ROUND_DOWN);
    assert_string_equal(b, "0.1");
    fmt_ok(b, -0.1, 5, DPA_ROUND_UP);
    assert_string_equal(b, "-0.1");
    fmt_ok(b, -0.1, 5, DPA_ROUND_DOWN);
    assert_string_equal(b, "-0.10001");
    fmt_ok(b, 9.9999999, 3, DPA_ROUND_UP);
    assert_string_equal(b, "10");
    fmt_ok(b, 9.9999999, 3, DPA_ROUND_DOWN);
    assert_string_equal(b, "9.99");
    fmt_ok(b, 999999.9, 3, DPA_ROUND_UP);
    assert_string_equal(b, "1e+06");
    fmt_ok(b, 4.37717809568122, 5, DPA_ROUND_UP);
    assert_string_equal(b, "4.3772");
    fmt_ok(b, 4.37717809568122, 5, DPA_ROUND_DOWN);
    assert_string_equal(b, "4.3771");
    fmt_ok(b, 1e-5, 5, DPA_ROUND_DOWN);
    assert_string_equal(b, "1e-05"); /* the double 1e-5 is 0.0000100000000000000008180305... */
    fmt_ok(b, 1e-5, 5, DPA_ROUND_UP);
    assert_string_equal(b, "1.0001e-05");
    fmt_ok(b, 9007199254740993.0, 17, DPA_ROUND_UP);
    assert_string_equal(b, "9007199254740992");
    fmt_ok(b, 5e-324, 3, DPA_ROUND_UP);
    assert_string_equal(b, "4.95e-324");
    fmt_ok(b, 5e-324, 3, DPA_ROUND_DOWN);
    assert_string_equal(b, "4.94e-324");
    fmt_ok(b, -0.0, 5, DPA_ROUND_DOWN);
    assert_string_equal(b, "0");
    fmt_ok(b, -HUGE_VAL, 5, DPA_ROUND_UP);
    assert_string_equal(b, "-inf");
}

static void test_random_bits(void **state)
{
    (void)state;
    uint64_t seed = 20261129;
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = next_u64(&seed);
        double x;
        memcpy(&x, &bits, sizeof x);
        if (isnan(x))
            continue;
        check_one(x, 1 + (int)(next_u64(&seed) % DPA_DECIMAL_DIGITS_MAX));
    }
}

/* Doubles near short decimals (where the rounding is closest to a tie or
 * exact): d.ddd x 10^k, and its neighbours. */
static void test_random_decimals(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (int i = 0; i < 20000; i++) {
        char text[64];
        int digits = 1 + (int)(next_u64(&seed) % DPA_DECIMAL_DIGITS_MAX);
        int len = 1 + (int)(next_u64(&seed) % 18);
        int e = (int)(next_u64(&seed) % 600) - 300;
        unsigned long long m = next_u64(&seed) % 1000000000000000000ull;
        snprintf(text, sizeof text, "%.*llue%d", len, m, e);
        double x = strtod(text, NULL);
        int step = (int)(next_u64(&seed) % 3) - 1;
        if (step)
            x = nextafter(x, step > 0 ? HUGE_VAL : 0);
        if (isfinite(x))
            check_one(next_u64(&seed) & 1 ? -x : x, digits);
    }
}

static void test_refused(void **state)
{
    (void)state;
    char b[DPA_DECIMAL_BUF];
    dpa_error err;
    assert_int_equal(dpa_decimal_format(b, sizeof b, NAN, 5, DPA_ROUND_UP, &err), DPA_EINVAL);
    assert_int_equal(err.status, DPA_EINVAL);
    assert_string_equal(b, "");
    assert_int_equal(dpa_decimal_format(b, sizeof b, -NAN, 5, DPA_ROUND_DOWN, NULL), DPA_EINVAL);
    assert_int_equal(dpa_decimal_format(b, sizeof b, 1.0, 0, DPA_ROUND_UP, &err), DPA_EINVAL);
    assert_int_equal(dpa_decimal_format(b, sizeof b, 1.0, 18, DPA_ROUND_UP, &err), DPA_EINVAL);
    assert_int_equal(dpa_decimal_format(b, sizeof b, 1.0, 5, (dpa_rounding)2, &err), DPA_EINVAL);
    assert_int_equal(dpa_decimal_format(NULL, 8, 1.0, 5, DPA_ROUND_UP, &err), DPA_EINVAL);
    /* "0.10001" needs 8 bytes */
    assert_int_equal(dpa_decimal_format(b, 7, 0.1, 5, DPA_ROUND_UP, &err), DPA_EINVAL);
    assert_string_equal(b, "");
    assert_int_equal(dpa_decimal_format(b, 8, 0.1, 5, DPA_ROUND_UP, &err), DPA_OK);
    assert_string_equal(b, "0.10001");
    assert_int_equal(dpa_decimal_format(b, 0, 0.1, 5, DPA_ROUND_UP, &err), DPA_EINVAL);
    /* the longest text fits DPA_DECIMAL_BUF */
    assert_int_equal(dpa_decimal_format(b, sizeof b, -2.2250738585072014e-308, 17, DPA_ROUND_DOWN, &err), DPA_OK);
    assert_int_equal(dpa_decimal_format(b, sizeof b, -0.00012345678901234567, 17, DPA_ROUND_DOWN, &err), DPA_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_random_bits),
        cmocka_unit_test(test_random_decimals),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
