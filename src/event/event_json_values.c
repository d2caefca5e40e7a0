/* dpacct — the JSON reader's paths and single values: a JSON path rendered
 * for messages, the messages that start with it, quoting, type names, and
 * the reading of a number or the placeholder "?".
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "event_json.h"

/* Room for any path within MAX_EVENT_DEPTH (segments are at most ~25 chars). */
#define PATH_FULL_MAX 16384

/* ---- paths and messages ---- */

static void path_append(const seg *s, char *buf, size_t cap, size_t *len)
{
    char idx[32];
    const char *txt;
    if (!s)
        return;
    path_append(s->up, buf, cap, len);
    txt = s->key;
    if (!txt) {
        snprintf(idx, sizeof idx, "%zu", s->index);
        txt = idx;
    }
    if (*len + 1 + strlen(txt) < cap)
        *len += (size_t)snprintf(buf + *len, cap - *len, "/%s", txt);
    if (s->label) {
        char q[128];
        const char *t = dpa_evj_quote(s->label, q, sizeof q);
        if (*len + 4 + strlen(t) < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, " (%s)", t);
    }
}

/* Render s as "/a/b/0/c" ("/" for the root) into out[n]; a path too long
 * keeps its head and tail around "/...". */
static void path_render(const seg *s, char *out, size_t n)
{
    char full[PATH_FULL_MAX];
    size_t len = 0, head, tail;
    full[0] = '\0';
    path_append(s, full, sizeof full, &len);
    if (len == 0) {
        snprintf(out, n, "/");
        return;
    }
    if (len < n) {
        memcpy(out, full, len + 1);
        return;
    }
    /* Cut at segment boundaries: "/a/b" + "/..." + "/y/z". */
    head = n / 4;
    while (head > 0 && full[head] != '/')
        head--;
    tail = len - (n - head - 5); /* "/..." plus the NUL */
    while (full[tail] && full[tail] != '/')
        tail++;
    snprintf(out, n, "%.*s/...%s", (int)head, full, full + tail);
}

dpa_status dpa_evj_fail(walk *w, const seg *at, const char *fmt, ...)
{
    char path[256], msg[DPA_ERROR_MESSAGE_MAX];
    va_list ap;
    path_render(at, path, sizeof path);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dpa_error_set(w->err, DPA_EINVAL, "%s: %s", path, msg);
}

/* A user-supplied string quoted for a message: at most 40 characters,
 * quotes, backslashes and control characters escaped. */
const char *dpa_evj_quote(const char *s, char *buf, size_t n)
{
    size_t j = 0;
    buf[j++] = '"';
    for (size_t i = 0; s[i] && j + 8 < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i == 40) {
            j += (size_t)snprintf(buf + j, n - j, "...");
            break;
        }
        if (ch == '"' || ch == '\\')
            j += (size_t)snprintf(buf + j, n - j, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            j += (size_t)snprintf(buf + j, n - j, "\\x%02x", ch);
        else
            buf[j++] = (char)ch;
    }
    buf[j++] = '"';
    buf[j] = '\0';
    return buf;
}

const char *dpa_evj_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

/* ---- numbers and the placeholder ---- */

int dpa_evj_is_placeholder(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) == 1 &&
           json_string_value(v)[0] == '?';
}

/* Read the number at `at` into *out.  The string "?" is the placeholder:
 * an error for a plain spec, *is_ph = 1 otherwise (MODE_INST also sets *out
 * to the template value; MODE_SCAN leaves *out for the caller). */
dpa_status dpa_evj_read_number(walk *w, json_t *v, const seg *at, double *out, int *is_ph)
{
    char first[256];
    *is_ph = 0;
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
        return DPA_OK;
    }
    if (json_is_real(v)) {
        *out = json_real_value(v);
        return DPA_OK;
    }
    if (!dpa_evj_is_placeholder(v))
        return dpa_evj_fail(w, at, "expected a number, got %s", dpa_evj_type_name(v));
    if (w->mode == MODE_SPEC)
        return dpa_evj_fail(w, at, "the placeholder \"?\" is only allowed in a calibration template");
    if (++w->found > 1) {
        snprintf(first, sizeof first, "%s", w->info.path);
        return dpa_evj_fail(w, at, "more than one \"?\" placeholder (the first is at %s); "
                    "a template has exactly one", first);
    }
    *is_ph = 1;
    if (w->mode == MODE_INST)
        *out = w->value;
    else
        path_render(at, w->info.path, sizeof w->info.path);
    return DPA_OK;
}

/* A value inside dom, substituted for the placeholder while scanning. */
double dpa_evj_feasible_point(const dpa_param_info *d)
{
    if (!d->lo_open)
        return d->lo;
    if (d->hi < DBL_MAX && !d->hi_open)
        return d->hi;
    if (d->hi >= DBL_MAX)
        return d->lo + 1;
    return d->lo + (d->hi - d->lo) / 2;
}

dpa_status dpa_evj_known_keys(walk *w, json_t *obj, const seg *at, const char *const *keys, size_t n,
                             const char *expected)
{
    const char *key;
    json_t *v;
    char q[128];
    json_object_foreach(obj, key, v) {
        size_t i = 0;
        while (i < n && strcmp(key, keys[i]))
            i++;
        if (i == n)
            return dpa_evj_fail(w, at, "unknown key %s (expected %s)", dpa_evj_quote(key, q, sizeof q), expected);
    }
    return DPA_OK;
}
