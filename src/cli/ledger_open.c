/* dpacct ledger: opening a ledger with the chain's key (--key-file or
 * DPACCT_LEDGER_KEY) and reporting the library's errors, for every
 * subcommand (ledger.c, ledger_admin.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ledger_cli.h"

/* The chain's key: --key-file FILE (its bytes, a final newline dropped) or
 * DPACCT_LEDGER_KEY; none: *key = NULL.  An exit status. */
#define LEDGER_MAX_KEY_BYTES 4096
int cli_ledger_key(const ledger_args *a, unsigned char **key, size_t *len)
{
    const char *env = getenv("DPACCT_LEDGER_KEY");
    *key = NULL;
    *len = 0;
    if (a->key_file) {
        FILE *f = fopen(a->key_file, "rb");
        unsigned char *buf = malloc(LEDGER_MAX_KEY_BYTES + 1);
        size_t n = 0;
        if (!f || !buf) {
            free(buf);
            if (f)
                fclose(f);
            return cli_fail(CLI_EXIT_USAGE, "ledger: cannot read the key file \"%s\": %s", a->key_file,
                            strerror(errno));
        }
        n = fread(buf, 1, LEDGER_MAX_KEY_BYTES + 1, f);
        fclose(f);
        if (n > 0 && buf[n - 1] == '\n')
            n--;
        if (n == 0 || n > LEDGER_MAX_KEY_BYTES) {
            free(buf);
            return cli_fail(CLI_EXIT_USAGE, "ledger: the key file \"%s\" must hold 1 to %d bytes", a->key_file,
                            LEDGER_MAX_KEY_BYTES);
        }
        *key = buf;
        *len = n;
    } else if (env && *env) {
        *len = strlen(env);
        *key = (unsigned char *)strdup(env);
        if (!*key)
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    return CLI_EXIT_OK;
}

/* Open the ledger with its key (read-only for status, history, verify and
 * export: a read-only file or mount can be read).  NULL after reporting. */
dpa_ledger *cli_ledger_open(const ledger_args *a, int readonly, int *rc)
{
    unsigned char *key;
    size_t len;
    dpa_error err;
    dpa_ledger *l;
    if ((*rc = cli_ledger_key(a, &key, &len)) != CLI_EXIT_OK)
        return NULL;
    l = dpa_ledger_open_keyed(a->path, readonly, key, len, &err);
    if (key)
        memset(key, 0, len);
    free(key);
    if (!l)
        *rc = cli_ledger_lib_fail(&err);
    return l;
}

int cli_ledger_lib_fail(const dpa_error *err)
{
    const char *msg = err->message[0] ? err->message : dpa_status_string(err->status);
    return cli_fail(cli_exit_for(err->status), "%s", msg);
}
