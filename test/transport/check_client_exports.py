"""libgoblin-client exports its public API and nothing else.

The shared library is built with hidden visibility; what it exports must be
exactly the functions the public headers (include/goblin/*.h) declare with
GB_EXPORT. Fails on an export no header declares (an internal helper or a
platform function leaking out) and on a GB_EXPORT declaration the library
does not export (a missing or misspelt definition).

Usage: check_client_exports.py <nm> <libgoblin-client shared library> <include/goblin>
"""
import glob
import os
import re
import subprocess
import sys

# What the linker itself defines in every ELF shared object.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def exported(nm, lib):
    with open(lib, "rb") as f:
        elf = f.read(4) == b"\x7fELF"
    # ELF: the dynamic symbol table is what a program can bind to. Mach-O:
    # the external defined symbols, with their leading underscore.
    cmd = [nm, "-D", "--defined-only", lib] if elf else [nm, "-g", "-U", lib]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name = parts[-1]
        names.add(name if elf else name[1:] if name.startswith("_") else name)
    return names - LINKER_SYMBOLS


def declared(include_dir):
    """(GB_EXPORT functions, every function prototype) of the public headers."""
    marked, protos = set(), set()
    for path in sorted(glob.glob(os.path.join(include_dir, "*.h"))):
        text = open(path).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)      # comments
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)        # preprocessor lines
        text = re.sub(r"static inline[^{]*\{", " {", text)       # inline helpers are not exports
        for decl in text.split(";"):
            m = re.search(r"\b(gb_\w+)\s*\(", decl)
            if not m or "{" in decl[:m.start()] or "typedef" in decl:
                continue
            protos.add(m.group(1))
            if "GB_EXPORT" in decl[:m.start()]:
                marked.add(m.group(1))
    return marked, protos


def main():
    nm, lib, include_dir = sys.argv[1:4]
    have = exported(nm, lib)
    marked, protos = declared(include_dir)
    ok = True
    if not marked:
        print("no GB_EXPORT declarations found under %s" % include_dir)
        ok = False
    for name in sorted(have - marked):
        print("exported but not a GB_EXPORT declaration of the public headers: %s" % name)
        ok = False
    for name in sorted(marked - have):
        print("declared GB_EXPORT but not exported by %s: %s" % (os.path.basename(lib), name))
        ok = False
    for name in sorted(protos - marked):
        print("a public prototype without GB_EXPORT: %s" % name)
        ok = False
    print("%s: %d symbols exported, %d GB_EXPORT declarations%s" % (os.path.basename(lib), len(have), len(marked),
                                                                    "" if ok else " - MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
