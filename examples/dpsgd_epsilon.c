/* The privacy of a DP-SGD training run with libdpacct: 60000 examples,
 * batches of 256 drawn by Poisson sampling, 14063 steps (60 epochs), noise
 * multiplier 1.1.  Usage: dpsgd_epsilon [sigma [steps [rate [delta]]]].
 * Build against an installed dpacct (README.md, "The C API"):
 *   cc dpsgd_epsilon.c $(pkg-config --cflags --libs dpacct) \
 *      -Wl,-rpath,"$(pkg-config --variable=libdir dpacct)" -o dpsgd_epsilon
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <dpacct/dpacct.h>

int main(int argc, char **argv)
{
    double sigma = argc > 1 ? atof(argv[1]) : 1.1;
    double steps = argc > 2 ? atof(argv[2]) : 14063;
    double rate = argc > 3 ? atof(argv[3]) : 256.0 / 60000;
    double delta = argc > 4 ? atof(argv[4]) : 1e-5;
    dpa_error err;
    /* one step: a Gaussian of sensitivity 1 on a Poisson-sampled batch, repeated;
     * constructors take ownership of their children (also when they fail) */
    dpa_event *gauss = dpa_event_gaussian(sigma, 1.0, &err);
    dpa_event *step = gauss ? dpa_event_poisson(rate, gauss, &err) : NULL;
    dpa_event *run = step ? dpa_event_repeat(steps, step, &err) : NULL;
    dpa_spec *spec = run ? dpa_spec_new(run, DPA_ADD_REMOVE, &err) : NULL;
    dpa_accountant *acct = spec ? dpa_accountant_new(spec, NULL, &err) : NULL; /* NULL: defaults */
    dpa_result r;
    if (!acct || dpa_accountant_epsilon(acct, delta, &r, &err) != DPA_OK) {
        fprintf(stderr, "dpsgd_epsilon: %s\n", err.message);
        dpa_accountant_free(acct);
        dpa_spec_free(spec);
        return 1;
    }
    /* the bounds printed in their safe directions: up >= r.upper, lo <= r.lower */
    char up[DPA_DECIMAL_BUF], lo[DPA_DECIMAL_BUF];
    dpa_decimal_format(up, sizeof up, r.upper, 6, DPA_ROUND_UP, NULL);
    dpa_decimal_format(lo, sizeof lo, r.lower, 6, DPA_ROUND_DOWN, NULL);
    printf("epsilon <= %s (certified upper bound, rounded up)\n", up);
    printf("epsilon >= %s (lower bound, rounded down)\n", lo);
    printf("at delta = %g, method %s, accuracy %s\n", delta, dpa_method_name(r.method),
           r.accuracy_met ? "met" : "not met");
    dpa_accountant_free(acct);
    dpa_spec_free(spec);
    return 0;
}
