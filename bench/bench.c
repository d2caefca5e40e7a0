/* dpacct benchmark: per case, eps upper and lower bounds, their gap, the
 * median wall time of building an accountant and answering the query, and
 * the peak resident memory of the process that ran the case.
 * Each case runs in its own child process (fork) so that peak memory is per
 * case.  Usage: bench [repetitions (default 7)]
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "dpacct/dpacct.h"

typedef struct bench_case {
    const char *name;
    double delta;
    double target_ms;
    char *json; /* malloc'd */
} bench_case;

typedef struct bench_out {
    double upper, lower, median_ms;
    int ok;
    char msg[DPA_ERROR_MESSAGE_MAX];
} bench_out;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *hetero(int n)
{
    size_t cap = 64 + (size_t)n * 96;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t len = (size_t)snprintf(s, cap, "{\"compose\": [");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "%s{\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": %.17g}}}}",
                                i ? ", " : "", 1 + 0.01 * i);
    snprintf(s + len, cap - len, "]}");
    return s;
}

static void run_case(const bench_case *c, int reps, bench_out *o)
{
    dpa_error err;
    dpa_spec *spec = dpa_spec_from_json(c->json, &err);
    if (!spec) {
        snprintf(o->msg, sizeof o->msg, "%s", err.message);
        return;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps && t; r++) {
        double t0 = now_ms();
        dpa_accountant *a = dpa_accountant_new(spec, NULL, &err);
        dpa_result res;
        if (!a || dpa_accountant_epsilon(a, c->delta, &res, &err)) {
            snprintf(o->msg, sizeof o->msg, "%s", err.message);
            dpa_accountant_free(a);
            free(t);
            dpa_spec_free(spec);
            return;
        }
        t[r] = now_ms() - t0;
        o->upper = res.upper;
        o->lower = res.lower;
        dpa_accountant_free(a);
    }
    if (t) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        o->median_ms = t[reps / 2];
        o->ok = 1;
    }
    free(t);
    dpa_spec_free(spec);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1) reps = 1;
    bench_case cases[] = {
        {"DP-SGD: sigma 1.1, q 256/60000, 14063 steps", 1e-5, 30,
         strdup("{\"repeat\": {\"count\": 14063, \"event\": {\"poisson\": {\"rate\": 0.0042666667, "
                "\"event\": {\"gaussian\": {\"sigma\": 1.1}}}}}}")},
        {"1e6 steps: sigma 0.8, q 1e-3", 1e-6, 50,
         strdup("{\"repeat\": {\"count\": 1000000, \"event\": {\"poisson\": {\"rate\": 0.001, "
                "\"event\": {\"gaussian\": {\"sigma\": 0.8}}}}}}")},
        {"100 distinct steps: q 0.01, sigma 1 + 0.01 i", 1e-5, 100, hetero(100)},
        {"1000 distinct steps: q 0.01, sigma 1 + 0.01 i", 1e-5, 1000, hetero(1000)},
    };
    size_t n = sizeof cases / sizeof *cases;
    printf("| case | delta | eps upper | eps lower | gap | median time (ms) | target (ms) | peak memory (MB) |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        int fd[2];
        if (!cases[i].json || pipe(fd)) return 1;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            bench_out o;
            memset(&o, 0, sizeof o);
            run_case(&cases[i], reps, &o);
            ssize_t w = write(fd[1], &o, sizeof o);
            _exit(w == (ssize_t)sizeof o ? 0 : 1);
        }
        close(fd[1]);
        bench_out o;
        memset(&o, 0, sizeof o);
        ssize_t got = read(fd[0], &o, sizeof o);
        close(fd[0]);
        int status;
        struct rusage ru;
        wait4(pid, &status, 0, &ru);
        if (got != (ssize_t)sizeof o || !o.ok) {
            printf("| %s | %g | error: %s |\n", cases[i].name, cases[i].delta, o.msg);
            continue;
        }
        printf("| %s | %g | %.8f | %.8f | %.2e | %.1f | %.0f | %.1f |\n", cases[i].name, cases[i].delta,
               o.upper, o.lower, o.upper - o.lower, o.median_ms, cases[i].target_ms, (double)ru.ru_maxrss / 1024.0);
        fflush(stdout);
    }
    for (size_t i = 0; i < n; i++) free(cases[i].json);
    return 0;
}
