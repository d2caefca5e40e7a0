/* FFTW wisdom files (dpacct/wisdom.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dpacct/wisdom.h"

/* $DPACCT_WISDOM, else <cache home>/dpacct/<name> */
static const char *default_location(char *buf, size_t n, const char *name)
{
    const char *env = getenv("DPACCT_WISDOM");
    int w;
    if (env) {
        if (!*env || strcmp(env, "off") == 0) return NULL;
        w = snprintf(buf, n, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env == '/') {
        w = snprintf(buf, n, "%s/dpacct/%s", env, name);
    } else if ((env = getenv("HOME")) && *env == '/') {
        w = snprintf(buf, n, "%s/.cache/dpacct/%s", env, name);
    } else {
        return NULL;
    }
    return (w > 0 && (size_t)w < n) ? buf : NULL;
}

const char *dpa_wisdom_default_path(char *buf, size_t n)
{
    return default_location(buf, n, "fftw-wisdom");
}

const char *dpa_wisdom_default_dir(char *buf, size_t n)
{
    return default_location(buf, n, "fftw");
}

dpa_status dpa_wisdom_load(const char *path, dpa_error *err)
{
    if (!path) return dpa_error_set(err, DPA_EINVAL, "wisdom: path is NULL");
    FILE *f = fopen(path, "r");
    if (!f) return dpa_error_set(err, DPA_EIO, "wisdom: cannot open %s: %s", path, strerror(errno));
    int ok = fftw_import_wisdom_from_file(f);
    fclose(f);
    if (!ok) return dpa_error_set(err, DPA_EIO, "wisdom: %s is not FFTW wisdom of this FFTW build", path);
    return DPA_OK;
}

/* mkdir -p of the directories above path */
static int make_parents(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int bad = mkdir(path, 0700) != 0 && errno != EEXIST;
        *p = '/';
        if (bad) return -1;
    }
    return 0;
}

dpa_status dpa_wisdom_save(const char *path, dpa_error *err)
{
    if (!path) return dpa_error_set(err, DPA_EINVAL, "wisdom: path is NULL");
    size_t n = strlen(path);
    char *dir = malloc(n + 1), *tmp = malloc(n + 32);
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    memcpy(dir, path, n + 1);
    make_parents(dir); /* a failure shows at fopen */
    free(dir);
    snprintf(tmp, n + 32, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    dpa_status st = DPA_OK;
    if (!f) {
        st = dpa_error_set(err, DPA_EIO, "wisdom: cannot write %s: %s", tmp, strerror(errno));
    } else {
        fftw_export_wisdom_to_file(f);
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) {
            st = dpa_error_set(err, DPA_EIO, "wisdom: error writing %s", tmp);
        } else if (rename(tmp, path) != 0) {
            st = dpa_error_set(err, DPA_EIO, "wisdom: cannot rename %s to %s: %s", tmp, path, strerror(errno));
        }
        if (st) remove(tmp);
    }
    free(tmp);
    return st;
}

unsigned long long dpa_wisdom_fingerprint(void)
{
    char *s = fftw_export_wisdom_to_string();
    if (!s) return 0;
    /* FNV-1a, 64 bit */
    unsigned long long h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    fftw_free(s);
    return h ? h : 1;
}
