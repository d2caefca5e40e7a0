/* dpacct command-line front end: reading the SPEC argument.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli.h"

/* Specs are small; this only stops a wrong path (a device, a huge file) from
 * eating memory. */
#define SPEC_MAX_BYTES ((size_t)64 << 20)

typedef struct buffer {
    char *data;
    size_t len, cap;
    size_t max;   /* largest text accepted */
} buffer;

/* Make room for at least `more` bytes plus a NUL; -1 on failure or over the limit. */
static int reserve(buffer *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    char *p;
    if (more > b->max - b->len)
        return -1;
    while (cap < b->len + more + 1)
        cap *= 2;
    if (cap == b->cap)
        return 0;
    p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Read the whole stream into b (NUL-terminated). 0 on success; -1 with errno
 * set to the read error, EFBIG (too large) or ENOMEM. */
static int slurp(FILE *f, buffer *b)
{
    for (;;) {
        size_t got;
        if (reserve(b, 4096)) {
            errno = b->len + 4096 > b->max ? EFBIG : ENOMEM;
            return -1;
        }
        got = fread(b->data + b->len, 1, b->cap - b->len - 1, f);
        b->len += got;
        if (got == 0) {
            if (ferror(f))
                return -1;
            break;
        }
    }
    b->data[b->len] = '\0';
    return 0;
}

static int read_failed(const char *what, int errnum, size_t max)
{
    if (errnum == ENOMEM)
        return cli_fail(CLI_EXIT_FAIL, "%s: out of memory", what);
    if (errnum == EFBIG)
        return cli_fail(CLI_EXIT_USAGE, "%s: larger than %zu MiB", what, max >> 20);
    return cli_fail(CLI_EXIT_USAGE, "%s: %s", what, strerror(errnum ? errnum : EIO));
}

static int read_stream(FILE *f, const char *what, size_t max, char **text)
{
    buffer b = {0};
    b.max = max;
    int errnum;
    errno = 0;
    if (slurp(f, &b)) {
        errnum = errno;
        free(b.data);
        return read_failed(what, errnum, max);
    }
    /* The library reads NUL-terminated text: an embedded NUL would silently
     * cut the spec short. */
    if (memchr(b.data, '\0', b.len)) {
        free(b.data);
        return cli_fail(CLI_EXIT_USAGE, "%s: contains a NUL byte; not JSON", what);
    }
    *text = b.data;
    return CLI_EXIT_OK;
}

static int read_file(const char *path, const char *kind, size_t max, char **text)
{
    char what[600];
    FILE *f;
    int rc;
    snprintf(what, sizeof what, "cannot read %s file \"%s\"", kind, path);
    f = fopen(path, "rb");
    if (!f)
        return read_failed(what, errno, max);
    rc = read_stream(f, what, max, text);
    fclose(f);
    return rc;
}

static int is_inline_json(const char *arg)
{
    while (isspace((unsigned char)*arg))
        arg++;
    return *arg == '{';
}

int cli_read_spec(const char *arg, const char **text, char **to_free)
{
    int rc;
    *text = NULL;
    *to_free = NULL;
    if (is_inline_json(arg)) {
        *text = arg;
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "-"))
        rc = read_stream(stdin, "cannot read spec from standard input", SPEC_MAX_BYTES, to_free);
    else
        rc = read_file(arg, "spec", SPEC_MAX_BYTES, to_free);
    *text = *to_free;
    return rc;
}

int cli_read_document(const char *arg, const char *kind, size_t max, const char **text, char **to_free)
{
    char what[200];
    int rc;
    *text = NULL;
    *to_free = NULL;
    if (is_inline_json(arg)) {
        *text = arg;
        return CLI_EXIT_OK;
    }
    snprintf(what, sizeof what, "cannot read %s from standard input", kind);
    if (!strcmp(arg, "-"))
        rc = read_stream(stdin, what, max, to_free);
    else
        rc = read_file(arg, kind, max, to_free);
    *text = *to_free;
    return rc;
}

void cli_spec_name(const char *text, char *buf, size_t n)
{
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    const char *name = json_string_value(json_object_get(root, "name"));
    snprintf(buf, n, "%s", name ? name : "");
    json_decref(root);
}
