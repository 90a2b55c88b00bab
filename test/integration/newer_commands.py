"""Commands goblin-core has that redis-server 7.0.15 lacks: hash-field
expiry (Redis 7.4 and 8.0). The differential suites cannot compare them
with the reference server, so they do not skip them silently: each is
listed here as "not in 7.0, compared with the 8.0 JSON", and its COMMAND
INFO and COMMAND DOCS replies are compared with what Redis's own command
description (cmake/command_meta_extra.json, from Redis's src/commands/*.json)
says a Redis that has the command answers -- computed by the same
json_command() of cmake/gen_command_meta.py that a reader can check
against Redis's server.c. Their behaviour is tested in test_hash_ttl.py.
"""

import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTRA = os.path.join(ROOT, "cmake", "command_meta_extra.json")
WHY = "not in Redis 7.0, compared with the Redis 8.0 JSON (cmake/command_meta_extra.json)"

with open(EXTRA) as _f:
    SPECS = json.load(_f)["commands"]
# Goblin Core's own commands, described in the same file so that the
# command description stays the one source of their arity and flags.
OWN = ["ring"]
NAMES = sorted(set(SPECS) - set(OWN))


def _generator():
    spec = importlib.util.spec_from_file_location("gen_command_meta",
                                                  os.path.join(ROOT, "cmake", "gen_command_meta.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_GEN = _generator()


def _resp2(v, key=None):
    """A generator value as a RESP2 reply parses: maps (lists of pairs)
    flattened, strings as bytes."""
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v) and key != "history":
        return [y for k, x in v for y in (k.encode(), _resp2(x, k))]
    if isinstance(v, (list, tuple)):
        return [_resp2(x) for x in v]
    return v


def expected_info(name):
    """COMMAND INFO name, as a RESP2 reply (one entry)."""
    info, _ = _GEN.json_command(name, SPECS[name])
    return [_resp2(list(info))]


def expected_docs(name):
    """COMMAND DOCS name, as a RESP2 reply."""
    _, doc = _GEN.json_command(name, SPECS[name])
    return [name.encode(), _resp2(doc)]
