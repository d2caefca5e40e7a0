# dpacct Python binding: loading libdpacct and declaring its C API (ctypes).
# SPDX-License-Identifier: GPL-3.0-or-later
"""Low-level access to the shared library (private: use the package's API).

The structures below mirror the public headers in include/dpacct/ field for
field (accountant.h, calibrate.h, event.h, renyi.h, status.h); every enum is
a C int.  python/tests/test_layout.py compiles a small C program against the headers
and compares every size and offset with these declarations.

Library lookup (first hit wins):
  1. $DPACCT_LIBRARY: the path of libdpacct.so (an error if it does not load);
  2. the copy bundled by the wheel: _libs/libdpacct.so.0 in this package's
     directory, with its FFTW, GSL, jansson and sqlite3 beside it (found
     through its RUNPATH $ORIGIN; docs/python.md, "Install");
  3. a build tree of a source checkout: <checkout>/build/libdpacct.so, where
     <checkout> is the parent of the python/ directory holding this package;
  4. the system: ctypes.util.find_library("dpacct") (the ldconfig cache,
     after `cmake --install build` and `ldconfig`), then libdpacct.so.0 and
     libdpacct.so through the dynamic loader's own search (LD_LIBRARY_PATH),
     then /usr/local/lib and /usr/lib (and their multiarch directories).

Every call into the library runs under one process-wide lock: FFTW's planner
and GSL's error-handler switch are process-global (accountant.h, "Thread
safety"), so Python threads must not enter the library at the same time.
"""
import ctypes
import ctypes.util
import os
import threading

from ._errors import LibraryNotFoundError, error_from_status, python_message

c_double_p = ctypes.POINTER(ctypes.c_double)

DPA_ERROR_MESSAGE_MAX = 512


class dpa_error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int),
                ("message", ctypes.c_char * DPA_ERROR_MESSAGE_MAX)]


class dpa_options(ctypes.Structure):
    _fields_ = [("method", ctypes.c_int),
                ("accuracy", ctypes.c_double),
                ("delta_abs", ctypes.c_double),
                ("grid_step", ctypes.c_double),
                ("max_grid", ctypes.c_size_t),
                ("threads", ctypes.c_int),
                ("rdp_conversion", ctypes.c_int),
                ("fft_cache_dir", ctypes.c_char_p)]


class dpa_result(ctypes.Structure):
    _fields_ = [("upper", ctypes.c_double),
                ("lower", ctypes.c_double),
                ("upper_remove", ctypes.c_double),
                ("upper_add", ctypes.c_double),
                ("binding", ctypes.c_int),
                ("method", ctypes.c_int),
                ("grid_step", ctypes.c_double),
                ("grid_size", ctypes.c_size_t),
                ("truncated_mass", ctypes.c_double),
                ("roundoff", ctypes.c_double),
                ("accuracy_met", ctypes.c_int),
                ("upper_source", ctypes.c_int),
                ("certified", ctypes.c_int),
                ("order", ctypes.c_double),
                ("note", ctypes.c_char * 160),
                ("lower_remove", ctypes.c_double),
                ("lower_add", ctypes.c_double)]


class dpa_loss_tail(ctypes.Structure):
    _fields_ = [("t", ctypes.c_double),
                ("direction", ctypes.c_int),
                ("sf_lower", ctypes.c_double),
                ("sf_upper", ctypes.c_double),
                ("cdf_lower", ctypes.c_double),
                ("cdf_upper", ctypes.c_double),
                ("certified", ctypes.c_int),
                ("method", ctypes.c_int),
                ("note", ctypes.c_char * 160)]


class dpa_gdp_mu(ctypes.Structure):
    _fields_ = [("lower", ctypes.c_double),
                ("upper", ctypes.c_double),
                ("certified_upper", ctypes.c_int),
                ("source", ctypes.c_int),
                ("note", ctypes.c_char * 256)]


class dpa_calibration(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double),
                ("at_value", dpa_result),
                ("infeasible", ctypes.c_double),
                ("evaluations", ctypes.c_int)]


class dpa_param_info(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char * 256),
                ("name", ctypes.c_char * 32),
                ("role", ctypes.c_int),
                ("is_integer", ctypes.c_int),
                ("lo", ctypes.c_double),
                ("hi", ctypes.c_double),
                ("lo_open", ctypes.c_int),
                ("hi_open", ctypes.c_int)]


class dpa_renyi_value(ctypes.Structure):
    _fields_ = [("re", ctypes.c_double),
                ("im", ctypes.c_double),
                ("log_e_re", ctypes.c_double),
                ("log_e_im", ctypes.c_double),
                ("lower", ctypes.c_double),
                ("upper", ctypes.c_double),
                ("exists", ctypes.c_int),
                ("certified", ctypes.c_int),
                ("tight", ctypes.c_int),
                ("note", ctypes.c_char * 160)]


class dpa_renyi_result(ctypes.Structure):
    _fields_ = [("order_re", ctypes.c_double),
                ("order_im", ctypes.c_double),
                ("symmetric", ctypes.c_int),
                ("remove", dpa_renyi_value),
                ("add", dpa_renyi_value),
                ("binding", ctypes.c_int)]


class dpa_tf_opts(ctypes.Structure):
    _fields_ = [("rel_tol", ctypes.c_double),
                ("abs_tol", ctypes.c_double),
                ("max_vertices", ctypes.c_size_t),
                ("tail", ctypes.c_double)]


class dpa_filter_decision(ctypes.Structure):
    _fields_ = [("accepted", ctypes.c_int),
                ("reason", ctypes.c_char * 256)]


class dpa_ledger_init_opts(ctypes.Structure):
    _fields_ = [("filter_config", ctypes.c_char_p),
                ("auto_units", ctypes.c_int),
                ("units", ctypes.POINTER(ctypes.c_char_p)),
                ("nunits", ctypes.c_size_t)]


class dpa_ledger_decision(ctypes.Structure):
    _fields_ = [("accepted", ctypes.c_int),
                ("request_id", ctypes.c_longlong),
                ("reason", ctypes.c_char * 256),
                ("remaining", ctypes.c_void_p),
                ("replayed", ctypes.c_int),
                ("status", ctypes.c_char * 16),
                ("generation", ctypes.c_longlong)]


# Every structure the binding passes to the library, by its C name (for the
# layout test).
STRUCTS = {
    "dpa_error": dpa_error,
    "dpa_options": dpa_options,
    "dpa_result": dpa_result,
    "dpa_gdp_mu": dpa_gdp_mu,
    "dpa_loss_tail": dpa_loss_tail,
    "dpa_calibration": dpa_calibration,
    "dpa_param_info": dpa_param_info,
    "dpa_renyi_value": dpa_renyi_value,
    "dpa_renyi_result": dpa_renyi_result,
    "dpa_tf_opts": dpa_tf_opts,
    "dpa_filter_decision": dpa_filter_decision,
    "dpa_ledger_init_opts": dpa_ledger_init_opts,
    "dpa_ledger_decision": dpa_ledger_decision,
}

_P = ctypes.c_void_p
_E = ctypes.POINTER(dpa_error)
# name: (restype, argtypes)
_SIGNATURES = {
    "dpa_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    # (buf, size, x, digits, dir: -1 down / 0 nearest / 1 up, err): include/dpacct/decimal.h
    "dpa_decimal_format": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_int,
                                          ctypes.c_int, _E]),
    "dpa_method_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dpa_method_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), _E]),
    "dpa_rdp_conv_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dpa_rdp_conv_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), _E]),
    "dpa_direction_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dpa_bound_source_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dpa_options_init": (None, [ctypes.POINTER(dpa_options)]),
    "dpa_spec_from_json": (_P, [ctypes.c_char_p, _E]),
    "dpa_spec_to_json": (_P, [_P]),
    "dpa_spec_free": (None, [_P]),
    "dpa_spec_neighboring": (ctypes.c_int, [_P]),
    "dpa_template_from_json": (_P, [ctypes.c_char_p, _E]),
    "dpa_template_param": (ctypes.POINTER(dpa_param_info), [_P]),
    "dpa_template_instantiate": (_P, [_P, ctypes.c_double, _E]),
    "dpa_template_free": (None, [_P]),
    "dpa_accountant_new": (_P, [_P, ctypes.POINTER(dpa_options), _E]),
    "dpa_accountant_free": (None, [_P]),
    "dpa_accountant_method": (ctypes.c_int, [_P]),
    "dpa_accountant_epsilon": (ctypes.c_int, [_P, ctypes.c_double, ctypes.POINTER(dpa_result), _E]),
    "dpa_accountant_delta": (ctypes.c_int, [_P, ctypes.c_double, ctypes.POINTER(dpa_result), _E]),
    "dpa_accountant_loss_tail": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_int, ctypes.POINTER(dpa_loss_tail), _E]),
    "dpa_accountant_profile": (ctypes.c_int, [_P, c_double_p, ctypes.c_size_t, c_double_p, c_double_p, _E]),
    "dpa_epsilon_counts": (ctypes.c_int, [_P, c_double_p, ctypes.c_size_t, ctypes.c_double,
                                          ctypes.POINTER(dpa_options), ctypes.POINTER(dpa_result), _E]),
    "dpa_accountant_gdp_mu": (ctypes.c_int, [_P, ctypes.POINTER(dpa_gdp_mu), _E]),
    "dpa_calibrate": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_double, ctypes.POINTER(dpa_options),
                                     ctypes.c_double, ctypes.POINTER(dpa_calibration), _E]),
    "dpa_renyi": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_double, ctypes.POINTER(dpa_renyi_result), _E]),
    "dpa_renyi_parse_order": (ctypes.c_int, [ctypes.c_char_p, c_double_p, c_double_p, _E]),
    # tradeoff.h
    "dpa_tf_opts_init": (None, [ctypes.POINTER(dpa_tf_opts)]),
    "dpa_tf_identity": (_P, [_E]),
    "dpa_tf_gaussian": (_P, [ctypes.c_double, _E]),
    "dpa_tf_approx": (_P, [ctypes.c_double, ctypes.c_double, _E]),
    "dpa_tf_laplace": (_P, [ctypes.c_double, _E]),
    "dpa_tf_randomized_response": (_P, [ctypes.c_double, ctypes.c_double, _E]),
    "dpa_tf_from_points": (_P, [c_double_p, c_double_p, ctypes.c_size_t, ctypes.c_double, _E]),
    "dpa_tf_lower_envelope": (_P, [c_double_p, c_double_p, ctypes.c_size_t, _E]),
    "dpa_tf_from_eps_delta": (_P, [c_double_p, c_double_p, ctypes.c_size_t, _E]),
    "dpa_tf_copy": (_P, [_P, _E]),
    "dpa_tf_free": (None, [_P]),
    "dpa_tf_kind_name": (ctypes.c_char_p, [ctypes.c_int]),
    "dpa_tf_get_kind": (ctypes.c_int, [_P]),
    "dpa_tf_params": (ctypes.c_int, [_P, c_double_p, c_double_p, c_double_p, _E]),
    "dpa_tf_vertices": (ctypes.c_size_t, [_P, c_double_p, c_double_p, c_double_p, c_double_p,
                                          ctypes.c_size_t]),
    "dpa_tf_eval": (ctypes.c_int, [_P, ctypes.c_double, c_double_p, _E]),
    "dpa_tf_eval_bounds": (ctypes.c_int, [_P, ctypes.c_double, c_double_p, c_double_p, c_double_p,
                                          c_double_p, _E]),
    "dpa_tf_check": (ctypes.c_int, [_P, ctypes.c_double, _E]),
    "dpa_tf_symmetry_defect": (ctypes.c_int, [_P, c_double_p, _E]),
    "dpa_tf_is_symmetric": (ctypes.c_int, [_P, ctypes.c_double]),
    "dpa_tf_fixed_point": (ctypes.c_int, [_P, c_double_p, c_double_p, _E]),
    "dpa_tf_inverse": (_P, [_P, _E]),
    "dpa_tf_max": (_P, [_P, _P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_min": (_P, [_P, _P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_symmetrize_max": (_P, [_P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_symm": (_P, [_P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_subsample": (_P, [_P, ctypes.c_double, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_group": (_P, [_P, ctypes.c_ulong, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_tensor": (_P, [_P, _P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_tensor_power": (_P, [_P, ctypes.c_ulong, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_discretize": (_P, [_P, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_delta": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_int, c_double_p, _E]),
    "dpa_tf_epsilon": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_int, c_double_p, _E]),
    "dpa_tf_from_profile": (_P, [c_double_p, c_double_p, ctypes.c_size_t, ctypes.c_int,
                                 ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_from_accountant": (_P, [_P, ctypes.c_double, ctypes.c_size_t, ctypes.POINTER(dpa_tf_opts), _E]),
    "dpa_tf_gdp_mu": (ctypes.c_int, [_P, ctypes.POINTER(dpa_tf_opts), c_double_p, _E]),
    "dpa_tf_gdp_mu_from_profile": (ctypes.c_int, [c_double_p, c_double_p, ctypes.c_size_t, c_double_p, _E]),
    "dpa_tf_gdp_delta": (ctypes.c_int, [ctypes.c_double, ctypes.c_double, c_double_p, c_double_p, _E]),
    "dpa_tf_gdp_epsilon": (ctypes.c_int, [ctypes.c_double, ctypes.c_double, c_double_p, c_double_p, _E]),
    "dpa_tf_beta_at": (ctypes.c_int, [_P, ctypes.c_double, ctypes.c_double, c_double_p, c_double_p, _E]),
    # filter.h
    "dpa_filter_new_json": (_P, [ctypes.c_char_p, _E]),
    "dpa_filter_free": (None, [_P]),
    "dpa_filter_copy": (_P, [_P, _E]),
    "dpa_filter_config_json": (_P, [_P]),
    "dpa_filter_name": (ctypes.c_char_p, [_P]),
    "dpa_filter_state_json": (_P, [_P]),
    "dpa_filter_set_state_json": (ctypes.c_int, [_P, ctypes.c_char_p, _E]),
    "dpa_filter_request": (ctypes.c_int, [_P, _P, ctypes.POINTER(dpa_filter_decision), _E]),
    "dpa_filter_remaining_json": (_P, [_P]),
    "dpa_filter_exhausted": (ctypes.c_int, [_P]),
    # ledger.h
    "dpa_ledger_create": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(dpa_ledger_init_opts), _E]),
    "dpa_ledger_open": (_P, [ctypes.c_char_p, _E]),
    "dpa_ledger_close": (None, [_P]),
    "dpa_ledger_add_unit": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, _E]),
    "dpa_ledger_request": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                          ctypes.POINTER(dpa_ledger_decision), _E]),
    "dpa_ledger_status_json": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P), _E]),
    "dpa_ledger_history_json": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P), _E]),
    "dpa_ledger_verify": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_P), _E]),
    "dpa_ledger_export_json": (ctypes.c_int, [_P, ctypes.POINTER(_P), _E]),
    "dpa_ledger_import_json": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, _E]),
    "dpa_ledger_location_display": (None, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
    "dpa_ledger_decision_clear": (None, [ctypes.POINTER(dpa_ledger_decision)]),
    "dpa_wisdom_default_path": (ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_size_t]),
    "dpa_wisdom_load": (ctypes.c_int, [ctypes.c_char_p, _E]),
    "dpa_wisdom_save": (ctypes.c_int, [ctypes.c_char_p, _E]),
}

# One lock for every call into the library (see the module docstring).
LOCK = threading.RLock()

_lib = None
_lib_path = None
_libc_free = None


def _candidates():
    """(description, path-or-name) pairs in lookup order (after $DPACCT_LIBRARY)."""
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))  # .../python/dpacct -> checkout
    out = [("bundled with the package", os.path.join(here, "_libs", "libdpacct.so.0")),
           ("build tree of the source checkout", os.path.join(checkout, "build", "libdpacct.so"))]
    found = ctypes.util.find_library("dpacct")
    if found:
        out.append(("ctypes.util.find_library", found))
    out.append(("dynamic loader", "libdpacct.so.0"))
    out.append(("dynamic loader", "libdpacct.so"))
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib", "/usr/lib64"):
        out.append(("system directory", os.path.join(d, "libdpacct.so.0")))
        for sub in sorted(_multiarch_dirs(d)):
            out.append(("system directory", os.path.join(sub, "libdpacct.so.0")))
    return out


def _multiarch_dirs(d):
    try:
        return [os.path.join(d, e) for e in os.listdir(d) if e.endswith("-linux-gnu")]
    except OSError:
        return []


def _declare(lib):
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)  # AttributeError: not a dpacct library
        fn.restype = res
        fn.argtypes = args


def load(path=None):
    """Load (once) and return the library; path overrides the lookup."""
    global _lib, _lib_path, _libc_free
    with LOCK:
        if _lib is not None and path is None:
            return _lib
        tried = []
        env = path or os.environ.get("DPACCT_LIBRARY")
        if env:
            try:
                lib = ctypes.CDLL(env)
                _declare(lib)
            except (OSError, AttributeError) as e:
                raise LibraryNotFoundError(
                    "cannot load libdpacct from %s (%s): %s" % (
                        env, "argument" if path else "$DPACCT_LIBRARY", e)) from None
        else:
            lib = None
            for what, cand_path in _candidates():
                if os.path.isabs(cand_path) and not os.path.exists(cand_path):
                    tried.append("%s (%s): not found" % (cand_path, what))
                    continue
                try:
                    lib = ctypes.CDLL(cand_path)
                    _declare(lib)
                    env = cand_path
                    break
                except (OSError, AttributeError) as e:
                    tried.append("%s (%s): %s" % (cand_path, what, e))
                    lib = None
            if lib is None:
                raise LibraryNotFoundError(
                    "libdpacct.so not found. Build it (cmake -S . -B build && cmake --build build) "
                    "in the source checkout, install it (cmake --install build; ldconfig) or the wheel that "
                    "carries it (bash scripts/wheel.sh; pip install dist/*.whl), or set "
                    "DPACCT_LIBRARY to its path. Tried:\n  " + "\n  ".join(tried))
        _lib, _lib_path = lib, getattr(lib, "_name", env)
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc_free = libc.free
        _libc_free.argtypes = [ctypes.c_void_p]
        _libc_free.restype = None
        return _lib


def library_path():
    """The path (or loader name) of the loaded library, loading it if needed."""
    load()
    return _lib_path


def take_string(ptr):
    """A malloc'd C string from the library as str, freed."""
    if not ptr:
        raise MemoryError("dpacct: out of memory")
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        _libc_free(ptr)


def text(b):
    """A char array / char* from the library as str."""
    if isinstance(b, bytes):
        return b.decode("utf-8", "replace")
    return "" if b is None else str(b)


def c_string(s, name):
    """s (str or bytes) as NUL-terminated UTF-8 for the library; a NUL inside
    would silently cut the text, so it is refused (InvalidInputError)."""
    from ._errors import InvalidInputError
    if isinstance(s, str):
        b = s.encode("utf-8")
    elif isinstance(s, bytes):
        b = s
    else:
        raise TypeError("%s: expected text, got %s" % (name, type(s).__name__))
    if b"\0" in b:
        raise InvalidInputError("%s: contains a NUL character at offset %d (the library reads text "
                                "up to the first NUL)" % (name, b.index(b"\0")), status=1)
    return b


def new_error():
    return dpa_error()


def raise_error(status, err, default_kind=None):
    """Raise the Python exception for a failed call (err: dpa_error)."""
    st = err.status if err.status else status
    msg = text(err.message) or text(load().dpa_status_string(st))
    raise error_from_status(st, python_message(msg), default_kind)


def check(status, err, default_kind=None):
    if status != 0:
        raise_error(status, err, default_kind)
