/* prv_accountant's stated values that dpacct answers exactly (numbers only,
 * with their file and test; the references evaluated with mpmath at 50
 * digits and quoted to 25):
 *   prv_accountant/tests/test_privacy_random_variables/test_approximate_dp.py,
 *   TestApproximateDP.test_zero_delta: delta at epsilon 0 of num_comp
 *   (0, delta_1)-DP steps is 1 - (1 - delta_1)^num_comp.
 * The survival-function values of its test_sf are checked in
 * tests/test_loss_tail.c.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"

static void test_zero_delta(void **state)
{
    (void)state;
    static const struct { double d1; int k; const char *ref; } cases[] = {
        {1e-7, 10000, "0.0009995002165750366071598941"},
        {1e-7, 100000, "0.009950166745856895730569116"},
        {1e-8, 10000, "0.00009999500066661250800817056"},
        {1e-8, 100000, "0.0009995001716200108853006961"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[160];
        snprintf(json, sizeof json, "{\"repeat\":{\"count\":%d,\"event\":{\"approx\":{\"epsilon\":0,\"delta\":%.17g}}}}",
                 cases[i].k, cases[i].d1);
        dpa_error err;
        dpa_spec *s = dpa_spec_from_json(json, &err);
        assert_non_null(s);
        dpa_accountant *a = dpa_accountant_new(s, NULL, &err);
        assert_non_null(a);
        dpa_result r;
        assert_int_equal(dpa_accountant_delta(a, 0, &r, &err), DPA_OK);
        /* the 25-digit reference lies within half an ulp of its double ref:
         * the truth is in [prev(ref), next(ref)], which the certified bracket
         * must meet on both sides */
        double ref = strtod(cases[i].ref, NULL);
        if (!(r.certified && r.lower <= nextafter(ref, INFINITY) && nextafter(ref, -INFINITY) <= r.upper &&
              r.upper - r.lower <= 1e-12 * ref))
            fail_msg("%s: [%.17g, %.17g] vs %s", json, r.lower, r.upper, cases[i].ref);
        dpa_accountant_free(a);
        dpa_spec_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_delta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
