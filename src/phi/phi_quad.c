/* Gauss-Legendre nodes for the phi accountant (GSL's glfixed table).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every quadrature of the phi accountant (the inner integrals over a base
 * mechanism's output and the outer inversion integrals) is composite
 * Gauss-Legendre with DPA_PHI_GL_N = 16 points per panel; the error is
 * estimated by halving every panel (docs/phi.md §5). */
#include <gsl/gsl_integration.h>
#include "phi/phi.h"
#include "num/num.h"

dpa_status dpa_phi_gl(double x[DPA_PHI_GL_N], double w[DPA_PHI_GL_N], dpa_error *err)
{
    dpa_gsl_guard g = dpa_gsl_guard_begin();
    gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(DPA_PHI_GL_N);
    if (!t) {
        dpa_gsl_guard_end(g);
        return dpa_error_set(err, DPA_ENOMEM, "phi: could not allocate a Gauss-Legendre table");
    }
    for (size_t i = 0; i < DPA_PHI_GL_N; i++) gsl_integration_glfixed_point(-1.0, 1.0, i, &x[i], &w[i], t);
    gsl_integration_glfixed_table_free(t);
    dpa_gsl_guard_end(g);
    /* GSL lists the points in an order of its own: sort ascending */
    for (size_t i = 1; i < DPA_PHI_GL_N; i++)
        for (size_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
            double a = x[j], b = w[j];
            x[j] = x[j - 1]; w[j] = w[j - 1];
            x[j - 1] = a; w[j - 1] = b;
        }
    return DPA_OK;
}
