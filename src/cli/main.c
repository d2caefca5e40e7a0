/* dpacct command-line front end: entry point and error reporting.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   dpacct epsilon|delta|profile|calibrate|renyi|curve|report [OPTIONS] SPEC
 *   dpacct dpsgd --dataset-size N --batch-size B (--epochs E | --steps T) --noise S --delta D
 *   dpacct ledger SUBCOMMAND PATH [OPTIONS]
 *   dpacct help [COMMAND] | --help | --version | CMD --help
 *
 * See docs/cli.md for every command, option, output field and exit status. */
#include <fftw3.h>
#include <gsl/gsl_version.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* ------------------------------------------------------- JSON errors --- */

/* With JSON errors on, cli_fail keeps its messages here and finish() prints
 * them as one JSON object: a process-wide flag of the tool (the library has
 * no global state). */
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

/* 1 if the command line asks for JSON output: --json, --format json or
 * --format=json before any "--". */
static int wants_json(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=json") ||
            (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "json")))
            return 1;
    }
    return 0;
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

static int run_command(cli_command cmd, int argc, char **argv)
{
    cli_args *a;
    const char *text = NULL;
    char *to_free = NULL;
    int rc;

    if (cli_wants_help(argc, argv, 2)) {
        cli_print_command_help(cmd);
        return CLI_EXIT_OK;
    }
    a = malloc(sizeof *a); /* holds the value lists: too large for some stacks */
    if (!a)
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    rc = cli_parse_args(cmd, argc, argv, 2, a);
    if (rc == CLI_EXIT_OK && cmd == CLI_DPSGD)
        rc = cli_run_dpsgd(a);
    else if (rc == CLI_EXIT_OK) {
        rc = cli_read_spec(a->spec, &text, &to_free);
        if (rc == CLI_EXIT_OK) {
            cli_spec_name(text, a->spec_name, sizeof a->spec_name);
            rc = cli_run(a, text);
        }
    }
    free(to_free);
    free(a);
    return rc;
}

static void print_version(void)
{
    printf("dpacct %s\n", DPACCT_VERSION);
    /* the tool links the library statically: its version is this build's */
    printf("libdpacct %s (linked statically); FFTW %s, GSL %s, jansson %s\n", DPACCT_VERSION,
           fftw_version, gsl_version, JANSSON_VERSION);
}

static int top_level_option(const char *arg)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
        cli_print_main_help();
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "--version")) {
        print_version();
        return CLI_EXIT_OK;
    }
    cli_fail(CLI_EXIT_USAGE, "unknown option %s", arg);
    cli_print_try_help(-1);
    return CLI_EXIT_USAGE;
}

/* dpacct help [COMMAND]: the same as dpacct [COMMAND] --help. */
static int help_command(int argc, char **argv)
{
    int cmd;
    if (argc > 3) {
        cli_fail(CLI_EXIT_USAGE, "help: give at most one command, got \"%s\" and \"%s\"", argv[2], argv[3]);
        cli_print_try_help(-1);
        return CLI_EXIT_USAGE;
    }
    if (argc == 2 || !strcmp(argv[2], "help")) {
        cli_print_main_help();
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[2], "ledger")) {
        cli_print_ledger_help();
        return CLI_EXIT_OK;
    }
    cmd = cli_command_lookup(argv[2]);
    if (cmd < 0) {
        cli_fail(CLI_EXIT_USAGE, "help: unknown command \"%s\" (expected epsilon, delta, profile, "
                 "calibrate, renyi, curve, report, dpsgd or ledger)", argv[2]);
        cli_print_try_help(-1);
        return CLI_EXIT_USAGE;
    }
    cli_print_command_help((cli_command)cmd);
    return CLI_EXIT_OK;
}

static int finish(int rc)
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

int main(int argc, char **argv)
{
    int cmd;

    if (argc < 2) {
        cli_fail(CLI_EXIT_USAGE, "missing command (epsilon, delta, profile, calibrate, renyi, curve, "
                 "report, dpsgd, ledger or help)");
        cli_print_try_help(-1);
        return finish(CLI_EXIT_USAGE);
    }
    if (argv[1][0] == '-')
        return finish(top_level_option(argv[1]));
    if (!strcmp(argv[1], "help"))
        return finish(help_command(argc, argv));
    cli_set_json_errors(wants_json(argc, argv, 2));
    if (!strcmp(argv[1], "ledger"))
        return finish(cli_run_ledger(argc, argv));
    cmd = cli_command_lookup(argv[1]);
    if (cmd < 0) {
        cli_fail(CLI_EXIT_USAGE, "unknown command \"%s\" (expected epsilon, delta, "
                 "profile, calibrate, renyi, curve, report, dpsgd, ledger or help)", argv[1]);
        cli_print_try_help(-1);
        return finish(CLI_EXIT_USAGE);
    }
    return finish(run_command((cli_command)cmd, argc, argv));
}
