/* Internal layout of events and specs, shared by the library's modules.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EVENT_INTERNAL_H
#define DPA_EVENT_INTERNAL_H

#include "dpacct/event.h"

/* Parameter slots in dpa_event.p, by kind:
 *   GAUSSIAN            p[0] sigma,   p[1] sensitivity
 *   LAPLACE             p[0] scale,   p[1] sensitivity
 *   DISCRETE_LAPLACE    p[0] scale,   p[1] sensitivity (integer)
 *   DISCRETE_GAUSSIAN   p[0] sigma,   p[1] sensitivity (integer)
 *   RANDOMIZED_RESPONSE p[0] epsilon
 *   PURE                p[0] epsilon
 *   APPROX              p[0] epsilon, p[1] delta
 *   ZCDP                p[0] rho
 *   GDP                 p[0] mu
 *   REPEAT              p[0] count (integer)
 *   POISSON             p[0] rate
 *   SAMPLE              p[0] n,       p[1] m (integers)
 */
struct dpa_event {
    dpa_event_kind kind;
    double p[2];
    size_t nchild;
    dpa_event **child;
};

struct dpa_spec {
    dpa_event *root;
    dpa_neighboring nb;
};

#endif
