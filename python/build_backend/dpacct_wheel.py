# dpacct wheel: the PEP 517 build backend of the repository's pyproject.toml.
# SPDX-License-Identifier: GPL-3.0-or-later
"""A build backend that needs nothing but the standard library (Python >= 3.11,
for tomllib), so `pip install .` works offline: pip has no build requirement to
fetch.  The hooks:

  build_wheel  builds libdpacct (dpacct_bundle.py), bundles its dependencies into
               dpacct/_libs/, and writes dpacct-<version>-py3-none-<platform>.whl:
               the package python/dpacct/, the libraries, and in the .dist-info
               the licenses (COPYING, the bundled libraries' Debian copyright files)
               and bundled-libraries.txt (where each copy came from);
  build_sdist  writes dpacct-<version>.tar.gz: the source tree (git's tracked and
               unignored files, or the tree less build*/ and dist/ outside git)
               with PKG-INFO.

The package is pure ctypes, so the Python tag is py3-none; the platform tag is
the one dpacct_bundle.platform_tag() finds.  config_settings (pip
--config-settings KEY=VALUE): build-dir (default build-wheel/ in the source
tree; an existing Release build directory is reused as it is) and jobs.
Archives are reproducible: files in sorted order, timestamps from
SOURCE_DATE_EPOCH (default 1980-01-01).

Command line (scripts/wheel.sh): python3 dpacct_wheel.py [--sdist] [--build-dir DIR] OUTDIR
"""
import base64
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpacct_bundle  # noqa: E402

PACKAGE = "dpacct"


def _source():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.dirname(here))  # python/build_backend -> source tree


def _project(src):
    import tomllib
    with open(os.path.join(src, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata(src, proj):
    lines = ["Metadata-Version: 2.1", "Name: " + proj["name"], "Version: " + proj["version"],
             "Summary: " + proj["description"]]
    if "license" in proj:
        lines.append("License: " + proj["license"]["text"])
    if "requires-python" in proj:
        lines.append("Requires-Python: " + proj["requires-python"])
    lines += ["Classifier: " + c for c in proj.get("classifiers", [])]
    for dep in proj.get("dependencies", []):
        lines.append("Requires-Dist: " + dep)
    for extra, deps in sorted(proj.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (d, extra) for d in deps]
    body = ""
    if "readme" in proj:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(src, proj["readme"]), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _epoch():
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_zip(path, entries):
    """entries: (archive name, bytes, mode) in order; RECORD added last."""
    stamp = time.gmtime(_epoch())[:6]
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append("%s,%s,%d" % (name, _record_hash(data), len(data)))
        rec_name = [n for n, _d, _m in entries if n.endswith(".dist-info/METADATA")][0][:-len("METADATA")] + "RECORD"
        record.append(rec_name + ",,")
        info = zipfile.ZipInfo(rec_name, stamp)
        info.external_attr = (0o100000 | 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, "\n".join(record) + "\n")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    cfg = config_settings or {}
    src = _source()
    proj = _project(src)
    build = cfg.get("build-dir") or os.path.join(src, "build-wheel")
    build = os.path.abspath(os.path.join(src, build))
    lib = dpacct_bundle.build_library(src, build, cfg.get("jobs"))
    with tempfile.TemporaryDirectory() as tmp:
        libdir = os.path.join(tmp, "_libs")
        bundled = dpacct_bundle.bundle(lib, libdir)
        tag, glibc, reasons = dpacct_bundle.platform_tag(libdir)
        print("dpacct wheel: newest GLIBC symbol version needed: %s; platform tag %s%s" % (
            glibc, tag, "".join("\n  not manylinux: " + r for r in reasons)), file=sys.stderr)
        dist = "%s-%s" % (proj["name"], proj["version"])
        info = dist + ".dist-info/"
        entries = []
        pkgdir = os.path.join(src, "python", PACKAGE)
        for name in sorted(os.listdir(pkgdir)):
            if name.endswith(".py") or name == "py.typed":  # py.typed: PEP 561 marker
                entries.append(("%s/%s" % (PACKAGE, name), _read(os.path.join(pkgdir, name)), 0o644))
        for name in sorted(os.listdir(libdir)):
            entries.append(("%s/_libs/%s" % (PACKAGE, name), _read(os.path.join(libdir, name)), 0o755))
        entries.append((info + "METADATA", _metadata(src, proj).encode("utf-8"), 0o644))
        entries.append((info + "WHEEL", ("Wheel-Version: 1.0\nGenerator: dpacct_wheel\nRoot-Is-Purelib: false\n"
                                         "Tag: py3-none-%s\n" % tag).encode(), 0o644))
        entries.append((info + "top_level.txt", (PACKAGE + "\n").encode(), 0o644))
        entries.append((info + "licenses/COPYING", _read(os.path.join(src, "COPYING")), 0o644))
        listing = ["# libraries in dpacct/_libs/ besides libdpacct.so.0 (RUNPATH $ORIGIN):",
                   "# name in the wheel, original soname, copied from, Debian package=version"]
        for b in bundled:
            listing.append("%s %s %s %s=%s" % (b["name"], b["soname"], b["source"], b["package"], b["version"]))
            if b["copyright"]:
                entries.append((info + "licenses/%s.copyright" % b["package"], _read(b["copyright"]), 0o644))
        listing.append("# platform tag %s (newest GLIBC symbol version %s)" % (tag, glibc))
        listing += ["# not manylinux: " + r for r in reasons]
        entries.append((info + "bundled-libraries.txt", ("\n".join(listing) + "\n").encode(), 0o644))
        name = "%s-py3-none-%s.whl" % (dist, tag)
        os.makedirs(wheel_directory, exist_ok=True)
        _write_zip(os.path.join(wheel_directory, name), entries)
    return name


def _sdist_files(src):
    try:
        top = subprocess.run(["git", "-C", src, "rev-parse", "--show-toplevel"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True)
    except FileNotFoundError:
        top = None
    if top is not None and top.returncode == 0 and os.path.realpath(top.stdout.strip()) == os.path.realpath(src):
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             stdout=subprocess.PIPE, check=True).stdout.decode("utf-8")
        files = [f for f in out.split("\0") if f and os.path.isfile(os.path.join(src, f))]
    else:
        files = []
        for d, dirs, names in os.walk(src):
            rel = os.path.relpath(d, src)
            dirs[:] = [x for x in dirs if x not in (".git", "__pycache__") and not
                       (rel == "." and (x.startswith("build") or x == "dist"))]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names if n != "PKG-INFO" or rel != "."]
    return sorted(f for f in files if not f.startswith("dist/") and "/__pycache__/" not in "/" + f)


def build_sdist(sdist_directory, config_settings=None):
    src = _source()
    proj = _project(src)
    dist = "%s-%s" % (proj["name"], proj["version"])
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            def add(name, data, mode):
                ti = tarfile.TarInfo("%s/%s" % (dist, name))
                ti.size, ti.mode, ti.mtime = len(data), mode, _epoch()
                tar.addfile(ti, io.BytesIO(data))
            add("PKG-INFO", _metadata(src, proj).encode("utf-8"), 0o644)
            for f in _sdist_files(src):
                path = os.path.join(src, f)
                add(f, _read(path), 0o755 if os.access(path, os.X_OK) else 0o644)
    name = dist + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with open(os.path.join(sdist_directory, name), "wb") as f:
        f.write(buf.getvalue())
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Build dpacct's wheel (and sdist) into OUTDIR.")
    ap.add_argument("outdir")
    ap.add_argument("--build-dir", help="CMake build directory (default build-wheel/)")
    ap.add_argument("--sdist", action="store_true", help="also build the sdist")
    a = ap.parse_args(argv)
    cfg = {"build-dir": os.path.abspath(a.build_dir)} if a.build_dir else {}
    if a.sdist:
        print(os.path.join(a.outdir, build_sdist(a.outdir, cfg)))
    print(os.path.join(a.outdir, build_wheel(a.outdir, cfg)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except dpacct_bundle.BundleError as e:
        print("dpacct wheel: %s" % e, file=sys.stderr)
        sys.exit(1)
