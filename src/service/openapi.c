/* The budget service's OpenAPI document: docs/openapi.json compiled into the
 * library, served at /openapi.json.  CMakeLists.txt turns the file into a
 * list of bytes at build time (cmake/embed.cmake, no tool beyond CMake), so
 * the served document is always the one in docs/.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include "service_internal.h"

static const char openapi_doc[] = {
#include "openapi_json.inc"
    0};

const char *svc_openapi_json(void)
{
    return openapi_doc;
}
