/* dpacct command-line front end: the FFT plan cache (docs/cli.md).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Loaded only by runs that compose on a grid (the PLD method, calibration):
 * reading FFTW's wisdom costs a few milliseconds, which the exact methods'
 * sub-millisecond answers should not pay.  Failures only cost speed, never
 * change a result: they are ignored. */
#include "cli.h"

void cli_wisdom_begin(cli_wisdom *w)
{
    w->path = dpa_wisdom_default_path(w->buf, sizeof w->buf);
    w->fingerprint = 0;
    if (!w->path) return;
    dpa_wisdom_load(w->path, NULL);
    w->fingerprint = dpa_wisdom_fingerprint();
}

void cli_wisdom_end(cli_wisdom *w)
{
    /* save only if this run planned a new length */
    if (w->path && w->fingerprint && dpa_wisdom_fingerprint() != w->fingerprint) dpa_wisdom_save(w->path, NULL);
    w->path = NULL;
}
