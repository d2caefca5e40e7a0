/* The ledger's hash chain: SHA-256, or HMAC-SHA-256 under a secret key.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every record that makes a ledger's history enters one chain, in commit
 * order: the metadata (genesis), each unit as added (its name, filter
 * configuration, initial state, creation time, its number among the units
 * and the last request id before it; format 3: its tenant and period) and
 * each history entry (every stored field, its id included; format 3: its
 * kind, actor, idempotency key, generation and the reservation it settles).
 * A link is
 *
 *   h_k = H(key; "dpacct-chain 1" | h_{k-1} | len(f_1) | f_1 | ... | len(f_m) | f_m)
 *
 * with h_0 = 64 zeros, lengths as 8-byte big-endian integers (so no two
 * field lists have the same encoding) and H SHA-256 (no key) or
 * HMAC-SHA-256 (a key).  The hashes come from OpenSSL's libcrypto, a
 * maintained implementation (docs/ledger.md: the threat model), loaded with
 * dlopen when a link is computed, as libpq and cairo are (src/num/dynlib.h):
 * linked, it cost every process (every `dpacct epsilon`, every Python
 * import) about 1.3 ms of start-up for a library only ledgers use.  Every
 * call opens it anew: after the first, dlopen only finds the mapped library
 * (microseconds, against a ledger transaction's milliseconds), and nothing is
 * kept between calls. */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ledger/chain.h"
#include "num/dynlib.h"

/* libcrypto's run-time names (Debian 12: libssl3), then the development link */
static const char *const CRYPTO_SONAMES[] = {"libcrypto.so.3", "libcrypto.so"};

static const char TAG[] = "dpacct-chain 1";

dpa_status dpa_chain_link(const dpa_chain_key *key, const char *prev, const char *const *fields,
                          size_t nfields, char out[DPA_CHAIN_HEX], dpa_error *err)
{
    size_t n = sizeof TAG - 1 + DPA_CHAIN_HEX - 1, off = 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    unsigned char *buf;
    int ok;
    for (size_t i = 0; i < nfields; i++)
        n += 8 + strlen(fields[i]);
    buf = malloc(n);
    if (!buf)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    memcpy(buf, TAG, sizeof TAG - 1);
    off = sizeof TAG - 1;
    memcpy(buf + off, prev, DPA_CHAIN_HEX - 1);
    off += DPA_CHAIN_HEX - 1;
    for (size_t i = 0; i < nfields; i++) {
        unsigned long long len = strlen(fields[i]);
        for (int b = 7; b >= 0; b--)
            buf[off++] = (unsigned char)(len >> (8 * b));
        memcpy(buf + off, fields[i], (size_t)len);
        off += (size_t)len;
    }
    char why[256];
    void *lib = dpa_dynlib_open(CRYPTO_SONAMES, sizeof CRYPTO_SONAMES / sizeof *CRYPTO_SONAMES, why, sizeof why);
    if (!lib) {
        free(buf);
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: the hash chain needs libcrypto at run time (%s); on "
                             "Debian install libssl3", why);
    }
    __typeof__(&EVP_sha256) sha256 = (__typeof__(&EVP_sha256))dlsym(lib, "EVP_sha256");
    __typeof__(&HMAC) hmac = (__typeof__(&HMAC))dlsym(lib, "HMAC");
    __typeof__(&EVP_Digest) digest = (__typeof__(&EVP_Digest))dlsym(lib, "EVP_Digest");
    if (!sha256 || !hmac || !digest)
        ok = 0;
    else if (key && key->len)
        ok = hmac(sha256(), key->data, (int)key->len, buf, n, md, &mdlen) != NULL;
    else
        ok = digest(buf, n, md, &mdlen, sha256(), NULL) == 1;
    dlclose(lib);
    free(buf);
    if (!ok || mdlen != 32)
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: SHA-256 failed (libcrypto)");
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return DPA_OK;
}

dpa_status dpa_chain_key_check(const dpa_chain_key *key, char out[DPA_CHAIN_HEX], dpa_error *err)
{
    static const char *const what[] = {"dpacct ledger key check"};
    return dpa_chain_link(key, DPA_CHAIN_ZERO, what, 1, out, err);
}

dpa_status dpa_chain_unit(const dpa_chain_key *key, const char *prev, const dpa_store_unit *u,
                          char out[DPA_CHAIN_HEX], dpa_error *err)
{
    char idx[32], after[32], per[32];
    const char *f[9];
    snprintf(idx, sizeof idx, "%lld", u->chain_index);
    snprintf(after, sizeof after, "%lld", u->chain_after);
    snprintf(per, sizeof per, "%lld", u->period_seconds);
    f[0] = "unit"; f[1] = u->name; f[2] = u->filter; f[3] = u->initial_state; f[4] = u->created;
    f[5] = idx; f[6] = after; f[7] = u->tenant ? u->tenant : "default"; f[8] = per;
    return dpa_chain_link(key, prev, f, 9, out, err);
}

dpa_status dpa_chain_request(const dpa_chain_key *key, const char *prev, const dpa_store_request *r,
                             char out[DPA_CHAIN_HEX], dpa_error *err)
{
    char id[32], gen[32], ref[32];
    const char *f[14];
    snprintf(id, sizeof id, "%lld", r->id);
    snprintf(gen, sizeof gen, "%lld", r->generation);
    snprintf(ref, sizeof ref, "%lld", r->ref);
    f[0] = "request"; f[1] = id; f[2] = r->unit; f[3] = r->time; f[4] = r->spec;
    f[5] = r->accepted ? "accepted" : "rejected"; f[6] = r->reason ? r->reason : "";
    f[7] = r->state_before; f[8] = r->state_after;
    /* format 3 ("" for no key: keys are 1..200 bytes) */
    f[9] = r->kind ? r->kind : "request"; f[10] = r->actor ? r->actor : "local";
    f[11] = r->idem_key ? r->idem_key : ""; f[12] = gen; f[13] = ref;
    return dpa_chain_link(key, prev, f, 14, out, err);
}

/* The metadata that enters the genesis link, in this order. */
const char *const DPA_CHAIN_META_KEYS[DPA_CHAIN_NMETA] = {
    "format", "default_filter", "auto_units", "created", "dpacct_version", "chain", "key_check"};

dpa_status dpa_chain_genesis(const dpa_chain_key *key, const char *const values[DPA_CHAIN_NMETA],
                             char out[DPA_CHAIN_HEX], dpa_error *err)
{
    const char *f[1 + 2 * DPA_CHAIN_NMETA];
    f[0] = "meta";
    for (int i = 0; i < DPA_CHAIN_NMETA; i++) {
        f[1 + 2 * i] = DPA_CHAIN_META_KEYS[i];
        f[2 + 2 * i] = values[i] ? values[i] : "";
    }
    return dpa_chain_link(key, DPA_CHAIN_ZERO, f, 1 + 2 * DPA_CHAIN_NMETA, out, err);
}

int dpa_chain_head_parse(const char *text, dpa_chain_head *h)
{
    int used = 0;
    memset(h, 0, sizeof *h);
    if (!text || sscanf(text, "%lld %lld %lld %64[0-9a-f]%n", &h->links, &h->last_request, &h->units, h->hash,
                        &used) != 4 || text[used] != '\0' || strlen(h->hash) != 64)
        return -1;
    return 0;
}

void dpa_chain_head_format(const dpa_chain_head *h, char *buf, size_t n)
{
    snprintf(buf, n, "%lld %lld %lld %s", h->links, h->last_request, h->units, h->hash);
}
