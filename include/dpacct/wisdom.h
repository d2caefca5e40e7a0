/* FFTW wisdom: keep FFT plans across processes.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The PLD method plans its FFTs with FFTW_ESTIMATE.  Within a process FFTW
 * remembers every plan, but a new process plans again, and planning one
 * length costs 3-15 ms, more than the transforms of a typical query.  FFTW's
 * "wisdom" records plans; these functions load and save it, so a short
 * process (the dpacct command) can start with the plans of earlier runs.
 * Wisdom never changes a result: a plan from wisdom computes the same
 * transform (FFTW rejects wisdom from another FFTW build or CPU).
 *
 * Two ways to keep plans: a directory with one file per FFT length, which
 * an accountant reads and writes itself when dpa_options.fft_cache_dir is
 * set (what the dpacct command does, in dpa_wisdom_default_dir): a process
 * then reads only the lengths it uses; or one file holding all of the
 * process's wisdom, loaded and saved by the caller (dpa_wisdom_load,
 * dpa_wisdom_save), which grows with every length ever planned.
 *
 * FFTW's planner state is process-global: do not call these while another
 * thread plans or uses an accountant. */
#ifndef DPACCT_WISDOM_H
#define DPACCT_WISDOM_H

#include <stddef.h>
#include "status.h"

/* The default wisdom file: $DPACCT_WISDOM if set (the value "off" or ""
 * disables the cache: returns NULL), else $XDG_CACHE_HOME/dpacct/fftw-wisdom,
 * else $HOME/.cache/dpacct/fftw-wisdom; NULL if none applies or buf (size n)
 * is too small. */
const char *dpa_wisdom_default_path(char *buf, size_t n);

/* The default plan cache directory (for dpa_options.fft_cache_dir):
 * $DPACCT_WISDOM if set (the value "off" or "" disables the cache: returns
 * NULL), else $XDG_CACHE_HOME/dpacct/fftw, else $HOME/.cache/dpacct/fftw;
 * NULL if none applies or buf (size n) is too small.  The directory need
 * not exist: it is created when a plan is first saved. */
const char *dpa_wisdom_default_dir(char *buf, size_t n);

/* Merge the wisdom in file `path` into the process's.  DPA_EIO if the file
 * cannot be read or is not FFTW wisdom (the process's wisdom is then
 * unchanged or partly merged; results are unaffected either way). */
dpa_status dpa_wisdom_load(const char *path, dpa_error *err);

/* Save the process's wisdom to `path` atomically (a temporary file in the
 * same directory, renamed over path), creating the missing directories
 * (mode 0700).  DPA_EIO on failure, path left as it was. */
dpa_status dpa_wisdom_save(const char *path, dpa_error *err);

/* A fingerprint of the process's wisdom (a hash of its text form): compare
 * before and after some work to see whether it planned anything new.
 * 0 if it cannot be computed. */
unsigned long long dpa_wisdom_fingerprint(void);

#endif
