/* The privacy of a DP-SGD training run with libdpacct: 60000 examples,
 * batches of 256 drawn by Poisson sampling, 14063 steps (60 epochs), noise
 * multiplier 1.1.  Usage: dpsgd_epsilon [sigma [steps [rate [delta]]]].
 * Build against an installed dpacct (README.md, "The C API"):
 *   cc dpsgd_epsilon.c $(pkg-config --cflags --libs dpacct) \
 *      -Wl,-rpath,"$(pkg-config --variable=libdir dpacct)" -o dpsgd_epsilon
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpacct/dpacct.h>

/* x with `sig` (1..17) significant digits, rounded up (dir > 0) or down
 * (dir < 0), written like %g.  The digits come from x's exact decimal
 * expansion (glibc and musl print it exactly; 800 digits are more than any
 * double has): truncated, then, if a non-zero digit was dropped and
 * truncation moved the value the wrong way, one unit in the last place
 * away from zero. */
static void format_directed(char *buf, size_t n, double x, int sig, int dir)
{
    char s[1100], d[24];
    if (x == 0 || !isfinite(x)) {
        snprintf(buf, n, "%g", x);
        return;
    }
    snprintf(s, sizeof s, "%.800e", x); /* [-]d.ddd...e+XX */
    int neg = x < 0, e10 = atoi(strchr(s, 'e') + 1), len = sig;
    uint64_t m = 0, top = 1;
    const char *p = s + neg;
    for (int i = 0; i < sig; p++)
        if (*p != '.') m = 10 * m + (uint64_t)(*p - '0'), i++;
    while (*p == '0' || *p == '.') p++;
    for (int i = 1; i < sig; i++) top *= 10; /* 10^(sig-1) <= m < 10^sig */
    if (*p != 'e' && (dir > 0) != neg && ++m == 10 * top) m = top, e10++;
    snprintf(d, sizeof d, "%llu", (unsigned long long)m);
    int fixed = e10 >= -4 && e10 < sig;
    while (len > 1 && d[len - 1] == '0' && (!fixed || len > e10 + 1)) len--; /* trailing zeros */
    const char *sg = neg ? "-" : "";
    if (!fixed)
        snprintf(buf, n, "%s%c%s%.*se%+03d", sg, d[0], len > 1 ? "." : "", len - 1, d + 1, e10);
    else if (e10 >= 0)
        snprintf(buf, n, "%s%.*s%s%.*s", sg, e10 + 1, d, len > e10 + 1 ? "." : "", len - e10 - 1, d + e10 + 1);
    else
        snprintf(buf, n, "%s0.%.*s%.*s", sg, -e10 - 1, "0000", len, d);
}

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
    char up[64], lo[64];
    format_directed(up, sizeof up, r.upper, 6, +1);
    format_directed(lo, sizeof lo, r.lower, 6, -1);
    printf("epsilon <= %s (certified upper bound, rounded up)\n", up);
    printf("epsilon >= %s (lower bound, rounded down)\n", lo);
    printf("at delta = %g, method %s, accuracy %s\n", delta, dpa_method_name(r.method),
           r.accuracy_met ? "met" : "not met");
    dpa_accountant_free(acct);
    dpa_spec_free(spec);
    return 0;
}
