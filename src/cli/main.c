/* dpacct command-line front end: entry point and error reporting.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   dpacct epsilon|delta|profile|calibrate|renyi|curve|report [OPTIONS] SPEC
 *   dpacct ledger SUBCOMMAND PATH [OPTIONS]
 *   dpacct --help | --version | CMD --help
 *
 * See docs/cli.md for every command, option, output field and exit status. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("dpacct: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
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
    cli_args a;
    const char *text;
    char *to_free;
    int rc;

    if (cli_wants_help(argc, argv, 2)) {
        cli_print_command_help(cmd);
        return CLI_EXIT_OK;
    }
    rc = cli_parse_args(cmd, argc, argv, 2, &a);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_read_spec(a.spec, &text, &to_free);
    if (rc == CLI_EXIT_OK)
        rc = cli_run(&a, text);
    free(to_free);
    return rc;
}

static int top_level_option(const char *arg)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
        cli_print_main_help();
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "--version")) {
        printf("dpacct %s\n", DPACCT_VERSION);
        return CLI_EXIT_OK;
    }
    cli_fail(CLI_EXIT_USAGE, "unknown option %s", arg);
    cli_print_try_help(-1);
    return CLI_EXIT_USAGE;
}

static int finish(int rc)
{
    /* Output that could not be written is a failure, never a silent success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == CLI_EXIT_OK)
            rc = cli_fail(CLI_EXIT_FAIL, "error writing to standard output");
    }
    return rc;
}

int main(int argc, char **argv)
{
    int cmd;

    if (argc < 2) {
        cli_fail(CLI_EXIT_USAGE, "missing command (epsilon, delta, profile, calibrate, renyi, curve, report or ledger)");
        cli_print_try_help(-1);
        return CLI_EXIT_USAGE;
    }
    if (argv[1][0] == '-')
        return finish(top_level_option(argv[1]));
    if (!strcmp(argv[1], "ledger"))
        return finish(cli_run_ledger(argc, argv));
    cmd = cli_command_lookup(argv[1]);
    if (cmd < 0) {
        cli_fail(CLI_EXIT_USAGE, "unknown command \"%s\" (expected epsilon, delta, "
                 "profile, calibrate, renyi, curve, report or ledger)", argv[1]);
        cli_print_try_help(-1);
        return CLI_EXIT_USAGE;
    }
    return finish(run_command((cli_command)cmd, argc, argv));
}
