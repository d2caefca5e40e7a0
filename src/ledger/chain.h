/* The ledger's hash chain (internal): chain.c.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEDGER_CHAIN_H
#define DPA_LEDGER_CHAIN_H

#include <stddef.h>
#include "dpacct/status.h"
#include "ledger/store.h"

#define DPA_CHAIN_HEX 65 /* 64 hex digits and a NUL */
#define DPA_CHAIN_ZERO "0000000000000000000000000000000000000000000000000000000000000000"

/* A secret key (len 0: no key, plain SHA-256); borrowed.  format2 = 1: the
 * links of format 2 (without format 3's fields: verify of a format-2 ledger
 * before its upgrade); 0 (as brace initialisers leave it): format 3. */
typedef struct dpa_chain_key {
    const unsigned char *data;
    size_t len;
    int format2;
} dpa_chain_key;

/* The head of a ledger's chain (meta "chain_head": "LINKS LAST_REQUEST UNITS HASH"):
 * the number of links after the genesis, the last request id and the number
 * of units in the chain, and the last hash. */
typedef struct dpa_chain_head {
    long long links, last_request, units;
    char hash[DPA_CHAIN_HEX];
} dpa_chain_head;

/* out = H(key; tag | prev | the fields, length-prefixed). */
dpa_status dpa_chain_link(const dpa_chain_key *key, const char *prev, const char *const *fields,
                          size_t nfields, char out[DPA_CHAIN_HEX], dpa_error *err);
/* The link of a unit (its immutable fields, chain_index and chain_after). */
dpa_status dpa_chain_unit(const dpa_chain_key *key, const char *prev, const dpa_store_unit *u,
                          char out[DPA_CHAIN_HEX], dpa_error *err);
/* The link of a request (every field). */
dpa_status dpa_chain_request(const dpa_chain_key *key, const char *prev, const dpa_store_request *r,
                             char out[DPA_CHAIN_HEX], dpa_error *err);
/* The metadata of the genesis link (values in this order; NULL as ""). */
#define DPA_CHAIN_NMETA 7
extern const char *const DPA_CHAIN_META_KEYS[DPA_CHAIN_NMETA];
dpa_status dpa_chain_genesis(const dpa_chain_key *key, const char *const values[DPA_CHAIN_NMETA],
                             char out[DPA_CHAIN_HEX], dpa_error *err);
/* HMAC of a fixed text under the key (meta "key_check": a wrong key is
 * refused before it writes). */
dpa_status dpa_chain_key_check(const dpa_chain_key *key, char out[DPA_CHAIN_HEX], dpa_error *err);

int dpa_chain_head_parse(const char *text, dpa_chain_head *h);
void dpa_chain_head_format(const dpa_chain_head *h, char *buf, size_t n);

#endif
