/* dpacct ledger: the budget service's commands (tenants, tokens, unit
 * lifecycle, top-up, reservations, paged history).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   dpacct ledger tenant add PATH --tenant T
 *   dpacct ledger token create PATH --tenant T --role read|request|admin [--label L]
 *   dpacct ledger token list PATH [--tenant T] [--json]
 *   dpacct ledger token revoke PATH --id ID
 *   dpacct ledger freeze|unfreeze|archive PATH --unit U [--reason R]
 *   dpacct ledger topup PATH --unit U --filter NAME BUDGET [--reason R]
 *   dpacct ledger commit|release PATH --unit U --request ID
 * and the service options of add-unit (--tenant, --period) and history
 * (--after, --since, --until, --limit). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ledger_cli.h"

/* Which subcommands take which service option. */
static const struct {
    const char *name;
    size_t off;
    const char *subs; /* space-separated, with spaces around */
} SERVICE_OPTS[] = {
    {"--tenant", offsetof(ledger_args, tenant), " add-unit tenant token "},
    {"--role", offsetof(ledger_args, role), " token "},
    {"--label", offsetof(ledger_args, label), " token "},
    {"--id", offsetof(ledger_args, id), " token "},
    {"--reason", offsetof(ledger_args, reason), " freeze unfreeze archive topup "},
    {"--request", offsetof(ledger_args, request), " commit release "},
    {"--idempotency-key", offsetof(ledger_args, idem_key), " request "},
    {"--period", offsetof(ledger_args, period), " add-unit "},
    {"--actor", offsetof(ledger_args, actor),
     " request add-unit tenant token freeze unfreeze archive topup commit release "},
    {"--after", offsetof(ledger_args, after), " history "},
    {"--since", offsetof(ledger_args, since), " history "},
    {"--until", offsetof(ledger_args, until), " history "},
    {"--limit", offsetof(ledger_args, limit), " history "},
};

int cli_ledger_stray_service_option(const ledger_args *a, int *rc)
{
    char sub[64];
    snprintf(sub, sizeof sub, " %.60s ", a->sub);
    for (size_t i = 0; i < sizeof SERVICE_OPTS / sizeof *SERVICE_OPTS; i++) {
        const char *v = *(const char *const *)((const char *)a + SERVICE_OPTS[i].off);
        if (v && !strstr(SERVICE_OPTS[i].subs, sub)) {
            char msg[120];
            snprintf(msg, sizeof msg, "%s: takes no %s", a->sub, SERVICE_OPTS[i].name);
            *rc = cli_ledger_usage("%s", msg);
            return 1;
        }
    }
    if (a->reserve && strcmp(a->sub, "request")) {
        *rc = cli_ledger_usage("%s: --reserve belongs to request", a->sub);
        return 1;
    }
    if (a->action && strcmp(a->sub, "tenant") && strcmp(a->sub, "token")) {
        *rc = cli_ledger_usage("unexpected argument \"%s\"", a->action);
        return 1;
    }
    return 0;
}

/* A whole number in [lo, hi] from text; -1 (reported) if not. */
static int whole(const char *opt, const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(text, &end, 10);
    if (end == text || *end || errno || *out < lo || *out > hi) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: a whole number in [%lld, %lld], got \"%.60s\"", opt, lo, hi, text);
        cli_ledger_usage("%s", msg);
        return -1;
    }
    return 0;
}

static int done(const ledger_args *a, const char *json_text, const char *text)
{
    if (a->json)
        printf("%s\n", json_text);
    else
        printf("%s\n", text);
    return CLI_EXIT_OK;
}

static int run_tenant(const ledger_args *a, dpa_ledger *l)
{
    dpa_error err;
    char msg[400];
    if (!a->action || strcmp(a->action, "add"))
        return cli_ledger_usage("%s", "tenant: the action is add (dpacct ledger tenant add PATH --tenant T)");
    if (!a->tenant)
        return cli_ledger_usage("%s", "tenant add needs --tenant T");
    if (dpa_ledger_add_tenant(l, a->tenant, a->actor, &err) != DPA_OK)
        return cli_ledger_lib_fail(&err);
    snprintf(msg, sizeof msg, "added tenant %s", a->tenant);
    return done(a, "{\"added\": true}", msg);
}

static int run_token(const ledger_args *a, dpa_ledger *l)
{
    dpa_error err;
    if (!a->action || (strcmp(a->action, "create") && strcmp(a->action, "list") && strcmp(a->action, "revoke")))
        return cli_ledger_usage("%s", "token: the action is create, list or revoke");
    if (!strcmp(a->action, "create")) {
        dpa_ledger_role role;
        char *tok = NULL, *id = NULL;
        if (!a->tenant || !a->role)
            return cli_ledger_usage("%s", "token create needs --tenant T and --role read|request|admin");
        if (!strcmp(a->role, "read"))
            role = DPA_LEDGER_ROLE_READ;
        else if (!strcmp(a->role, "request"))
            role = DPA_LEDGER_ROLE_REQUEST;
        else if (!strcmp(a->role, "admin"))
            role = DPA_LEDGER_ROLE_ADMIN;
        else
            return cli_ledger_usage("--role: read, request or admin, got \"%s\"", a->role);
        if (a->id)
            return cli_ledger_usage("%s", "token create: takes no --id (the id is made with the token)");
        if (dpa_ledger_token_create(l, a->tenant, role, a->label, a->actor, &tok, &id, &err) != DPA_OK)
            return cli_ledger_lib_fail(&err);
        /* the secret alone on standard output (once), the id on standard error */
        printf("%s\n", tok);
        fprintf(stderr, "token id: %s (tenant %s, role %s)\n", id, a->tenant, a->role);
        memset(tok, 0, strlen(tok));
        free(tok);
        free(id);
        return CLI_EXIT_OK;
    }
    if (!strcmp(a->action, "revoke")) {
        char msg[200];
        if (!a->id || a->tenant || a->role || a->label)
            return cli_ledger_usage("%s", "token revoke takes --id ID only");
        if (dpa_ledger_token_revoke(l, a->id, a->actor, &err) != DPA_OK)
            return cli_ledger_lib_fail(&err);
        snprintf(msg, sizeof msg, "revoked token %s", a->id);
        return done(a, "{\"revoked\": true}", msg);
    }
    {
        char *json = NULL;
        json_t *arr, *t;
        size_t i;
        if (a->role || a->label || a->id)
            return cli_ledger_usage("%s", "token list takes [--tenant T] only");
        if (dpa_ledger_token_list_json(l, a->tenant, &json, &err) != DPA_OK)
            return cli_ledger_lib_fail(&err);
        if (a->json) {
            printf("%s\n", json);
            free(json);
            return CLI_EXIT_OK;
        }
        arr = json_loads(json, 0, NULL);
        free(json);
        json_array_foreach(arr, i, t)
            printf("%s  %-8s %-7s %s%s%s\n", json_string_value(json_object_get(t, "id")),
                   json_string_value(json_object_get(t, "tenant")), json_string_value(json_object_get(t, "role")),
                   json_is_true(json_object_get(t, "revoked")) ? "revoked" : "active",
                   *json_string_value(json_object_get(t, "label")) ? "  # " : "",
                   json_string_value(json_object_get(t, "label")));
        if (json_array_size(arr) == 0)
            printf("no tokens\n");
        json_decref(arr);
        return CLI_EXIT_OK;
    }
}

static int run_unit_op(const ledger_args *a, dpa_ledger *l)
{
    dpa_error err;
    char msg[400];
    if (a->nunits != 1)
        return cli_ledger_usage("%s needs --unit U", a->sub);
    if (!strcmp(a->sub, "commit") || !strcmp(a->sub, "release")) {
        long long id;
        if (!a->request)
            return cli_ledger_usage("%s needs --request ID", a->sub);
        if (whole("--request", a->request, 1, (long long)1 << 53, &id) != 0)
            return CLI_EXIT_USAGE;
        if (dpa_ledger_reservation(l, a->units[0], id, a->sub, a->actor, &err) != DPA_OK)
            return cli_ledger_lib_fail(&err);
        snprintf(msg, sizeof msg, "%s request %lld of unit %s", !strcmp(a->sub, "commit") ? "committed" : "released",
                 id, a->units[0]);
        return done(a, !strcmp(a->sub, "commit") ? "{\"status\": \"charged\"}" : "{\"status\": \"released\"}", msg);
    }
    if (!strcmp(a->sub, "topup")) {
        int rc;
        char *config = cli_ledger_filter_config(a, &rc);
        if (rc != CLI_EXIT_OK)
            return rc;
        if (!config)
            return cli_ledger_usage("%s", "topup needs the new budget (--filter NAME and its options, or --config)");
        rc = dpa_ledger_unit_topup(l, a->units[0], config, a->actor, a->reason, &err) != DPA_OK
                 ? cli_ledger_lib_fail(&err) : CLI_EXIT_OK;
        free(config);
        if (rc != CLI_EXIT_OK)
            return rc;
        snprintf(msg, sizeof msg, "topped up unit %s", a->units[0]);
        return done(a, "{\"topped_up\": true}", msg);
    }
    if (dpa_ledger_unit_lifecycle(l, a->units[0], a->sub, a->actor, a->reason, &err) != DPA_OK)
        return cli_ledger_lib_fail(&err);
    snprintf(msg, sizeof msg, "%s unit %s", !strcmp(a->sub, "freeze") ? "froze" : !strcmp(a->sub, "unfreeze")
                                                                                   ? "unfroze" : "archived",
             a->units[0]);
    return done(a, "{\"done\": true}", msg);
}

int cli_ledger_admin(const ledger_args *a)
{
    static const char *const SUBS[] = {"tenant", "token", "freeze", "unfreeze", "archive", "topup", "commit",
                                       "release"};
    int known = 0, rc = CLI_EXIT_OK, read = 0;
    dpa_ledger *l;
    for (size_t i = 0; i < sizeof SUBS / sizeof *SUBS; i++)
        known |= !strcmp(a->sub, SUBS[i]);
    if (!known)
        return -1;
    if (cli_ledger_stray_service_option(a, &rc))
        return rc;
    if (a->spec || a->from || a->anchor || a->time_limit || a->auto_units || a->idem_key || a->reserve)
        return cli_ledger_usage("%s: takes none of --spec, --from, --anchor, --time-limit, --auto-units", a->sub);
    if (strcmp(a->sub, "topup") && (a->filter || a->config || a->mu || a->epsilon || a->delta || a->rho ||
                                    a->order || a->max_queries || a->allow_degraded))
        return cli_ledger_usage("%s: takes no filter or budget options", a->sub);
    if ((!strcmp(a->sub, "tenant") || !strcmp(a->sub, "token")) && a->nunits)
        return cli_ledger_usage("%s: takes no --unit", a->sub);
    read = !strcmp(a->sub, "token") && a->action && !strcmp(a->action, "list");
    l = cli_ledger_open(a, read, &rc);
    if (!l)
        return rc;
    if (!strcmp(a->sub, "tenant"))
        rc = run_tenant(a, l);
    else if (!strcmp(a->sub, "token"))
        rc = run_token(a, l);
    else
        rc = run_unit_op(a, l);
    dpa_ledger_close(l);
    return rc;
}

int cli_ledger_add_unit_ex(const ledger_args *a, const char *config)
{
    dpa_ledger_unit_opts o = {a->tenant, config, 0, a->actor};
    dpa_error err;
    dpa_ledger *l;
    int rc;
    if (a->period && whole("--period", a->period, 1, (long long)1 << 40, &o.period_seconds) != 0)
        return CLI_EXIT_USAGE;
    l = cli_ledger_open(a, 0, &rc);
    if (!l)
        return rc;
    rc = dpa_ledger_add_unit_ex(l, a->units[0], &o, &err) != DPA_OK ? cli_ledger_lib_fail(&err) : CLI_EXIT_OK;
    dpa_ledger_close(l);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (a->json)
        printf("{\"added\": true}\n");
    else
        printf("added unit %s%s%s\n", a->units[0], a->tenant ? " of tenant " : "", a->tenant ? a->tenant : "");
    return CLI_EXIT_OK;
}

int cli_ledger_history_page(const ledger_args *a)
{
    long long after = 0, limit = 100;
    dpa_error err;
    dpa_ledger *l;
    char *json = NULL;
    int rc;
    if ((a->after && whole("--after", a->after, 0, (long long)1 << 53, &after) != 0) ||
        (a->limit && whole("--limit", a->limit, 1, 1000, &limit) != 0))
        return CLI_EXIT_USAGE;
    l = cli_ledger_open(a, 1, &rc);
    if (!l)
        return rc;
    rc = dpa_ledger_history_page_json(l, a->nunits ? a->units[0] : NULL, after, a->since, a->until, (int)limit,
                                      &json, &err) != DPA_OK ? cli_ledger_lib_fail(&err) : CLI_EXIT_OK;
    dpa_ledger_close(l);
    if (rc == CLI_EXIT_OK)
        printf("%s\n", json);
    free(json);
    return rc;
}
