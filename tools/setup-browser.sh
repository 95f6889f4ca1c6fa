#!/usr/bin/env bash
# Makes the browser test suite work: it runs WGSL kernels in headless Chromium (WebGPU on Chromium's
# bundled SwiftShader adapter), driven by Vitest's browser mode through Playwright, which launches
# the system's /usr/bin/chromium (Playwright's own browsers are never downloaded). Does nothing when
# Chromium already starts headless; otherwise installs Debian's `chromium` package. Installing
# needs root (apt-get). Exits 0 when Chromium starts, 1 otherwise, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=/usr/bin/chromium
PACKAGES=(chromium)

say() { echo "setup-browser: $*"; }
fail() {
  echo "setup-browser: $*" >&2
  exit 1
}

# Starts Chromium headless with the suite's flags on an empty page, with a time limit; prints why
# when it does not. Returns 0 when it started and exited cleanly.
probe() {
  if [ ! -x "$CHROMIUM" ]; then
    echo "browser-probe: $CHROMIUM is missing"
    return 1
  fi
  local output status=0
  output=$(timeout --kill-after=5 60 "$CHROMIUM" --headless=new --no-sandbox \
    --disable-dev-shm-usage --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader \
    --dump-dom about:blank 2>&1) || status=$?
  if [ "$status" -eq 0 ] && printf '%s' "$output" | grep -q '<html'; then
    echo "browser-probe: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") starts headless"
    return 0
  fi
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "browser-probe: $CHROMIUM timed out after 60 s"
  else
    echo "browser-probe: $CHROMIUM did not start (exit $status): $(printf '%s' "$output" | tail -n 3)"
  fi
  return 1
}

if probe; then
  say "Chromium works; nothing to install"
  exit 0
fi

command -v apt-get >/dev/null ||
  fail "Chromium does not start and there is no apt-get: install Chromium (>= 121, with WebGPU) as $CHROMIUM"
[ "$(id -u)" -eq 0 ] ||
  fail "Chromium does not start; installing ${PACKAGES[*]} needs root: rerun as root (sudo bash tools/setup-browser.sh)"

apt_options=(-o Acquire::Retries=3 -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30
  -o DPkg::Lock::Timeout=120)
export DEBIAN_FRONTEND=noninteractive

say "apt-get update"
timeout 600 apt-get "${apt_options[@]}" update -q || fail "apt-get update failed (see above)"
# Bookworm's newest chromium comes from bookworm-security, which a stock Debian image lists.
say "apt-get install ${PACKAGES[*]}"
timeout 900 apt-get "${apt_options[@]}" install -y -q --no-install-recommends "${PACKAGES[@]}" ||
  fail "apt-get install ${PACKAGES[*]} failed (see above)"

probe ||
  fail "Chromium still does not start after installing ${PACKAGES[*]} ($(dpkg-query -W -f='${Version}' chromium 2>/dev/null || echo 'version unknown')); try \`$CHROMIUM --headless=new --no-sandbox --dump-dom about:blank\`"
say "Chromium works"
