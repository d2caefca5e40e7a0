/* dpacct — status codes and error reporting.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every fallible function returns a dpa_status (or NULL for constructors) and,
 * when given a non-NULL dpa_error*, fills it with the status and a message that
 * says what was wrong and where (for specs: the JSON path).  A function never
 * prints; the caller decides what to do with the message. */
#ifndef DPACCT_STATUS_H
#define DPACCT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpa_status {
    DPA_OK = 0,
    DPA_EINVAL = 1,       /* bad input: malformed spec, parameter out of domain */
    DPA_EUNSUPPORTED = 2, /* valid input that the chosen method cannot evaluate */
    DPA_ENOMEM = 3,       /* allocation failed or a size limit was exceeded */
    DPA_ENUMERIC = 4,     /* a numerical procedure failed to produce a bound */
    DPA_EIO = 5,          /* a file could not be read */
    DPA_ESTORAGE = 6      /* the ledger's storage failed (busy beyond the timeout, disk
                           * full, a corrupt or unreachable database): nothing was
                           * recorded or charged */
} dpa_status;

#define DPA_ERROR_MESSAGE_MAX 512

typedef struct dpa_error {
    dpa_status status;
    char message[DPA_ERROR_MESSAGE_MAX];
} dpa_error;

/* A short constant name for a status ("ok", "invalid input", ...). Never NULL. */
const char *dpa_status_string(dpa_status status);

/* Set err (if non-NULL) to status and a printf-style message; returns status.
 * Truncates messages longer than DPA_ERROR_MESSAGE_MAX - 1 bytes. */
dpa_status dpa_error_set(dpa_error *err, dpa_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Reset err (if non-NULL) to DPA_OK with an empty message. */
void dpa_error_clear(dpa_error *err);

#ifdef __cplusplus
}
#endif
#endif
