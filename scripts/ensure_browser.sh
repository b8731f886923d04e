#!/usr/bin/env bash
# The browser tests drive Debian's headless Chromium through Playwright; Playwright's
# own browser download is never used. Installs Chromium when it is missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_browser: /usr/bin/chromium is missing; install Debian's chromium package" >&2
    exit 1
fi
echo "ensure_browser: installing chromium"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
