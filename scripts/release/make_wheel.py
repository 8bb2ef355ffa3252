#!/usr/bin/env python3
"""Writes vouch's wheel from a staged release tree (scripts/release.sh calls it).

    make_wheel.py TREE PYTHON_SRC VERSION PLATFORM_TAG DIST

The wheel holds the Python module (PYTHON_SRC/vouch), the release tree (bin/vouch, lib/,
share/doc/vouch/; not its python/, which is that module) under vouch/_native/, and a console
script `vouch` that executes vouch/_native/bin/vouch, as the cmake and ninja wheels ship their
binaries. Standard library only; RECORD per PEP 376/427.
"""

import base64
import hashlib
import os
import stat
import sys
import zipfile


def digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + h.decode()


def main(tree, pysrc, version, plat, dist):
    name = "vouch-%s-py3-none-%s.whl" % (version, plat)
    info = "vouch-%s.dist-info" % version
    entries = []  # (arcname, bytes, mode)

    def add_file(path, arc):
        with open(path, "rb") as f:
            data = f.read()
        mode = os.stat(path).st_mode
        entries.append((arc, data, 0o755 if mode & stat.S_IXUSR else 0o644))

    for base, dirs, files in os.walk(os.path.join(pysrc, "vouch")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".pyc"):
                continue
            p = os.path.join(base, f)
            add_file(p, os.path.relpath(p, pysrc))
    for base, dirs, files in os.walk(tree):
        # The tree's python/ (for the tarball and the .deb) is the module added above.
        dirs[:] = sorted(d for d in dirs if not (base == tree and d == "python"))
        for f in sorted(files):
            p = os.path.join(base, f)
            if os.path.islink(p):
                raise SystemExit("make_wheel: %s is a link; a wheel cannot hold one" % p)
            add_file(p, "vouch/_native/" + os.path.relpath(p, tree))
    cli = (
        '"""The `vouch` console script: runs the bundled binary."""\n'
        "import os\nimport sys\n\n\n"
        "def main():\n"
        "    # Importing the vouch package for this script claimed the region markers for this\n"
        "    # process (VOUCH_REGION_PID): the legs of the vouch it becomes must claim their own.\n"
        '    if os.environ.get("VOUCH_REGION_PID") == str(os.getpid()):\n'
        '        del os.environ["VOUCH_REGION_PID"]\n'
        '    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "bin", "vouch")\n'
        "    try:\n"
        '        os.execv(exe, ["vouch"] + sys.argv[1:])\n'
        "    except OSError as e:\n"
        '        sys.exit("vouch: cannot run %s: %s" % (exe, e.strerror))\n'
    )
    entries.append(("vouch/_cli.py", cli.encode(), 0o644))
    metadata = (
        "Metadata-Version: 2.1\nName: vouch\nVersion: %s\n"
        "Summary: GPU benchmark numbers worth believing\n"
        "Requires-Python: >=3.9\nLicense: see vouch/_native/licenses\n" % version
    )
    wheel = (
        "Wheel-Version: 1.0\nGenerator: vouch make_wheel.py\nRoot-Is-Purelib: false\n"
        "Tag: py3-none-%s\n" % plat
    )
    eps = "[console_scripts]\nvouch = vouch._cli:main\n\n[pytest11]\nvouch = vouch.pytest_plugin\n"
    entries += [
        (info + "/METADATA", metadata.encode(), 0o644),
        (info + "/WHEEL", wheel.encode(), 0o644),
        (info + "/entry_points.txt", eps.encode(), 0o644),
    ]
    record = "".join("%s,%s,%d\n" % (a, digest(d), len(d)) for a, d, _ in entries)
    record += info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode(), 0o644))
    os.makedirs(dist, exist_ok=True)
    out = os.path.join(dist, name)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, mode in entries:
            zi = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (stat.S_IFREG | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(*sys.argv[1:])
