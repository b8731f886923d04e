#!/usr/bin/env bash
# The HTTP benchmarks saturate the server with wrk (a C load generator: on a 2-core
# machine the server, PostgreSQL and the load generator share the cores). Installs
# Debian's wrk when it is missing.
set -euo pipefail
if command -v wrk >/dev/null; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_wrk: wrk is missing; install Debian's wrk package" >&2
    exit 1
fi
echo "ensure_wrk: installing wrk"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
