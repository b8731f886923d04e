#!/usr/bin/env bash
# Usage: ensure_debian_package.sh EXECUTABLE PACKAGE
# Installs Debian's PACKAGE when EXECUTABLE (an absolute path) is missing. The Makefile
# uses it for the headless Chromium the browser tests drive through Playwright
# (Playwright's own browser download is never used) and for wrk, the load generator of
# the HTTP benchmarks.
set -euo pipefail
executable=${1:?executable path}
package=${2:?Debian package}
if [ -x "$executable" ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_debian_package: $executable is missing; install Debian's $package package" >&2
    exit 1
fi
echo "ensure_debian_package: installing $package"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
