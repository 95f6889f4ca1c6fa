#!/usr/bin/env bash
# Makes WebGPU execution work on a CPU-only Debian machine: Dawn (the `webgpu` npm package of
# @forge/wgsl) needs a Vulkan driver, and Mesa's lavapipe (a CPU Vulkan driver) is one. Bookworm's
# own Mesa 22 is rejected by Dawn, so the driver comes from bookworm-backports (Mesa 25), with the
# Vulkan loader libvulkan1. Does nothing when an adapter already works. Run after `pnpm install`;
# installing needs root (apt-get). Exits 0 when WebGPU works, 1 otherwise, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(mesa-vulkan-drivers libvulkan1)
SOURCES_FILE=/etc/apt/sources.list.d/forge-backports.sources
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "setup-webgpu: $*"; }
fail() {
  echo "setup-webgpu: $*" >&2
  exit 1
}

# Runs the probe with a time limit; prints its verdict line, keeps Dawn's known-harmless
# maxDynamic...BuffersPerPipelineLayout warnings out of the log. Returns the probe's status
# (0 adapter works, 1 no adapter, 2 webgpu package missing, 124 probe timed out).
probe() {
  local output status=0
  output=$(timeout --kill-after=5 60 node tools/webgpu-probe.mjs 2>&1) || status=$?
  printf '%s\n' "$output" | grep -v 'artificially reduced from' | sed '/^$/d' || true
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "webgpu-probe: timed out after 60 s"
  fi
  return "$status"
}

status=0
probe || status=$?
if [ "$status" -eq 0 ]; then
  say "WebGPU adapter works; nothing to install"
  exit 0
fi
if [ "$status" -eq 2 ]; then
  fail "run \`pnpm install --frozen-lockfile\` first: the probe needs the webgpu package of @forge/wgsl"
fi

# No adapter: install Mesa's lavapipe and the Vulkan loader.
command -v apt-get >/dev/null ||
  fail "no WebGPU adapter and no apt-get: install Mesa >= 24 with its lavapipe Vulkan driver (Debian: mesa-vulkan-drivers) and the Vulkan loader (libvulkan1)"
[ "$(id -u)" -eq 0 ] ||
  fail "no WebGPU adapter; installing ${PACKAGES[*]} needs root: rerun as root (sudo bash tools/setup-webgpu.sh)"

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
apt_options=(-o Acquire::Retries=3 -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30
  -o DPkg::Lock::Timeout=120)
export DEBIAN_FRONTEND=noninteractive

if [ "$codename" = bookworm ]; then
  if grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "bookworm-backports is already an apt source"
  else
    # Same mirror as the machine's own Debian source, when it names one.
    mirror=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }' \
      /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    mirror=${mirror:-http://deb.debian.org/debian}
    say "adding bookworm-backports ($mirror) as $SOURCES_FILE"
    {
      echo "Types: deb"
      echo "URIs: $mirror"
      echo "Suites: bookworm-backports"
      echo "Components: main"
      if [ -f "$KEYRING" ]; then echo "Signed-By: $KEYRING"; fi
    } >"$SOURCES_FILE"
  fi
  target=(-t bookworm-backports)
else
  say "not Debian bookworm (codename '${codename:-unknown}'): installing ${PACKAGES[*]} from the default suites"
  target=()
fi

say "apt-get update"
timeout 600 apt-get "${apt_options[@]}" update -q || fail "apt-get update failed (see above)"
say "apt-get install ${target[*]} ${PACKAGES[*]}"
timeout 900 apt-get "${apt_options[@]}" install -y -q "${target[@]}" "${PACKAGES[@]}" ||
  fail "apt-get install ${target[*]} ${PACKAGES[*]} failed (see above)"

status=0
probe || status=$?
if [ "$status" -ne 0 ]; then
  fail "still no WebGPU adapter after installing ${PACKAGES[*]} ($(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo 'version unknown')): Dawn needs Mesa >= 24 (lavapipe); check \`VK_LOADER_DEBUG=error,warn node tools/webgpu-probe.mjs\`"
fi
say "WebGPU adapter works"
