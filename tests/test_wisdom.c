/* FFTW wisdom files (dpacct/wisdom.h): default path rules, save/load round
 * trip, bad files, the per-length plan cache of dpa_options.fft_cache_dir,
 * and results that do not depend on the wisdom.
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
#include <dirent.h>
#include <fftw3.h>
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
    /* the plan cache directory: the same rules, another name */
    setenv("DPACCT_WISDOM", "off", 1);
    CHECK(dpa_wisdom_default_dir(buf, sizeof buf) == NULL, "DPACCT_WISDOM=off must disable the cache");
    setenv("DPACCT_WISDOM", "/some/dir", 1);
    p = dpa_wisdom_default_dir(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/some/dir"), "DPACCT_WISDOM dir: %s", p ? p : "(null)");
    unsetenv("DPACCT_WISDOM");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    p = dpa_wisdom_default_dir(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/xdg/dpacct/fftw"), "XDG dir: %s", p ? p : "(null)");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    p = dpa_wisdom_default_dir(buf, sizeof buf);
    CHECK(p && !strcmp(p, "/home/u/.cache/dpacct/fftw"), "HOME dir: %s", p ? p : "(null)");
    CHECK(dpa_wisdom_default_dir(buf, 8) == NULL, "a too small buffer must give NULL");
    unsetenv("HOME");
    CHECK(dpa_wisdom_default_dir(buf, sizeof buf) == NULL, "no HOME: no dir");
}

/* eps(1e-5) of the DP-SGD-like spec with the plan cache in dir (NULL: none),
 * after FFTW has forgotten every plan (as in a new process) */
static dpa_result eps_cached(const char *dir)
{
    fftw_forget_wisdom();
    dpa_options o;
    dpa_options_init(&o);
    o.method = DPA_METHOD_PLD;
    o.fft_cache_dir = dir;
    dpa_error err;
    dpa_spec *spec = dpa_spec_from_json(DPSGD, &err);
    if (!spec) fail_msg("spec: %s", err.message);
    dpa_accountant *a = dpa_accountant_new(spec, &o, &err);
    if (!a) fail_msg("accountant: %s", err.message);
    dpa_result r;
    if (dpa_accountant_epsilon(a, 1e-5, &r, &err)) fail_msg("epsilon: %s", err.message);
    dpa_accountant_free(a);
    dpa_spec_free(spec);
    return r;
}

/* The files "fftw-<n>" of dir: count, and a signature of (name, inode,
 * size) of all of them (a rewrite renames a new file over the old one: a
 * new inode). */
static int cache_files(const char *dir, unsigned long long *sig)
{
    DIR *d = opendir(dir);
    int n = 0;
    *sig = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "fftw-", 5)) continue;
        char path[512];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) || sb.st_size <= 0) continue;
        n++;
        *sig += (unsigned long long)sb.st_ino * 1000003ULL + (unsigned long long)sb.st_size +
                strtoull(e->d_name + 5, NULL, 10) * 7919ULL;
    }
    closedir(d);
    return n;
}

static void same_result(dpa_result a, dpa_result b, const char *what)
{
    CHECK(a.upper == b.upper && a.lower == b.lower, "%s: [%.17g, %.17g] vs [%.17g, %.17g]", what, a.lower, a.upper,
          b.lower, b.upper);
}

static void test_plan_cache_dir(void **state)
{
    (void)state;
    char tmp[] = "/tmp/dpacct-plans-XXXXXX";
    if (!mkdtemp(tmp)) fail_msg("mkdtemp failed");
    char dir[300], notdir[300], under[320];
    snprintf(dir, sizeof dir, "%s/a/cache", tmp); /* missing directories are created */
    snprintf(notdir, sizeof notdir, "%s/file", tmp);
    snprintf(under, sizeof under, "%s/cache", notdir);
    unsigned long long sig1, sig2, sig3;
    dpa_result r0 = eps_cached(NULL);
    /* a new process without the cache: every length planned and saved */
    dpa_result r1 = eps_cached(dir);
    same_result(r1, r0, "with a fresh cache");
    int n1 = cache_files(dir, &sig1);
    CHECK(n1 >= 1, "no plan file written in %s", dir);
    /* the next process finds every length there: nothing planned, nothing written */
    dpa_result r2 = eps_cached(dir);
    same_result(r2, r0, "from the cache");
    int n2 = cache_files(dir, &sig2);
    CHECK(n2 == n1 && sig2 == sig1, "a run with every length cached rewrote the cache (%d -> %d files)", n1, n2);
    /* corrupt files are ignored, the lengths planned again and the files rewritten */
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "fftw-", 5)) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("(garbage", f);
            fclose(f);
        }
    }
    if (d) closedir(d);
    dpa_result r3 = eps_cached(dir);
    same_result(r3, r0, "with corrupt cache files");
    int n3 = cache_files(dir, &sig3);
    CHECK(n3 == n1 && sig3 != sig2, "corrupt files were not replaced");
    /* an unusable directory (under a regular file) only costs speed */
    FILE *f = fopen(notdir, "w");
    if (!f) fail_msg("cannot write %s", notdir);
    fclose(f);
    same_result(eps_cached(under), r0, "with an unusable cache directory");
    /* clean up */
    d = opendir(dir);
    while (d && (e = readdir(d))) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/a", tmp);
    rmdir(dir);
    remove(notdir);
    rmdir(tmp);
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
        cmocka_unit_test_setup_teardown(test_plan_cache_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
