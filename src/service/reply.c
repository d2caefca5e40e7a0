/* The budget service's answers: JSON bodies, the error object of the
 * contract ({"error": {"code", "message"}}), the HTTP status of a library
 * error, and the request's own inputs (JSON body, query parameters).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

static void set_body(svc_req *r, unsigned status, char *text)
{
    free(r->resp);
    r->status = status;
    r->resp = text;
    r->resp_len = text ? strlen(text) : 0;
    r->content_type = "application/json";
}

void svc_json(svc_req *r, unsigned status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text) {
        /* the one answer built without allocating */
        set_body(r, 500, strdup("{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}"));
        return;
    }
    set_body(r, status, text);
}

void svc_json_text(svc_req *r, unsigned status, const char *text)
{
    /* the library's documents may be indented: every answer is compact */
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    char *copy = j ? NULL : strdup(text);
    if (j) {
        svc_json(r, status, j);
        return;
    }
    if (!copy) {
        svc_json(r, 500, NULL);
        return;
    }
    set_body(r, status, copy);
}

void svc_error(svc_req *r, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[DPA_ERROR_MESSAGE_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    svc_json(r, status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg));
    if (status == 401)
        r->www_auth = 1;
}

void svc_ledger_error(svc_req *r, const dpa_error *e)
{
    const char *m = e->message;
    switch (e->status) {
    case DPA_EINVAL:
        if (strstr(m, "unknown unit"))
            svc_error(r, 404, "not_found", "%s", m);
        else if (strstr(m, "frozen") || strstr(m, "archived"))
            svc_error(r, 423, "frozen", "%s", m);
        else if (strstr(m, "idempotency key reused") || strstr(m, "already exists") ||
                 strstr(m, "exists"))
            svc_error(r, 409, "conflict", "%s", m);
        else
            svc_error(r, 400, "bad_input", "%s", m);
        break;
    case DPA_EUNSUPPORTED:
        if (strstr(m, "too costly"))
            svc_error(r, 422, "too_costly", "%s", m);
        else
            svc_error(r, 422, "bad_input", "%s", m);
        break;
    case DPA_ESTORAGE:
        svc_error(r, 503, "storage", "%s", m);
        break;
    default:
        svc_error(r, 500, "internal", "%s", m[0] ? m : dpa_status_string(e->status));
        break;
    }
}

json_t *svc_body_object(svc_req *r)
{
    json_error_t je;
    json_t *j;
    if (r->body_len == 0)
        return json_object(); /* an empty body is the empty object */
    j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        svc_error(r, 400, "bad_input", "the body is not JSON: %s (line %d, column %d)", je.text, je.line,
                  je.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        svc_error(r, 400, "bad_input", "the body must be a JSON object");
        return NULL;
    }
    return j;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *svc_percent_decode(const char *s, size_t n, int plus_is_space)
{
    char *out = malloc(n + 1), *o = out;
    size_t i;
    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            *o++ = (char)(h * 16 + l);
            i += 2;
        } else if (plus_is_space && s[i] == '+')
            *o++ = ' ';
        else
            *o++ = s[i];
    }
    *o = '\0';
    if (memchr(out, '\0', (size_t)(o - out))) { /* %00: never a valid name */
        free(out);
        return NULL;
    }
    return out;
}

const char *svc_header(svc_req *r, const char *name)
{
    return r->s->mhd.MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

char *svc_query(svc_req *r, const char *name)
{
    const char *v = r->s->mhd.MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    return v ? svc_percent_decode(v, strlen(v), 1) : NULL;
}
