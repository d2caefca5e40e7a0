# dpacct wheel: building libdpacct and bundling its shared-library dependencies.
# SPDX-License-Identifier: GPL-3.0-or-later
"""The compiled half of the wheel (used by dpacct_wheel.py; standard library only).

build_library() builds libdpacct.so with CMake (Release, tests and benchmarks off),
or reuses a Release build directory that already exists.  bundle() copies it into
the package's _libs/ directory together with every shared object it needs that
the manylinux policy does not allow to be external (FFTW, GSL, gslcblas, jansson,
sqlite3 on Debian 12), the way auditwheel repairs a wheel:

  - each bundled copy gets a unique name and SONAME (libfftw3.so.3 becomes
    libfftw3-<8 hex digits of its SHA-256>.so.3), and every DT_NEEDED entry (with
    its symbol-version reference) is renamed to match, so a copy of the same
    library already in the process (or on LD_LIBRARY_PATH) is never used instead;
  - every object gets DT_RUNPATH $ORIGIN and no other search path: the copies are
    found next to the object that needs them, whatever the environment;
  - libpq and cairo are not dependencies: the library loads libpq with dlopen when
    a PostgreSQL ledger is opened, and only the command line draws plots.

platform_tag() then reads what the bundled objects still need from outside:
manylinux_2_NN_<arch> when those are only libc, libm, libpthread, libdl and the
dynamic loader, and NN is the newest GLIBC_2.NN symbol version any of them
references; otherwise plain linux_<arch>.  Tools: cmake, ldd, readelf (binutils),
patchelf.
"""
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys

# shared objects a manylinux wheel may take from the system (the policy's core set)
POLICY_EXTERNAL = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2")
LIBRARY = "libdpacct.so.0"


class BundleError(RuntimeError):
    pass


def _run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, **kw)
    except FileNotFoundError:
        raise BundleError("%s not found (Debian 12: bash scripts/deps.sh installs it)" % cmd[0]) from None
    except subprocess.CalledProcessError as e:
        raise BundleError("command failed (status %d): %s" % (e.returncode, " ".join(cmd))) from None


def _out(cmd):
    return _run(cmd, stdout=subprocess.PIPE, universal_newlines=True).stdout


def _cache_values(path):
    vals = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                vals[m.group(1)] = m.group(2)
    return vals


def build_library(src, build, jobs=None, log=sys.stderr):
    """Build libdpacct in `build` (configured here when it holds no CMakeCache.txt);
    return the path of libdpacct.so.0 there."""
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        v = _cache_values(cache)
        home = v.get("CMAKE_HOME_DIRECTORY", "")
        if not home or os.path.realpath(home) != os.path.realpath(src):
            raise BundleError("%s is a build directory of %s, not of %s" % (build, home or "?", src))
        if v.get("CMAKE_BUILD_TYPE") != "Release" or v.get("DPA_SANITIZE", "OFF").upper() in ("ON", "1", "YES", "TRUE"):
            raise BundleError("%s is not a plain Release build (CMAKE_BUILD_TYPE=%s, DPA_SANITIZE=%s): "
                              "the wheel needs one" % (build, v.get("CMAKE_BUILD_TYPE"), v.get("DPA_SANITIZE")))
        print("dpacct wheel: reusing the Release build in %s" % build, file=log)
    else:
        _run(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
              "-DDPA_BUILD_TESTS=OFF", "-DDPA_BUILD_BENCH=OFF"], stdout=log)
    _run(["cmake", "--build", build, "--target", "dpacct", "-j", str(jobs or os.cpu_count() or 1)], stdout=log)
    lib = os.path.join(build, LIBRARY)
    if not os.path.exists(lib):
        raise BundleError("the build made no %s" % lib)
    return lib


def _is_loader(soname):
    return soname.startswith("ld-linux") or soname.startswith("ld64.so") or soname == "linux-vdso.so.1"


def is_policy_external(soname):
    return soname in POLICY_EXTERNAL or _is_loader(soname)


def _ldd(path):
    """(soname, resolved path or None) of every shared object `path` loads, transitively."""
    deps = []
    for line in _out(["ldd", path]).splitlines():
        line = line.strip()
        m = re.match(r"^(\S+) => (not found|\S+)", line)
        if m:
            if m.group(2) == "not found":
                raise BundleError("%s needs %s, which is not installed" % (path, m.group(1)))
            deps.append((m.group(1), m.group(2)))
        else:
            m = re.match(r"^(\S+) \(0x", line)
            if m:
                deps.append((os.path.basename(m.group(1)), None))
    return deps


def needed(path):
    """DT_NEEDED, DT_RUNPATH and DT_RPATH entries of an ELF object."""
    out = _out(["readelf", "-d", "-W", path])
    return (re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out),
            re.findall(r"\(RUNPATH\)\s+Library runpath: \[([^\]]*)\]", out),
            re.findall(r"\(RPATH\)\s+Library rpath: \[([^\]]*)\]", out))


def version_needs(path):
    """{file: set of version names} from the object's .gnu.version_r section."""
    needs, cur = {}, None
    for line in _out(["readelf", "-V", "-W", path]).splitlines():
        m = re.search(r"Version: \d+\s+File: (\S+)", line)
        if m:
            cur = needs.setdefault(m.group(1), set())
            continue
        m = re.search(r"Name: (\S+)\s+Flags:", line)
        if m and cur is not None:
            cur.add(m.group(1))
        elif line.startswith("Version") and "section" in line:
            cur = None  # a new section (definitions or needs) starts
    return needs


def _mangled(soname, path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    base, sep, ext = soname.partition(".so")
    return "%s-%s%s%s" % (base, digest, sep, ext)


def _owner(path):
    """(Debian package, version, copyright file) owning a system file, or Nones."""
    for p in (os.path.realpath(path), path):
        try:
            out = subprocess.run(["dpkg", "-S", p], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True).stdout
        except FileNotFoundError:
            return None, None, None
        if out:
            pkg = out.split(":")[0]
            ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, universal_newlines=True).stdout.strip()
            cr = "/usr/share/doc/%s/copyright" % pkg
            return pkg, ver or None, cr if os.path.exists(cr) else None
    return None, None, None


def bundle(lib, dest, log=sys.stderr):
    """Copy `lib` and its non-policy dependencies into `dest` and relink them
    ($ORIGIN, unique names).  Returns a list of dicts, one per bundled
    dependency: soname, name (in dest), source, package, version, copyright."""
    os.makedirs(dest, exist_ok=True)
    deps = [(s, p) for s, p in _ldd(lib) if not is_policy_external(s)]
    bundled = []
    for soname, path in deps:
        if path is None:
            raise BundleError("%s needs %s, which ldd does not resolve" % (lib, soname))
        pkg, ver, cr = _owner(path)
        bundled.append({"soname": soname, "name": _mangled(soname, path), "source": os.path.realpath(path),
                        "package": pkg, "version": ver, "copyright": cr})
    rename = {b["soname"]: b["name"] for b in bundled}
    files = [(lib, LIBRARY, None)] + [(b["source"], b["name"], b["name"]) for b in bundled]
    for src, name, soname in files:
        out = os.path.join(dest, name)
        shutil.copyfile(src, out)
        os.chmod(out, 0o755)
        # one patchelf operation per call: patchelf 0.14 (Debian 12) garbles the
        # file when --set-rpath and --replace-needed are given together
        ops = [["--set-rpath", "$ORIGIN"]] + ([["--set-soname", soname]] if soname else [])
        ops += [["--replace-needed", n, rename[n]] for n in needed(out)[0] if n in rename]
        for op in ops:
            _run(["patchelf"] + op + [out])
        need, runpath, rpath = needed(out)
        if runpath != ["$ORIGIN"] or rpath or any(n in rename for n in need):
            raise BundleError("patchelf left %s with NEEDED %s, RUNPATH %s, RPATH %s" % (name, need, runpath, rpath))
        print("dpacct wheel: _libs/%s (from %s)" % (name, src), file=log)
    return bundled


def platform_tag(libdir):
    """(tag, glibc "2.NN" or None, reasons it is not manylinux) of the objects in libdir."""
    arch = platform.machine()
    inside = set(os.listdir(libdir))
    newest, reasons = None, []
    for name in sorted(inside):
        path = os.path.join(libdir, name)
        for n in needed(path)[0]:
            if n not in inside and not is_policy_external(n):
                reasons.append("%s needs %s from the system" % (name, n))
        for lib_file, versions in version_needs(path).items():
            if lib_file in inside:
                continue
            for v in versions:
                m = re.match(r"^GLIBC_(\d+)\.(\d+)(?:\.\d+)?$", v)
                if m:
                    newest = max(newest or (0, 0), (int(m.group(1)), int(m.group(2))))
                else:
                    reasons.append("%s needs symbol version %s of %s" % (name, v, lib_file))
    if newest is None:
        reasons.append("no GLIBC symbol version found (not a glibc build?)")
    if reasons:
        return "linux_%s" % arch, None if newest is None else "%d.%d" % newest, reasons
    return "manylinux_%d_%d_%s" % (newest[0], newest[1], arch), "%d.%d" % newest, []
