#!/usr/bin/env bash
# Builds bench/lua_flavours.c against PUC Lua 5.1 and against LuaJIT and
# runs both pinned to one CPU (docs/scripting.md, "Which Lua").
# Needs liblua5.1-0-dev and libluajit-5.1-dev (Debian).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpu=${CPU:-0}
for lib in lua5.1 luajit; do
  if ! pkg-config --exists "$lib"; then
    echo "$lib: not installed (skipped)"
    continue
  fi
  def=""
  [ "$lib" = luajit ] && def=-DWITH_LUAJIT
  cc -O2 -std=c11 $def -o "$out/$lib" "$here/lua_flavours.c" $(pkg-config --cflags --libs "$lib") -lm
  echo "== $lib"
  taskset -c "$cpu" "$out/$lib"
done
if pkg-config --exists luajit; then
  echo "== luajit, interpreter only"
  JIT_OFF=1 taskset -c "$cpu" "$out/luajit"
fi
