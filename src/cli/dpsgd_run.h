/* dpacct command-line front end: `dpacct dpsgd`'s run description shared by
 * dpsgd.c (evaluation, calibration, output) and dpsgd_run.c (the specs a
 * run is accounted as, step counts, and the words that describe them).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_CLI_DPSGD_RUN_H
#define DPA_CLI_DPSGD_RUN_H

#include <jansson.h>
#include <stdio.h>
#include "cli.h"

/* The run, as far as it is known. */
typedef struct run_desc {
    unsigned long long n, b, t; /* dataset size, batch size, steps (0: unknown) */
    double epochs;              /* --epochs (0: not given) */
    double noise;               /* noise multiplier (0: unknown) */
    int sampling;               /* CLI_SAMPLING_* */
} run_desc;

/* Which spec of a run: the one it is accounted as (for shuffle: the
 * certified upper bound's), or shuffle's lower-bound pair. */
enum { RUN_SPEC_MAIN = 0, RUN_SPEC_LOWER = 1 };

#define SPEC_BUF 768

/* Steps per epoch: ceil(N / B) for random_allocation and shuffle (each
 * epoch visits every example once), 1 for the others (their count is in
 * steps).  The unit in which step counts are set and calibrated. */
unsigned long long dpsgd_unit(const run_desc *r);
/* The step count from --epochs (r->epochs > 0): ceil(E N / B) for poisson
 * and without_replacement, E ceil(N / B) for random_allocation and shuffle
 * (E then a whole number).  Returns CLI_EXIT_OK or reports the error. */
int dpsgd_steps_from_epochs(run_desc *r);
/* --steps T checked for the sampling (random_allocation: whole epochs). */
int dpsgd_check_steps(const run_desc *r);
/* The spec (or, with "?" for the noise or the count, the template) of the
 * run as JSON text; which: RUN_SPEC_*.  0 if the spec is empty (shuffle's
 * lower pair when no epoch is complete), 1 otherwise. */
int dpsgd_spec_text(char *buf, size_t size, const run_desc *r, int noise_q, int count_q, int which);
/* The canonical JSON of the run's spec (malloc'd), NULL on failure or empty. */
char *dpsgd_canonical_spec(const run_desc *r, int which);

/* Words: the sampling's name, its neighbouring relation. */
const char *dpsgd_sampling_name(const run_desc *r);
const char *dpsgd_neighboring(const run_desc *r);
void dpsgd_print_sampling(FILE *f, const run_desc *r);
void dpsgd_print_steps(FILE *f, const run_desc *r, const char *how);
void dpsgd_print_run_line(FILE *f, const run_desc *r, int show_noise);
/* floor(t b / n) exactly. */
unsigned long long dpsgd_whole_epochs(unsigned long long t, unsigned long long b, unsigned long long n);
/* The run's fields in a JSON object (see dpsgd.c). */
void dpsgd_put_run(json_t *o, const run_desc *r, const char *step_count, int *ok);

/* What shuffle's bracket is (text and JSON). */
#define SHUFFLE_UPPER_NOTE                                                                          \
    "upper: no amplification: each epoch uses the example once, a Gaussian release of "              \
    "sensitivity 2C, composed over the epochs the run touches (certified for any order of the data)"
#define SHUFFLE_LOWER_NOTE                                                                          \
    "lower: the exact privacy of one pair of neighbouring datasets (Chua et al. 2024: the other "   \
    "gradients -C, the replaced example +C against -C), random allocation of a shift 2C over the "  \
    "batches of each complete epoch: no accountant can certify less for shuffling"

#endif
