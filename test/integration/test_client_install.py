"""The installed client library works the way the README tells a new user.

`cmake --install` into a fresh prefix, the prefix moved somewhere else (as
an unpacked `make package` tarball would be), then the README's ring-client
example compiled with nothing but `pkg-config --cflags --libs goblin-client`
and run against a live server: it must connect, ZADD and LRANGE. This is
what failed while goblin-client.pc hard-coded prefix=/usr/local: the flags
pointed at directories that did not hold the library.

Skipped only where it cannot mean anything: a sanitizer build (its library
needs the sanitizer runtime the plain `cc` line does not link) reports the
skip in its output, and the native suite always runs it.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import gbtest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir():
    return os.path.dirname(os.path.abspath(gbtest._find_goblin()))


def readme_example():
    """The C block under '## The ring client library' in README.md."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## The ring client library", 1)[1]
    return re.search(r"```c\n(.*?)```", section, re.S).group(1)


def sanitized(build):
    cache = os.path.join(build, "CMakeCache.txt")
    with open(cache, encoding="utf-8") as f:
        m = re.search(r"^GOBLIN_SANITIZE:STRING=(.*)$", f.read(), re.M)
    return bool(m and m.group(1).strip())


class ClientInstall(unittest.TestCase):
    def test_readme_example_builds_from_a_moved_prefix(self):
        build = build_dir()
        if sanitized(build):
            self.skipTest("sanitizer build: the installed library needs the sanitizer runtime")
        for tool in ("pkg-config", "cc"):
            self.assertIsNotNone(shutil.which(tool), f"{tool} is needed (cmake/install-deps.sh installs it)")
        work = tempfile.mkdtemp(prefix="gb-install-")
        try:
            first = os.path.join(work, "first")
            subprocess.run(["cmake", "--install", build, "--prefix", first], check=True,
                           stdout=subprocess.DEVNULL)
            moved = os.path.join(work, "elsewhere", "goblin")
            os.makedirs(os.path.dirname(moved))
            shutil.move(first, moved)
            pcdir = next(os.path.join(d, "pkgconfig") for d, dirs, _ in os.walk(moved) if "pkgconfig" in dirs)
            env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "goblin-client"], env=env, check=True,
                                   capture_output=True, text=True).stdout.split()
            with gbtest.Server() as srv:
                body = readme_example().replace('"/tmp/goblin-core.sock"', '"%s"' % srv.sock)
                src = os.path.join(work, "app.c")
                with open(src, "w") as f:
                    f.write("#include <stdio.h>\n" + body.split("\n", 1)[0] + "\nint main(void)\n{\n"
                            + body.split("\n", 1)[1] + "    puts(\"ok\");\n    return 0;\n}\n")
                exe = os.path.join(work, "app")
                cc = subprocess.run(["cc", "-std=c11", src, "-o", exe] + flags, capture_output=True, text=True)
                self.assertEqual(cc.returncode, 0, "README example failed to build with pkg-config's flags "
                                 f"{flags}:\n{cc.stderr}")
                libdir = next(f[2:] for f in flags if f.startswith("-L"))
                run = subprocess.run([exe], env=dict(os.environ, LD_LIBRARY_PATH=libdir,
                                                     DYLD_LIBRARY_PATH=libdir),
                                     capture_output=True, text=True, timeout=30)
                self.assertEqual((run.returncode, run.stdout.strip()), (0, "ok"), run.stderr)
                r = srv.redis()
                self.assertEqual(r.zscore("leaderboard", "alice"), 42.5)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    gbtest.run_tests()
