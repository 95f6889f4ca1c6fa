#!/usr/bin/env bash
# Installs NVIDIA's nvdisasm and cuobjdump for `pnpm bench --sass` (tools/bench-sass.mjs), which
# disassembles ptxas's cubins. Neither ships with ptxas. On Debian they are in the non-free
# `nvidia-cuda-toolkit` package of the experimental suite (CUDA 12.5; its nvdisasm reads ptxas 13's
# sm_80 and sm_90 cubins). Installing that package would pull in nvidia-cuda-dev and the rest of the
# toolkit (about 3 GB, and a second, older ptxas and nvcc in /usr/bin), so this downloads the one
# .deb with apt-get (about 88 MB), unpacks only nvdisasm and cuobjdump (about 50 MB, needing only
# libc) into /opt/forge-sass/bin, with the package's copyright file, and links them into
# /usr/local/bin. Does nothing when nvdisasm already runs. Needs root (the apt source, /opt). Exits
# 0 when nvdisasm works, 1 otherwise, with the reason.
set -euo pipefail

PACKAGE=nvidia-cuda-toolkit
PREFIX=/opt/forge-sass
SOURCES_FILE=/etc/apt/sources.list.d/forge-experimental.sources
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "setup-sass: $*"; }
fail() {
  echo "setup-sass: $*" >&2
  exit 1
}

works() { "$1" --version >/dev/null 2>&1; }

for candidate in "${NVDISASM:-}" nvdisasm "$PREFIX/bin/nvdisasm"; do
  if [ -n "$candidate" ] && works "$candidate"; then
    say "nvdisasm works ($(command -v "$candidate")); nothing to install"
    exit 0
  fi
done

command -v apt-get >/dev/null ||
  fail "no nvdisasm and no apt-get: install nvdisasm from the CUDA toolkit (12.5 or later) and put it on PATH, or set NVDISASM"
[ "$(id -u)" -eq 0 ] || fail "no nvdisasm; installing it needs root: rerun as root (sudo bash tools/setup-sass.sh)"

apt_options=(-o Acquire::Retries=3 -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30
  -o DPkg::Lock::Timeout=120)
export DEBIAN_FRONTEND=noninteractive

# Debian experimental (NotAutomatic: apt never takes a package from it unless asked with -t) with
# the non-free component, where nvidia-cuda-toolkit lives.
has_experimental_non_free() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    # One-line style, or a deb822 stanza (a paragraph) naming both.
    grep -qsE '^[[:space:]]*deb[[:space:]].*[[:space:]]experimental[[:space:]].*non-free([[:space:]]|$)' "$file" &&
      return 0
    awk 'BEGIN { RS = "" } /(^|\n)Suites:[^\n]*experimental/ && /(^|\n)Components:[^\n]*non-free( |\n|$)/ { found = 1 }
      END { exit !found }' "$file" && return 0
  done
  return 1
}
if has_experimental_non_free; then
  say "Debian experimental (non-free) is already an apt source"
else
  mirror=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }' \
    /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  say "adding Debian experimental ($mirror, main contrib non-free non-free-firmware) as $SOURCES_FILE"
  {
    echo "Types: deb"
    echo "URIs: $mirror"
    echo "Suites: experimental"
    echo "Components: main contrib non-free non-free-firmware"
    if [ -f "$KEYRING" ]; then echo "Signed-By: $KEYRING"; fi
  } >"$SOURCES_FILE"
fi

say "apt-get update"
timeout 600 apt-get "${apt_options[@]}" update -q || fail "apt-get update failed (see above)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt's download sandbox user must be able to write the folder.
if id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
say "apt-get download -t experimental $PACKAGE"
(cd "$work" && timeout 900 apt-get "${apt_options[@]}" download -q -t experimental "$PACKAGE") ||
  fail "apt-get download -t experimental $PACKAGE failed (see above)"
deb=$(ls "$work"/"$PACKAGE"_*.deb)
version=$(dpkg-deb -f "$deb" Version)

say "unpacking nvdisasm and cuobjdump of $PACKAGE $version into $PREFIX/bin"
mkdir -p "$work/root" "$PREFIX/bin"
dpkg-deb --fsys-tarfile "$deb" |
  tar -x -C "$work/root" ./usr/bin/nvdisasm ./usr/bin/cuobjdump ./usr/share/doc/"$PACKAGE"/copyright
install -m 0755 "$work/root/usr/bin/nvdisasm" "$work/root/usr/bin/cuobjdump" "$PREFIX/bin/"
install -m 0644 "$work/root/usr/share/doc/$PACKAGE/copyright" "$PREFIX/copyright"
echo "$PACKAGE $version (Debian experimental, non-free): nvdisasm and cuobjdump only" >"$PREFIX/VERSION"
for tool in nvdisasm cuobjdump; do
  if [ ! -e "/usr/local/bin/$tool" ] || [ -L "/usr/local/bin/$tool" ]; then
    ln -sf "$PREFIX/bin/$tool" "/usr/local/bin/$tool"
  fi
done

works "$PREFIX/bin/nvdisasm" || fail "$PREFIX/bin/nvdisasm does not run (see \`$PREFIX/bin/nvdisasm --version\`)"
say "nvdisasm works: $("$PREFIX/bin/nvdisasm" --version | tail -1)"
