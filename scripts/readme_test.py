#!/usr/bin/env python3
"""Runs every command README.md shows, on the simulated device, and fails when one breaks.

    readme_test.py --vouch BUILD/vouch [--readme README.md] [--keep]

Every ```sh block is run, command by command (a line ending in \\ continues), with bash, in
one scratch folder, `vouch` on PATH being the built binary, the source tree's Python module on
PYTHONPATH and a private lock file. A command's trailing comment `# ... exit N` states its
exit status (default 0): any other status fails the test, with the command's output.

Markers, an HTML comment on the line before a block (the README's reader does not see them):
  <!-- readme-test: skip (WHY) -->                 the block is not run (the quick start, a GPU)
  <!-- readme-test: file NAME -->                  the block is written to NAME in the folder
  <!-- readme-test: python placeholders: A B -->   a ```python block that is not run: it must
                                                   compile and use no undefined name but A, B
Every other ```python block must carry one of these markers, and so must a block of another
language: an unmarked block fails the test rather than go untested.
Standard library only (ctest Readme.EveryCommandRuns).
"""

import argparse
import ast
import builtins
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARKER = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
EXIT = re.compile(r"#[^#]*\bexit (\d+)\b[^#]*$")


def blocks(text):
    """(line number, language, marker or None, lines) of every fenced block."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        marker = None
        if i > 0:
            mm = MARKER.match(lines[i - 1])
            if mm:
                marker = mm.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise SystemExit("README: the block at line %d is not closed" % (i + 1))
        out.append((i + 1, m.group(1), marker, lines[i + 1 : j]))
        i = j + 1
    return out


def commands(lines, first):
    """(line number, command, expected exit status) of a shell block's commands."""
    out, cur, start = [], "", None
    for k, line in enumerate(lines):
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not cur:
            start = first + 1 + k
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        m = EXIT.search(cur)
        out.append((start, cur, int(m.group(1)) if m else 0))
        cur = ""
    if cur:
        raise SystemExit("README line %d: a command ends with a continuation \\" % start)
    return out


def undefined_names(source):
    """Names a Python snippet reads but never binds, imports or gets from builtins."""
    tree = ast.parse(source)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bound.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return sorted(read - bound)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(here)
    ap.add_argument("--readme", default=os.path.join(src, "README.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    vouch = os.path.abspath(args.vouch)
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    work = tempfile.mkdtemp(prefix="vouch-readme-")
    bindir = os.path.join(work, ".bin")
    os.makedirs(bindir)
    os.symlink(vouch, os.path.join(bindir, "vouch"))
    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    env["PYTHONPATH"] = os.path.join(src, "python")
    env["VOUCH_LOCK_FILE"] = os.path.join(work, "lock")
    for k in ("VOUCH_SIM", "VOUCH_SIM_START", "VOUCH_STORE", "CUDA_VISIBLE_DEVICES"):
        env.pop(k, None)
    failures, ran, skipped = [], 0, 0
    try:
        for line, lang, marker, body in blocks(text):
            where = "README.md line %d" % line
            if marker and marker.startswith("skip"):
                skipped += 1
                continue
            if marker and marker.startswith("file "):
                name = marker.split(None, 1)[1]
                with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                if lang == "python":
                    bad = undefined_names("\n".join(body))
                    if bad:
                        failures.append("%s: %s uses undefined names %s" % (where, name, bad))
                continue
            if marker and marker.startswith("python placeholders:"):
                allowed = set(marker.split(":", 1)[1].split())
                bad = [n for n in undefined_names("\n".join(body)) if n not in allowed]
                if bad:
                    failures.append("%s: the snippet uses undefined names %s" % (where, bad))
                continue
            if lang != "sh":
                failures.append("%s: a ```%s block with no readme-test marker" % (where, lang))
                continue
            for cline, cmd, want in commands(body, line):
                t0 = time.monotonic()
                p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=600)
                ran += 1
                took = time.monotonic() - t0
                out = p.stdout.decode("utf-8", "replace")
                print("README.md line %d: exit %d (%.1f s): %s" % (cline, p.returncode, took, cmd))
                if p.returncode != want:
                    failures.append("README.md line %d: exit %d, the README says %d: %s\n%s"
                                    % (cline, p.returncode, want, cmd, out[-3000:]))
    finally:
        if args.keep:
            print("scratch folder kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%d commands run, %d blocks skipped by marker" % (ran, skipped))
    if ran == 0:
        failures.append("no command found in the README")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
