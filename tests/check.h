/* Shared scaffolding of the cmocka tests that list every failed check
 * before failing (include after <cmocka.h>): CHECK reports a failure and
 * keeps going, setup/teardown reset the count and fail the test at its end,
 * and test_accountant() builds an accountant from JSON or fails the test.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_TESTS_CHECK_H
#define DPA_TESTS_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"

/* 1 in AddressSanitizer builds (tests then run smaller sweeps) */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The xorshift64 generator of the generated-case sweeps: a fixed seed, so
 * runs are reproducible; DPA_TEST_SEED perturbs it (test_seed_from_env). */
static inline uint64_t *test_rng_state(void)
{
    static uint64_t s = 0x9E3779B97F4A7C15ULL;
    return &s;
}
/* uniform on [0, 1) */
static inline double test_unif(void)
{
    uint64_t *s = test_rng_state();
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) * 0x1p-53;
}
/* log-uniform on [a, b], 0 < a <= b */
static inline double test_log_unif(double a, double b) { return exp(log(a) + test_unif() * (log(b) - log(a))); }
static inline void test_seed_from_env(void)
{
    if (getenv("DPA_TEST_SEED")) *test_rng_state() ^= strtoull(getenv("DPA_TEST_SEED"), NULL, 0) * 0xD1B54A32D192ED03ULL;
}

static int n_failed;
static struct timespec check_t0; /* start of the current test (timing report) */

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            print_error(__VA_ARGS__);                                           \
            print_error("\n");                                                  \
            n_failed++;                                                         \
        }                                                                       \
    } while (0)

static int setup(void **state)
{
    (void)state;
    n_failed = 0;
    clock_gettime(CLOCK_MONOTONIC, &check_t0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("  (%.2f s)\n", (double)(t1.tv_sec - check_t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - check_t0.tv_nsec));
    if (n_failed) fail_msg("%d check(s) failed (listed above)", n_failed);
    return 0;
}

/* An accountant for a JSON spec with the given method and default options. */
static inline dpa_accountant *test_accountant(const char *json, dpa_method method)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_options o;
    dpa_options_init(&o);
    o.method = method;
    dpa_accountant *a = dpa_accountant_new(s, &o, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant for %s: %s", json, err.message);
    return a;
}

/* eps at delta (test_query_epsilon) or delta at eps (test_query_delta) of a
 * JSON spec with a method and default options, from a fresh accountant;
 * fails the test on an error. */
static inline dpa_result test_query_epsilon(const char *json, dpa_method method, double delta)
{
    dpa_accountant *a = test_accountant(json, method);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, delta, &r, &err) != DPA_OK) fail_msg("%s: %s", json, err.message);
    dpa_accountant_free(a);
    return r;
}
static inline dpa_result test_query_delta(const char *json, dpa_method method, double eps)
{
    dpa_accountant *a = test_accountant(json, method);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_delta(a, eps, &r, &err) != DPA_OK) fail_msg("%s: %s", json, err.message);
    dpa_accountant_free(a);
    return r;
}

/* The same, or NULL with *err set (for specs a test expects to be refused). */
/* json parses, and the canonical writer gives it back exactly. */
static inline void test_spec_round_trip(const char *json)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("%s: %s", json, err.message);
    char *j = dpa_spec_to_json(s);
    CHECK(j && !strcmp(j, json), "round trip %s -> %s", json, j ? j : "");
    free(j);
    dpa_spec_free(s);
}

/* Long-double references for the tradeoff tests: the standard normal cdf
 * (erfcl), its inverse by 200 bisection steps (to 1e-18), and
 * G_mu(x) = Phi(Phi^-1(1 - x) - mu) (GDP eq 6; 1 at x <= 0, 0 at x >= 1). */
static inline long double test_Phi(long double x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }
static inline long double test_Phi_inv(long double p)
{
    long double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) {
        long double m = 0.5L * (lo + hi);
        if (test_Phi(m) < p) lo = m;
        else hi = m;
    }
    return 0.5L * (lo + hi);
}
static inline long double test_gauss_tradeoff(long double mu, long double x)
{
    if (x <= 0) return 1;
    if (x >= 1) return 0;
    return test_Phi(test_Phi_inv(1 - x) - mu);
}

/* json is refused, with a message containing want. */
static inline void test_spec_refused(const char *json, const char *want)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    CHECK(!s && strstr(err.message, want), "%s: got %s", json, s ? "a spec" : err.message);
    dpa_spec_free(s);
}

static inline dpa_accountant *try_accountant(const char *json, dpa_method method, dpa_error *err)
{
    dpa_spec *s = dpa_spec_from_json(json, err);
    if (!s) return NULL;
    dpa_options o;
    dpa_options_init(&o);
    o.method = method;
    dpa_accountant *a = dpa_accountant_new(s, &o, err);
    dpa_spec_free(s);
    return a;
}

#endif
