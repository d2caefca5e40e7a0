/* dpacct command-line front end: entry point, which picks the command.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   dpacct epsilon|delta|profile|calibrate|renyi|curve|report [OPTIONS] SPEC
 *   dpacct dpsgd --dataset-size N --batch-size B (--epochs E | --steps T) --noise S --delta D
 *   dpacct bandmf (--coefficients L | --bands B) --noise S --iterations N (--rate Q | --epochs K) --delta D
 *   dpacct ledger SUBCOMMAND PATH [OPTIONS]
 *   dpacct serve --ledger PATH|URI [OPTIONS]
 *   dpacct help [COMMAND] | --help | --version | CMD --help
 *
 * Errors are reported through report_error.c; nothing calls back into this
 * file.  See docs/cli.md for every command, option, output field and exit status. */
#include <fftw3.h>
#include <gsl/gsl_version.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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
            rc = cmd == CLI_CURVE    ? cli_run_curve(a, text)
                 : cmd == CLI_RENYI  ? cli_run_renyi(a, text)
                 : cmd == CLI_REPORT ? cli_run_report(a, text)
                 : cmd == CLI_TAIL   ? cli_run_tail(a, text)
                                     : cli_run(a, text);
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
    if (!strcmp(argv[2], "bandmf")) {
        cli_print_bandmf_help();
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[2], "serve")) {
        cli_print_serve_help();
        return CLI_EXIT_OK;
    }
    cmd = cli_command_lookup(argv[2]);
    if (cmd < 0) {
        cli_fail(CLI_EXIT_USAGE, "help: unknown command \"%s\" (expected epsilon, delta, profile, "
                 "calibrate, renyi, curve, report, dpsgd, bandmf, ledger or serve)", argv[2]);
        cli_print_try_help(-1);
        return CLI_EXIT_USAGE;
    }
    cli_print_command_help((cli_command)cmd);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    int cmd;

    if (argc < 2) {
        cli_fail(CLI_EXIT_USAGE, "missing command (epsilon, delta, profile, calibrate, renyi, curve, "
                 "report, dpsgd, bandmf, ledger, serve or help)");
        cli_print_try_help(-1);
        return cli_finish(CLI_EXIT_USAGE);
    }
    if (argv[1][0] == '-')
        return cli_finish(top_level_option(argv[1]));
    if (!strcmp(argv[1], "help"))
        return cli_finish(help_command(argc, argv));
    cli_set_json_errors(cli_wants_json(argc, argv, 2));
    if (!strcmp(argv[1], "ledger"))
        return cli_finish(cli_run_ledger(argc, argv));
    if (!strcmp(argv[1], "bandmf"))
        return cli_finish(cli_run_bandmf(argc, argv));
    if (!strcmp(argv[1], "serve")) {
        if (cli_wants_help(argc, argv, 2)) {
            cli_print_serve_help();
            return cli_finish(CLI_EXIT_OK);
        }
        return cli_finish(cli_run_serve(argc, argv));
    }
    cmd = cli_command_lookup(argv[1]);
    if (cmd < 0) {
        cli_fail(CLI_EXIT_USAGE, "unknown command \"%s\" (expected epsilon, delta, "
                 "profile, calibrate, renyi, curve, report, dpsgd, bandmf, ledger, serve or help)", argv[1]);
        cli_print_try_help(-1);
        return cli_finish(CLI_EXIT_USAGE);
    }
    return cli_finish(run_command((cli_command)cmd, argc, argv));
}
