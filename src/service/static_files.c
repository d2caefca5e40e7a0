/* The budget service's static files: the dashboard (web/) served from the
 * --web-root directory for GET requests outside /v1, "/" being index.html.
 * Only regular files below the root: a segment "." or ".." or one holding
 * "/" (decoded %2F) or starting with "." is refused, so nothing outside the
 * root (and no hidden file) is reachable.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "service_internal.h"

#define STATIC_MAX (16 * 1024 * 1024)

static const char *content_type(const char *path)
{
    static const char *const map[][2] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},   {".json", "application/json"},
        {".svg", "image/svg+xml"},             {".png", "image/png"},
        {".ico", "image/x-icon"},              {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(path, '.');
    size_t i;
    for (i = 0; dot && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(dot, map[i][0]))
            return map[i][1];
    return "application/octet-stream";
}

int svc_static(svc_req *r, const char *url)
{
    const char *root = r->s->o.web_root;
    size_t n = strlen(root) + 16, len;
    char *path, *data;
    struct stat st;
    FILE *f;
    int i;
    (void)url;
    for (i = 0; i < r->nseg; i++) {
        if (r->seg[i][0] == '.' || strchr(r->seg[i], '/'))
            return 0;
        n += strlen(r->seg[i]) + 1;
    }
    path = malloc(n);
    if (!path)
        return 0;
    strcpy(path, root);
    for (i = 0; i < r->nseg; i++) {
        strcat(path, "/");
        strcat(path, r->seg[i]);
    }
    if (r->nseg == 0 || !r->seg[r->nseg - 1][0])
        strcat(path, r->nseg == 0 ? "/index.html" : "index.html");
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > STATIC_MAX || !(f = fopen(path, "rb"))) {
        free(path);
        return 0;
    }
    data = malloc((size_t)st.st_size + 1);
    len = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!data || len != (size_t)st.st_size) {
        free(data);
        free(path);
        return 0;
    }
    data[len] = '\0';
    free(r->resp);
    r->resp = data;
    r->resp_len = len;
    r->status = 200;
    r->is_static = 1;
    r->content_type = content_type(path);
    free(path);
    return 1;
}
