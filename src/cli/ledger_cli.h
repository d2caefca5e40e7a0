/* dpacct ledger: what its command line (ledger_args.c) hands to the
 * subcommands (ledger.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_CLI_LEDGER_H
#define DPA_CLI_LEDGER_H

#include <stddef.h>

#define LEDGER_MAX_UNITS_ARGS 256

/* The parsed command line: every value borrowed from argv. */
typedef struct ledger_args {
    const char *sub, *path;
    const char *filter, *config, *spec, *from;
    const char *mu, *epsilon, *delta, *rho, *order, *max_queries;
    const char *units[LEDGER_MAX_UNITS_ARGS];
    size_t nunits;
    int allow_degraded, auto_units, json;
    const char *key_file, *anchor, *time_limit;
} ledger_args;

/* argv[2..] (after "dpacct ledger") into *a: the subcommand, PATH and the
 * options, strictly (getopt_long, exact names); CLI_EXIT_OK, or the exit
 * status of a usage error already reported. */
int cli_ledger_parse(int argc, char **argv, ledger_args *a);
/* Report "ledger: " fmt (one %s: arg) as a usage error; CLI_EXIT_USAGE. */
int cli_ledger_usage(const char *fmt, const char *arg);
/* The filter configuration JSON the options give (--config, or --filter
 * and its budget options), malloc'd; NULL with *rc set when they are wrong
 * (reported), or NULL with *rc CLI_EXIT_OK when none was given. */
char *cli_ledger_filter_config(const ledger_args *a, int *rc);

/* The ledger chain's key: the bytes of key_file (a final newline dropped;
 * 1..4096 bytes) or, when key_file is NULL, DPACCT_LEDGER_KEY; none: *key
 * NULL.  An exit status (the error reported).  Also used by `dpacct serve`. */
int cli_ledger_key(const char *key_file, unsigned char **key, size_t *len);

#endif
