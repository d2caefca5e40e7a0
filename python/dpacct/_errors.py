# dpacct Python binding: exceptions.
# SPDX-License-Identifier: GPL-3.0-or-later
"""The exception hierarchy.

Every error of the library (a dpa_status other than DPA_OK) becomes one of
these, carrying the library's message unchanged; where the message starts
with a JSON path ("/repeat/event/poisson/rate: must be in [0, 1], got 1.5")
the path is also in ``.path`` and the rest in ``.reason``.

    DpacctError                       base of everything raised here
    +-- InvalidInputError (ValueError)          DPA_EINVAL
    |   +-- InvalidSpecError                    a spec or template was refused
    +-- UnsupportedError                        DPA_EUNSUPPORTED
    +-- NumericError (ArithmeticError)          DPA_ENUMERIC
    +-- OutOfMemoryError (MemoryError)          DPA_ENOMEM
    +-- DpacctIOError (OSError)                 DPA_EIO
    +-- StorageError                            DPA_ESTORAGE
    +-- LibraryNotFoundError (ImportError)      libdpacct.so could not be loaded
    +-- LibraryBugError                         the library returned an impossible value
"""
import re

__all__ = [
    "DpacctError", "InvalidInputError", "InvalidSpecError", "UnsupportedError",
    "NumericError", "OutOfMemoryError", "DpacctIOError", "StorageError",
    "LibraryNotFoundError", "LibraryBugError",
]

STATUS_NAMES = {0: "DPA_OK", 1: "DPA_EINVAL", 2: "DPA_EUNSUPPORTED", 3: "DPA_ENOMEM",
                4: "DPA_ENUMERIC", 5: "DPA_EIO", 6: "DPA_ESTORAGE"}

# "/a/b/0/c: rest" or "/: rest"; a path is JSON-pointer style, no blanks.
_PATH_RE = re.compile(r"^(/[^\s:]*): (.*)$", re.S)


class DpacctError(Exception):
    """Base class.  Attributes: message (the library's text), status (the
    dpa_status number, 0 for errors raised by the Python side), status_name,
    path (the JSON path the message starts with, or None) and reason (the
    message without the path)."""

    status = 0

    def __init__(self, message, status=None, path=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        m = _PATH_RE.match(message)
        if path is None and m:
            path = m.group(1)
        self.path = path
        self.reason = m.group(2) if (m and m.group(1) == path) else message

    @property
    def status_name(self) -> str:
        """The status as its C name ("DPA_EINVAL", ...)."""
        return STATUS_NAMES.get(self.status, str(self.status))

    def __str__(self):
        return self.message


class InvalidInputError(DpacctError, ValueError):
    """DPA_EINVAL: bad input (a parameter out of its domain, bad options)."""
    status = 1


class InvalidSpecError(InvalidInputError):
    """A spec or template the parser refused; .path is the JSON path of the
    offending value when the message has one (JSON syntax errors have none:
    they say line and column instead)."""


class UnsupportedError(DpacctError):
    """DPA_EUNSUPPORTED: valid input the chosen method cannot evaluate (the
    message says why and which method can), or an event kind with no dpacct
    equivalent (from_dp_event)."""
    status = 2


class OutOfMemoryError(DpacctError, MemoryError):
    """DPA_ENOMEM: allocation failed or a size limit was exceeded."""
    status = 3


class NumericError(DpacctError, ArithmeticError):
    """DPA_ENUMERIC: a numerical procedure failed to produce a bound (also:
    calibration found no value meeting the target)."""
    status = 4


class DpacctIOError(DpacctError, OSError):
    """DPA_EIO: a file could not be read or written."""
    status = 5

    def __init__(self, message, status=None, path=None):
        DpacctError.__init__(self, message, status, path)

    def __str__(self):
        return self.message


class StorageError(DpacctError):
    """DPA_ESTORAGE: the ledger's storage failed."""
    status = 6


class LibraryNotFoundError(DpacctError, ImportError):
    """libdpacct.so could not be found or loaded (the message lists where it
    looked)."""

    def __init__(self, message):
        DpacctError.__init__(self, message)

    def __str__(self):
        return self.message


class LibraryBugError(DpacctError):
    """The library returned a value its contract excludes (a NaN bound, bounds
    in the wrong order, ...): a bug, never silently passed on."""


_BY_STATUS = {1: InvalidInputError, 2: UnsupportedError, 3: OutOfMemoryError,
              4: NumericError, 5: DpacctIOError, 6: StorageError}


# The library's messages speak to the command line where a remedy is a flag
# or a command; the binding says the same in Python terms.
_CLI_TO_PYTHON = [
    (re.compile(r"a larger --max-grid"), "a larger max_grid="),
    (re.compile(r"--max-grid"), "max_grid="),
    (re.compile(r"--method (\w+)"), r'method="\1"'),
    (re.compile(r"`dpacct dpsgd --batch-size`"), 'dpacct.dpsgd_calibrate(solve="sample_rate", steps=...)'),
    (re.compile(r"`dpacct ledger add-unit`"), "Ledger.add_unit()"),
    (re.compile(r"`dpacct ledger init`"), "dpacct.Ledger.create()"),
    (re.compile(r"--auto-units"), "auto_units=True"),
    (re.compile(r"^options: max grid must be"), "max_grid= must be"),
    (re.compile(r"^options: grid step must be"), "grid_step= must be"),
    (re.compile(r"^options: (accuracy|delta_abs|threads) must be"), r"\1= must be"),
]


def python_message(message):
    """A library message with its command-line remedies (--max-grid,
    --method NAME, `dpacct ledger init`, ...) said in Python terms."""
    for pat, rep in _CLI_TO_PYTHON:
        message = pat.sub(rep, message)
    return message


def error_from_status(status, message, default_kind=None):
    """The exception for a dpa_status; default_kind replaces
    InvalidInputError for DPA_EINVAL (e.g. InvalidSpecError when parsing)."""
    cls = _BY_STATUS.get(status, DpacctError)
    if cls is InvalidInputError:
        if default_kind is not None:
            cls = default_kind
        elif _PATH_RE.match(message):  # a spec value (e.g. a total count too large)
            cls = InvalidSpecError
    return cls(message, status=status)


# Shown as dpacct.InvalidSpecError (not dpacct._errors....) in tracebacks.
for _cls in (DpacctError, InvalidInputError, InvalidSpecError, UnsupportedError, OutOfMemoryError,
             NumericError, DpacctIOError, StorageError, LibraryNotFoundError, LibraryBugError):
    _cls.__module__ = "dpacct"
del _cls
