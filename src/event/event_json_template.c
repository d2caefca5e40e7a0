/* dpacct — calibration templates: a spec with one numeric parameter written
 * "?", scanned once (the placeholder's domain recorded, the rest validated)
 * and instantiated for any value by the same walk (event_json_read.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include "event_json.h"

struct dpa_template {
    json_t *root;        /* the parsed text, "?" included */
    dpa_param_info info;
};

dpa_template *dpa_template_from_json(const char *text, dpa_error *err)
{
    walk w = {.mode = MODE_SCAN, .err = err};
    json_t *root = dpa_evj_load_text(text, err);
    dpa_spec *s;
    dpa_template *t;
    if (!root)
        return NULL;
    s = dpa_evj_walk_spec(&w, root);
    if (!s) {
        json_decref(root);
        return NULL;
    }
    dpa_spec_free(s);
    if (w.found == 0) {
        json_decref(root);
        dpa_evj_fail(&w, NULL, "no \"?\" placeholder: a template has exactly one numeric "
             "parameter written \"?\"");
        return NULL;
    }
    t = malloc(sizeof *t);
    if (!t) {
        json_decref(root);
        dpa_error_set(err, DPA_ENOMEM, "template: out of memory");
        return NULL;
    }
    t->root = root;
    t->info = w.info;
    return t;
}

const dpa_param_info *dpa_template_param(const dpa_template *t)
{
    return t ? &t->info : NULL;
}

dpa_spec *dpa_template_instantiate(const dpa_template *t, double value, dpa_error *err)
{
    walk w = {.mode = MODE_INST, .value = value, .err = err};
    if (!t) {
        dpa_error_set(err, DPA_EINVAL, "template: NULL template");
        return NULL;
    }
    /* The walk only reads the tree, so one template may be instantiated
     * from several threads at once. */
    return dpa_evj_walk_spec(&w, t->root);
}

void dpa_template_free(dpa_template *t)
{
    if (!t)
        return;
    json_decref(t->root);
    free(t);
}
