/* dpacct ledger: what its command line (ledger_args.c) hands to the
 * subcommands (ledger.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_CLI_LEDGER_H
#define DPA_CLI_LEDGER_H

#include <stddef.h>
#include "dpacct/ledger.h"

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
    /* the budget service's commands (ledger_admin.c) */
    const char *action; /* tenant add; token create|list|revoke */
    const char *tenant, *role, *label, *id, *reason, *request, *idem_key, *period, *actor;
    const char *after, *since, *until, *limit;
    int reserve;
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

/* ledger_open.c: the chain's key of the options (*key NULL if none; an exit
 * status), the ledger opened with it (NULL after reporting, *rc the exit
 * status), and a library error reported (its exit status). */
int cli_ledger_key(const ledger_args *a, unsigned char **key, size_t *len);
dpa_ledger *cli_ledger_open(const ledger_args *a, int readonly, int *rc);
int cli_ledger_lib_fail(const dpa_error *err);
/* The budget service's subcommands (ledger_admin.c): tenant, token, freeze,
 * unfreeze, archive, topup, commit, release; -1 if a.sub is none of them. */
int cli_ledger_admin(const ledger_args *a);
/* 1 if a service option (--tenant, --role, ...) is given that subcommand
 * `sub` does not take (reported: *rc the exit status). */
int cli_ledger_stray_service_option(const ledger_args *a, int *rc);
/* add-unit with --tenant / --period, request with --idempotency-key /
 * --reserve / --actor, history with --after / --since / --until / --limit. */
int cli_ledger_add_unit_ex(const ledger_args *a, const char *config);
int cli_ledger_history_page(const ledger_args *a);

#endif
