/* The ledger's tenants and bearer tokens, and the liveness check.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Both live in the metadata table: "tenant:NAME" -> {"created","actor"} and
 * "token:SHA256HEX" -> {"id","tenant","role","label","created","actor",
 * "revoked","hash"}, with "token_id:ID" -> SHA256HEX for the revocation by id.
 * A token is 32 random bytes (OpenSSL RAND_bytes) written as 64 hex digits
 * after "dpa_"; only its SHA-256 is stored (a 256-bit random secret needs
 * no salt or slow hash: nothing can be guessed from the hash).
 * Authentication is one indexed read of "token:" + the hash of the
 * presented token, whose stored hash is then compared in constant time
 * (CRYPTO_memcmp).  Each change of these records is also a history entry of
 * the unit "" (kind "tenant", "token" or "revoke", spec {"set": {KEY:
 * VALUE}}: the records it writes), in the hash chain: verify replays them
 * and compares the records, so an edited role or an undone revocation is
 * detected.  libcrypto is loaded at run time (src/num/dynlib.h), as
 * for the hash chain (chain.c). */
#include <dlfcn.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ledger/ledger_internal.h"
#include "num/dynlib.h"

static const char *const CRYPTO_SONAMES[] = {"libcrypto.so.3", "libcrypto.so"};

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* SHA-256 of text as 64 hex digits; random bytes; constant-time compare. */
typedef struct crypto_fns {
    void *lib;
    __typeof__(&EVP_sha256) sha256;
    __typeof__(&EVP_Digest) digest;
    __typeof__(&RAND_bytes) rand_bytes;
    __typeof__(&CRYPTO_memcmp) memcmp_ct;
} crypto_fns;

static dpa_status crypto_open(crypto_fns *c, dpa_error *err)
{
    char why[256];
    memset(c, 0, sizeof *c);
    c->lib = dpa_dynlib_open(CRYPTO_SONAMES, sizeof CRYPTO_SONAMES / sizeof *CRYPTO_SONAMES, why, sizeof why);
    if (!c->lib)
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: tokens need libcrypto at run time (%s)", why);
    c->sha256 = (__typeof__(&EVP_sha256))dlsym(c->lib, "EVP_sha256");
    c->digest = (__typeof__(&EVP_Digest))dlsym(c->lib, "EVP_Digest");
    c->rand_bytes = (__typeof__(&RAND_bytes))dlsym(c->lib, "RAND_bytes");
    c->memcmp_ct = (__typeof__(&CRYPTO_memcmp))dlsym(c->lib, "CRYPTO_memcmp");
    if (!c->sha256 || !c->digest || !c->rand_bytes || !c->memcmp_ct) {
        dlclose(c->lib);
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: libcrypto lacks SHA-256 or RAND_bytes");
    }
    return DPA_OK;
}

static dpa_status sha256_hex(const crypto_fns *c, const char *text, char out[65], dpa_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (c->digest(text, strlen(text), md, &n, c->sha256(), NULL) != 1 || n != 32)
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: SHA-256 failed (libcrypto)");
    hex(md, 32, out);
    return DPA_OK;
}

static const char *role_name(int role)
{
    return role == DPA_LEDGER_ROLE_READ ? "read" : role == DPA_LEDGER_ROLE_REQUEST ? "request" : "admin";
}

static int role_of(const char *name)
{
    return !strcmp(name, "read") ? DPA_LEDGER_ROLE_READ : !strcmp(name, "request") ? DPA_LEDGER_ROLE_REQUEST
                                                                                    : DPA_LEDGER_ROLE_ADMIN;
}

static dpa_status check_actor(const char *actor, dpa_error *err)
{
    if (actor && (!*actor || strlen(actor) > DPA_LEDGER_MAX_UNIT))
        return dpa_error_set(err, DPA_EINVAL, "ledger: an actor is 1..%d bytes", DPA_LEDGER_MAX_UNIT);
    return DPA_OK;
}

/* "KEY" -> JSON text, in the caller's write transaction; also into *set,
 * the records of the event (record_event). */
static dpa_status put_json(dpa_store *s, const char *key, json_t *v, json_t *set, dpa_error *err)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    dpa_status rc = text ? s->ops->set_meta(s, key, text, err) : oom(err);
    if (rc == DPA_OK && json_object_set_new(set, key, json_string(text)) != 0)
        rc = oom(err);
    free(text);
    return rc;
}

/* The history entry of a change of tenant or token records (set: their
 * new values), chained, in the caller's write transaction. */
static dpa_status record_event(dpa_ledger *l, const char *kind, json_t *set, const char *actor, dpa_error *err)
{
    dpa_chain_key key = {l->key, l->key_len};
    dpa_store_request r;
    json_t *spec = json_pack("{s:O}", "set", set);
    char now[40], *text = spec ? json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    dpa_status rc;
    json_decref(spec);
    if (!text)
        return oom(err);
    memset(&r, 0, sizeof r);
    dpa_store_now(now);
    r.unit = "";
    r.time = now;
    r.spec = text;
    r.accepted = 1;
    r.reason = "";
    r.state_before = "";
    r.state_after = "";
    r.kind = (char *)kind;
    r.actor = (char *)(actor ? actor : "local");
    rc = dpa_ledger_chain_request(l->store, &key, &r, err);
    free(text);
    return rc;
}

static dpa_status tenant_exists(dpa_store *s, const char *tenant, int *yes, dpa_error *err)
{
    char key[DPA_LEDGER_MAX_UNIT + 16], *v = NULL;
    dpa_status rc;
    snprintf(key, sizeof key, "tenant:%s", tenant);
    rc = s->ops->get_meta(s, key, &v, err);
    *yes = v != NULL || !strcmp(tenant, "default");
    free(v);
    return rc;
}

dpa_status dpa_ledger_add_tenant(dpa_ledger *l, const char *tenant, const char *actor, dpa_error *err)
{
    char key[DPA_LEDGER_MAX_UNIT + 16], now[40];
    dpa_status rc;
    int yes = 0;
    json_t *v, *set;
    if (!l)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL ledger");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    rc = dpa_ledger_check_unit_name(tenant, err);
    if (rc == DPA_OK)
        rc = check_actor(actor, err);
    if (rc != DPA_OK)
        return rc;
    rc = l->store->ops->begin_write(l->store, err);
    if (rc != DPA_OK)
        return rc;
    rc = tenant_exists(l->store, tenant, &yes, err);
    if (rc == DPA_OK && yes)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: tenant \"%s\" already exists", tenant);
    dpa_store_now(now);
    v = json_pack("{s:s, s:s}", "created", now, "actor", actor ? actor : "local");
    set = json_object();
    snprintf(key, sizeof key, "tenant:%s", tenant);
    if (rc == DPA_OK)
        rc = v && set ? put_json(l->store, key, v, set, err) : oom(err);
    if (rc == DPA_OK)
        rc = record_event(l, "tenant", set, actor, err);
    json_decref(v);
    json_decref(set);
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    return rc;
}

dpa_status dpa_ledger_token_create(dpa_ledger *l, const char *tenant, dpa_ledger_role role, const char *label,
                                   const char *actor, char **token, char **token_id, dpa_error *err)
{
    crypto_fns c;
    unsigned char raw[32], idraw[8];
    char secret[4 + 65], idbuf[4 + 17], hash[65], key[80], now[40];
    json_t *v, *set = json_object();
    dpa_status rc;
    int yes = 0;
    if (token)
        *token = NULL;
    if (token_id)
        *token_id = NULL;
    if (!l || !tenant || !token || !token_id || !set) {
        json_decref(set);
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    }
    if (l->readonly)
        rc = dpa_ledger_read_only(err);
    else if (role < DPA_LEDGER_ROLE_READ || role > DPA_LEDGER_ROLE_ADMIN)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a token's role is read, request or admin");
    else if (label && strlen(label) > 1000)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a token's label is at most 1000 bytes");
    else
        rc = check_actor(actor, err);
    if (rc == DPA_OK)
        rc = crypto_open(&c, err);
    if (rc != DPA_OK) {
        json_decref(set);
        return rc;
    }
    if (c.rand_bytes(raw, sizeof raw) != 1 || c.rand_bytes(idraw, sizeof idraw) != 1)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: no random bytes (libcrypto RAND_bytes failed)");
    memcpy(secret, "dpa_", 4);
    hex(raw, sizeof raw, secret + 4);
    memcpy(idbuf, "tok_", 4);
    hex(idraw, sizeof idraw, idbuf + 4);
    if (rc == DPA_OK)
        rc = sha256_hex(&c, secret, hash, err);
    dlclose(c.lib);
    memset(raw, 0, sizeof raw);
    if (rc == DPA_OK)
        rc = l->store->ops->begin_write(l->store, err);
    if (rc != DPA_OK) {
        json_decref(set);
        return rc;
    }
    rc = tenant_exists(l->store, tenant, &yes, err);
    if (rc == DPA_OK && !yes)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unknown tenant \"%s\"", tenant);
    dpa_store_now(now);
    v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "id", idbuf, "tenant", tenant, "role",
                  role_name(role), "label", label ? label : "", "created", now, "actor", actor ? actor : "local",
                  "revoked", 0, "hash", hash);
    snprintf(key, sizeof key, "token:%s", hash);
    if (rc == DPA_OK)
        rc = v && set ? put_json(l->store, key, v, set, err) : oom(err);
    json_decref(v);
    snprintf(key, sizeof key, "token_id:%s", idbuf);
    if (rc == DPA_OK)
        rc = l->store->ops->set_meta(l->store, key, hash, err);
    if (rc == DPA_OK && json_object_set_new(set, key, json_string(hash)) != 0)
        rc = oom(err);
    if (rc == DPA_OK)
        rc = record_event(l, "token", set, actor, err);
    json_decref(set);
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    if (rc == DPA_OK) {
        *token = strdup(secret);
        *token_id = strdup(idbuf);
        if (!*token || !*token_id) {
            free(*token);
            free(*token_id);
            *token = *token_id = NULL;
            rc = oom(err);
        }
    }
    memset(secret, 0, sizeof secret);
    return rc;
}

dpa_status dpa_ledger_token_revoke(dpa_ledger *l, const char *token_id, const char *actor, dpa_error *err)
{
    char key[80], *hash = NULL, *text = NULL;
    json_t *v = NULL, *set = NULL;
    dpa_status rc;
    if (!l || !token_id)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    if (strlen(token_id) > 40)
        return dpa_error_set(err, DPA_EINVAL, "ledger: unknown token \"%.40s\"", token_id);
    rc = check_actor(actor, err);
    if (rc == DPA_OK)
        rc = l->store->ops->begin_write(l->store, err);
    if (rc != DPA_OK)
        return rc;
    snprintf(key, sizeof key, "token_id:%s", token_id);
    rc = l->store->ops->get_meta(l->store, key, &hash, err);
    if (rc == DPA_OK && !hash)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unknown token \"%s\"", token_id);
    if (rc == DPA_OK) {
        snprintf(key, sizeof key, "token:%.64s", hash);
        rc = l->store->ops->lock_meta(l->store, key, &text, err);
    }
    if (rc == DPA_OK && !(v = text ? json_loads(text, 0, NULL) : NULL))
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: token \"%s\" has a malformed record", token_id);
    if (rc == DPA_OK && json_is_true(json_object_get(v, "revoked")))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: token \"%s\" is already revoked", token_id);
    if (rc == DPA_OK) {
        char now[40];
        dpa_store_now(now);
        set = json_object();
        json_object_set_new(v, "revoked", json_true());
        json_object_set_new(v, "revoked_at", json_string(now));
        json_object_set_new(v, "revoked_by", json_string(actor ? actor : "local"));
        rc = set ? put_json(l->store, key, v, set, err) : oom(err);
        if (rc == DPA_OK)
            rc = record_event(l, "revoke", set, actor, err);
    }
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    json_decref(v);
    json_decref(set);
    free(text);
    free(hash);
    return rc;
}

typedef struct list_ctx {
    const char *tenant;
    json_t *arr;
} list_ctx;

static int list_token(void *vctx, const char *key, const char *value)
{
    list_ctx *c = vctx;
    json_t *v = json_loads(value, 0, NULL), *o;
    const char *tenant = json_string_value(json_object_get(v, "tenant"));
    (void)key;
    if (v && tenant && (!c->tenant || !strcmp(c->tenant, tenant))) {
        o = json_pack("{s:O, s:O, s:O, s:O, s:O, s:b}", "id", json_object_get(v, "id"), "tenant",
                      json_object_get(v, "tenant"), "role", json_object_get(v, "role"), "label",
                      json_object_get(v, "label"), "created", json_object_get(v, "created"), "revoked",
                      json_is_true(json_object_get(v, "revoked")));
        if (o)
            json_array_append_new(c->arr, o);
    }
    json_decref(v);
    return 0;
}

static int by_id(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(json_string_value(json_object_get(x, "id")), json_string_value(json_object_get(y, "id")));
}

dpa_status dpa_ledger_token_list_json(dpa_ledger *l, const char *tenant, char **json, dpa_error *err)
{
    list_ctx c = {tenant, json_array()};
    dpa_status rc;
    json_t *sorted;
    size_t n;
    json_t **items;
    if (json)
        *json = NULL;
    if (!l || !json || !c.arr) {
        json_decref(c.arr);
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    }
    rc = l->store->ops->begin_read(l->store, err);
    if (rc == DPA_OK)
        rc = l->store->ops->each_meta(l->store, "token:", list_token, &c, err);
    l->store->ops->rollback(l->store);
    /* in id order (the records are keyed by hash) */
    n = json_array_size(c.arr);
    items = malloc((n ? n : 1) * sizeof *items);
    sorted = json_array();
    if (rc == DPA_OK && (!items || !sorted))
        rc = oom(err);
    if (rc == DPA_OK) {
        for (size_t i = 0; i < n; i++)
            items[i] = json_array_get(c.arr, i);
        qsort(items, n, sizeof *items, by_id);
        for (size_t i = 0; i < n; i++)
            json_array_append(sorted, items[i]);
        *json = json_dumps(sorted, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!*json)
            rc = oom(err);
    }
    free(items);
    json_decref(sorted);
    json_decref(c.arr);
    return rc;
}

dpa_status dpa_ledger_authenticate(dpa_ledger *l, const char *token, dpa_ledger_identity *who, dpa_error *err)
{
    crypto_fns c;
    char hash[65], key[80], *text = NULL;
    json_t *v = NULL;
    dpa_status rc;
    if (who)
        memset(who, 0, sizeof *who);
    if (!l || !token || !who)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    if (strlen(token) != 68 || strncmp(token, "dpa_", 4))
        return dpa_error_set(err, DPA_EINVAL, "unknown or revoked token");
    rc = crypto_open(&c, err);
    if (rc != DPA_OK)
        return rc;
    rc = sha256_hex(&c, token, hash, err);
    snprintf(key, sizeof key, "token:%s", hash);
    if (rc == DPA_OK)
        rc = l->store->ops->get_meta(l->store, key, &text, err);
    if (rc == DPA_OK) {
        /* the row was found by its key; compare the stored hash too, in constant time */
        const char *stored;
        v = text ? json_loads(text, 0, NULL) : NULL;
        stored = json_string_value(json_object_get(v, "hash"));
        if (!v || !stored || strlen(stored) != 64 || c.memcmp_ct(stored, hash, 64) != 0 || json_is_true(json_object_get(v, "revoked")) ||
            !json_string_value(json_object_get(v, "id")) || !json_string_value(json_object_get(v, "tenant")) ||
            !json_string_value(json_object_get(v, "role")))
            rc = dpa_error_set(err, DPA_EINVAL, "unknown or revoked token");
    }
    dlclose(c.lib);
    if (rc == DPA_OK) {
        snprintf(who->token_id, sizeof who->token_id, "%s", json_string_value(json_object_get(v, "id")));
        snprintf(who->tenant, sizeof who->tenant, "%s", json_string_value(json_object_get(v, "tenant")));
        who->role = (dpa_ledger_role)role_of(json_string_value(json_object_get(v, "role")));
    }
    json_decref(v);
    free(text);
    return rc;
}

dpa_status dpa_ledger_ping(dpa_ledger *l, dpa_error *err)
{
    char *v = NULL;
    dpa_status rc;
    if (!l)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL ledger");
    rc = l->store->ops->get_meta(l->store, "format", &v, err);
    if (rc == DPA_OK && !v)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: the storage holds no ledger any more");
    free(v);
    return rc;
}
