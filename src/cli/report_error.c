/* dpacct command-line front end: error reporting, the one place every
 * command reports through.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Messages go to stderr as "dpacct: MESSAGE".  Under JSON output (--json,
 * --format json) they are kept instead, and cli_finish prints one JSON
 * object {"error": {"message", "path", "exit_status"}} on stderr when the
 * command ends with a non-zero status.  Library statuses map to exit codes
 * here (cli_exit_for).  This file calls no other file of src/cli. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* ------------------------------------------------------- JSON errors --- */

/* With JSON errors on, cli_fail keeps its messages here and cli_finish
 * prints them as one JSON object: a process-wide flag of the tool (the
 * library has no global state). */
static int json_errors;
static json_t *error_messages; /* array of strings, in order */

void cli_set_json_errors(int on)
{
    json_errors = on;
}

int cli_json_errors(void)
{
    return json_errors;
}

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    if (json_errors) {
        char msg[2048];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (!error_messages)
            error_messages = json_array();
        /* JSON strings are UTF-8: a message quoting invalid bytes (a
         * unit name, a truncated message) gets '?' for every byte >= 0x80 */
        json_t *js = json_string(msg);
        if (!js) {
            for (char *c = msg; *c; c++)
                if ((unsigned char)*c >= 0x80)
                    *c = '?';
            js = json_string(msg);
        }
        if (!error_messages || !js || json_array_append_new(error_messages, js) != 0) {
            /* out of memory: say it the plain way */
            fprintf(stderr, "dpacct: %s\n", msg);
        }
        return code;
    }
    fputs("dpacct: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* {"error": {"message": FIRST, "path": P (when FIRST starts with a JSON
 * path "/...: "), "exit_status": RC, "messages": [...] (when several)}} */
static void print_json_error(int rc)
{
    size_t n = error_messages ? json_array_size(error_messages) : 0;
    const char *first = n ? json_string_value(json_array_get(error_messages, 0)) : NULL;
    json_t *o = json_object(), *e = json_object();
    char *text = NULL;

    if (!first)
        first = rc == CLI_EXIT_USAGE ? "bad input" : "failure";
    if (o && e) {
        json_object_set_new(e, "message", json_string(first));
        if (first[0] == '/') {
            const char *colon = strstr(first, ": ");
            if (colon)
                json_object_set_new(e, "path", json_stringn(first, (size_t)(colon - first)));
        }
        json_object_set_new(e, "exit_status", json_integer(rc));
        if (n > 1)
            json_object_set(e, "messages", error_messages);
        json_object_set(o, "error", e);
        text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    if (text)
        fprintf(stderr, "%s\n", text);
    else
        fprintf(stderr, "dpacct: %s\n", first);
    free(text);
    json_decref(e);
    json_decref(o);
}

int cli_exit_for(dpa_status s)
{
    switch (s) {
    case DPA_EINVAL:
    case DPA_EUNSUPPORTED:
    case DPA_EIO:
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_FAIL;
    }
}

int cli_fail_lib(const dpa_error *err)
{
    const char *msg = err->message[0] ? err->message : dpa_status_string(err->status);
    return cli_fail(cli_exit_for(err->status), "%s", msg);
}

int cli_library_bug(const char *what)
{
    return cli_fail(CLI_EXIT_FAIL, "internal error: the library returned %s; "
                    "this is a bug, please report it", what);
}

int cli_fail_status(dpa_status s, dpa_error *err)
{
    if (err->status == DPA_OK) /* a failing call that filled no error */
        dpa_error_set(err, s, "%s", dpa_status_string(s));
    return cli_fail_lib(err);
}

int cli_finish(int rc)
{
    /* Output that could not be written is a failure, never a silent success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == CLI_EXIT_OK)
            rc = cli_fail(CLI_EXIT_FAIL, "error writing to standard output");
    }
    if (json_errors && rc != CLI_EXIT_OK && error_messages)
        print_json_error(rc);
    else if (json_errors && error_messages) /* messages of a successful run: plain */
        for (size_t i = 0; i < json_array_size(error_messages); i++)
            fprintf(stderr, "dpacct: %s\n", json_string_value(json_array_get(error_messages, i)));
    json_decref(error_messages);
    error_messages = NULL;
    return rc;
}
