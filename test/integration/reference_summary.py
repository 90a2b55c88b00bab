#!/usr/bin/env python3
"""The totals of the comparisons with the references, after ctest.

    reference_summary.py <build-dir>

Every integration file writes, through gbtest.run_tests, the number of its
tests that compared with redis-server 7.0 and of those whose reference
(redis-server 7.0, node/npm and its packages, Celery, rq, the redis tools)
was missing, to <build-dir>/reference-counts/<file>.json (`make test`
empties that folder before ctest). This prints them per file and in total,
and the other skips with their reasons. It exits 1 when a test file that
ctest ran (Testing/Temporary/LastTest.log) left no counts (it did not go
through gbtest.run_tests, or it died), and, under CI
(CI=true) or with GOBLIN_REQUIRE_REFERENCE=1, when any comparison was
skipped: there a missing reference is a failure, never a pass.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def ran_integration_files(build):
    """The integration files ctest ran last in build (its LastTest.log names
    each test it started), or, without that log, every test_*.py here."""
    log = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            names = re.findall(r"^\d+/\d+ Testing: integration_(test_\w+)$", f.read(), re.M)
        return sorted(set(names))
    return sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(HERE, "test_*.py")))


def main(build):
    strict = (os.environ.get("CI", "").lower() in ("true", "1")
              or os.environ.get("GOBLIN_REQUIRE_REFERENCE", "") == "1")
    files = ran_integration_files(build)
    run = skipped = 0
    problems = []
    print("\nComparisons with the references (redis-server 7.0, node/npm, Celery, rq), per test file:")
    for name in files:
        path = os.path.join(build, "reference-counts", name + ".json")
        if not os.path.exists(path):
            problems.append("%s left no counts: it did not run, did not go through gbtest.run_tests, or died"
                            % name)
            continue
        with open(path) as f:
            c = json.load(f)
        run += c["comparisons_run"]
        skipped += c["comparisons_skipped"]
        if c["comparisons_run"] or c["comparisons_skipped"]:
            print("  %-32s run %4d  skipped %4d" % (name, c["comparisons_run"], c["comparisons_skipped"]))
        for test, reason in sorted(c["missing"].items()):
            print("    REFERENCE MISSING  %s: %s" % (test, reason))
        for test, reason in sorted(c["other_skips"].items()):
            print("    skipped (not a reference)  %s: %s" % (test, reason))
    print("Redis and framework comparisons: run %d, skipped %d" % (run, skipped))
    if skipped and strict:
        problems.append("%d comparison(s) skipped for a missing reference: CI requires them all" % skipped)
    for p in problems:
        print("FAILED: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
