"""libgoblin-client builds without the engine: no engine header reaches it.

The ring client library (transport/ring/client/*.c with the SBE codec,
transport/sbe/sbe_codec.c and sbe_client.c) links only the platform layer.
This follows every #include "..." of its sources, transitively, and fails on
any file under engine/ (or apps/), naming the chain that reached it, so a
header that starts leaning on the engine is caught where it happens rather
than when someone builds the client alone.

Usage: check_client_includes.py <source root>
"""
import glob
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FORBIDDEN = ("engine/", "apps/")


def resolve(root, including_file, name):
    """The file an #include "name" means, as a path relative to root, or None."""
    candidates = [
        os.path.join(os.path.dirname(including_file), name),  # beside the includer
        name,  # from the source root (the project's include style)
        os.path.join("include", name),  # public headers (goblin/...)
    ]
    for rel in candidates:
        rel = os.path.normpath(rel)
        if os.path.isfile(os.path.join(root, rel)):
            return rel
    return None


def client_sources(root):
    files = sorted(glob.glob(os.path.join(root, "transport/ring/client/*.c")))
    files += [os.path.join(root, "transport/sbe", f) for f in ("sbe_codec.c", "sbe_client.c")]
    return [os.path.relpath(f, root) for f in files if os.path.isfile(f)]


def main():
    root = sys.argv[1]
    sources = client_sources(root)
    if not sources:
        print("no client sources found under", root)
        return 1
    seen, bad = {}, []
    stack = [(src, None) for src in sources]
    while stack:
        rel, parent = stack.pop()
        if rel in seen:
            continue
        seen[rel] = parent
        if rel.startswith(FORBIDDEN):
            chain, at = [], rel
            while at is not None:
                chain.append(at)
                at = seen[at]
            bad.append(" <- ".join(chain))
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            target = resolve(root, rel, name)
            if target is None:
                print(f"{rel}: cannot resolve #include \"{name}\"")
                return 1
            stack.append((target, rel))
    for line in bad:
        print("client library reaches an engine header:", line)
    print(f"checked {len(seen)} files reachable from {len(sources)} client sources")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
