/* FFTW wisdom files (dpacct/wisdom.h): default path rules, save/load round
 * trip, bad files, and results that do not depend on the wisdom.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "dpacct/dpacct.h"
#include "check.h"

static const char *DPSGD =
    "{\"repeat\": {\"count\": 3000, \"event\": {\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": 1.2}}}}}}";

static void test_default_path(void **state)
{
    (void)state;
    char buf[4096];
    setenv("DPACCT_WISDOM", "off", 1);
    CHECK(dpa_wisdom_default_path(buf, sizeof buf) == NULL, "DPACCT_WISDOM=off must disable the cache");
    setenv("DPACCT_WISDOM", "", 1);
    CHECK(dpa_wisdom_default_path(buf, sizeof buf) == NULL, "empty DPACCT_WISDOM must disable the cache");
    setenv("DPACCT_WISDOM", "/some/file", 1);
    const char *p = dpa_wisdom_default_path(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/some/file"), "DPACCT_WISDOM path: %s", p ? p : "(null)");
    CHECK(dpa_wisdom_default_path(buf, 5) == NULL, "a too small buffer must give NULL");
    unsetenv("DPACCT_WISDOM");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    p = dpa_wisdom_default_path(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/xdg/dpacct/fftw-wisdom"), "XDG path: %s", p ? p : "(null)");
    setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored (XDG spec) */
    setenv("HOME", "/home/u", 1);
    p = dpa_wisdom_default_path(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/home/u/.cache/dpacct/fftw-wisdom"), "HOME path: %s", p ? p : "(null)");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(dpa_wisdom_default_path(buf, sizeof buf) == NULL, "no HOME: no path");
}

static dpa_result eps_once(void)
{
    dpa_accountant *a = test_accountant(DPSGD, DPA_METHOD_PLD);
    dpa_result r;
    dpa_error err;
    if (dpa_accountant_epsilon(a, 1e-5, &r, &err)) fail_msg("epsilon: %s", err.message);
    dpa_accountant_free(a);
    return r;
}

static void test_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/dpacct-wisdom-XXXXXX";
    if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/a/b/wisdom", dir); /* missing directories are created */
    snprintf(bad, sizeof bad, "%s/bad", dir);
    dpa_error err;
    dpa_result r0 = eps_once();
    unsigned long long f0 = dpa_wisdom_fingerprint();
    CHECK(f0 != 0, "fingerprint");
    CHECK(dpa_wisdom_save(path, &err) == DPA_OK, "save: %s", err.message);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size > 0, "saved file missing or empty");
    CHECK(dpa_wisdom_load(path, &err) == DPA_OK, "load: %s", err.message);
    CHECK(dpa_wisdom_fingerprint() == f0, "loading the saved wisdom changed it");
    dpa_result r1 = eps_once();
    CHECK(r1.upper == r0.upper && r1.lower == r0.lower, "results depend on wisdom: [%.17g, %.17g] vs [%.17g, %.17g]",
          r1.lower, r1.upper, r0.lower, r0.upper);
    /* bad input: a missing file, a file that is not wisdom, NULL */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none", dir);
    CHECK(dpa_wisdom_load(missing, &err) == DPA_EIO, "missing file must be DPA_EIO");
    FILE *f = fopen(bad, "w");
    if (!f) fail_msg("cannot write %s", bad);
    fputs("(not wisdom at all", f);
    fclose(f);
    CHECK(dpa_wisdom_load(bad, &err) == DPA_EIO, "garbage must be DPA_EIO");
    CHECK(dpa_wisdom_fingerprint() == f0, "a bad file changed the wisdom");
    CHECK(dpa_wisdom_load(NULL, &err) == DPA_EINVAL, "NULL path");
    CHECK(dpa_wisdom_save(NULL, &err) == DPA_EINVAL, "NULL path");
    char unwritable[300];
    snprintf(unwritable, sizeof unwritable, "%s/wisdom", bad); /* a file as a directory */
    CHECK(dpa_wisdom_save(unwritable, &err) == DPA_EIO, "save under a file must be DPA_EIO");
    remove(path);
    remove(bad);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
