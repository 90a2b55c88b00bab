#!/usr/bin/env bash
# Builds the scripting engine's Lua libraries from their release sources where
# the system's package manager does not have them (macOS: Homebrew removed
# lua@5.1 and never had lua-cjson for 5.1). Debian/Ubuntu use
# their packages instead (cmake/install-deps.sh).
#
#   cmake/build-lua51.sh [PREFIX]        (default: <repo>/.deps/lua5.1)
#
# Builds, as static libraries with pkg-config files named as Debian's, so that
# cmake/Dependencies.cmake finds them the same way (it adds <repo>/.deps/lua5.1
# to the search path when that folder exists):
#   lua5.1        PUC Lua 5.1.5 (the interpreter Redis embeds)
#   lua5.1-cjson  lua-cjson 2.1.0 (Debian's source, as Redis bundles 2.1.0)
# Each tarball is checked against its SHA-256 (the values Debian's source
# index publishes for the same files) before anything is built; a mismatch
# stops here. Nothing outside PREFIX is written.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/.deps/lua5.1}
cc=${CC:-cc}
log() { printf 'build-lua51: %s\n' "$*" >&2; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# fetch FILE SHA256 URL... : the first URL whose download has the right hash.
# GOBLIN_DEPS_CACHE, when set, is looked in first (offline builds).
fetch() {
  local file=$1 want=$2 url
  shift 2
  if [ -n "${GOBLIN_DEPS_CACHE:-}" ] && [ -f "$GOBLIN_DEPS_CACHE/$file" ] &&
     [ "$(sha256 "$GOBLIN_DEPS_CACHE/$file")" = "$want" ]; then
    cp "$GOBLIN_DEPS_CACHE/$file" "$work/$file"
    return
  fi
  for url in "$@"; do
    log "downloading $url"
    if curl -fsSL --retry 2 --max-time 120 -o "$work/$file" "$url" && [ "$(sha256 "$work/$file")" = "$want" ]; then
      return
    fi
    log "  not usable (download failed or SHA-256 differs)"
  done
  log "could not get $file with SHA-256 $want; put it in \$GOBLIN_DEPS_CACHE and re-run"
  exit 1
}

pc_file() { # name version description libs cflags requires
  cat >"$prefix/lib/pkgconfig/$1.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include/lua5.1

Name: $1
Description: $3 (built by cmake/build-lua51.sh)
Version: $2
Requires: $6
Libs: -L\${libdir} $4
Cflags: $5
EOF
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deb=https://deb.debian.org/debian/pool/main/l
fetch lua5.1_5.1.5.orig.tar.gz 2640fc56a795f29d28ef15e13c34a47e223960b0240e8cb0a82d9b0738695333 \
  "$deb/lua5.1/lua5.1_5.1.5.orig.tar.gz" https://www.lua.org/ftp/lua-5.1.5.tar.gz
fetch lua-cjson_2.1.0+dfsg.orig.tar.gz 94f1fce36742cf00e99c5071b309b9f71e6e7daf60a7151f7bf4ac0a97259ac4 \
  "$deb/lua-cjson/lua-cjson_2.1.0+dfsg.orig.tar.gz"
for t in "$work"/*.tar.gz; do tar -xzf "$t" -C "$work"; done

mkdir -p "$prefix/include/lua5.1" "$prefix/lib/pkgconfig"
# -fPIC: the libraries end up in the server and in the test binaries alike.
# LUA_USE_POSIX: mkstemp and friends; no dynamic loading (scripts cannot
# require modules anyway: docs/scripting.md, "Sandbox").
log "Lua 5.1.5"
make -C "$work/lua-5.1.5/src" liblua.a CC="$cc" MYCFLAGS="-fPIC -DLUA_USE_POSIX" >/dev/null
cp "$work/lua-5.1.5/src/liblua.a" "$prefix/lib/liblua5.1.a"
for h in lua.h luaconf.h lualib.h lauxlib.h; do cp "$work/lua-5.1.5/src/$h" "$prefix/include/lua5.1/"; done
cp "$work/lua-5.1.5/etc/lua.hpp" "$prefix/include/lua5.1/"
pc_file lua5.1 5.1.5 "PUC Lua" "-llua5.1 -lm" "-I\${includedir}" ""

build_lib() { # name dir sources...
  local name=$1 dir=$2 objs=() s
  shift 2
  for s in "$@"; do
    "$cc" -O2 -fPIC -I"$prefix/include/lua5.1" -c "$dir/$s" -o "$dir/${s%.c}.o"
    objs+=("$dir/${s%.c}.o")
  done
  rm -f "$prefix/lib/lib$name.a"
  ar rcs "$prefix/lib/lib$name.a" "${objs[@]}"
}
log "lua-cjson 2.1.0"
build_lib lua5.1-cjson "$work/lua-cjson-2.1.0+dfsg" lua_cjson.c strbuf.c fpconv.c
pc_file lua5.1-cjson 2.1.0 "Lua cjson" "-llua5.1-cjson" "-I\${includedir}" lua5.1
log "done: $prefix (pkg-config files in $prefix/lib/pkgconfig)"
