#!/usr/bin/env bash
# Start the local PostgreSQL, Redis (and RabbitMQ, where installed) that the test suite and benchmarks use, if they
# are not already answering, and create the `approvals` database. Safe to run repeatedly;
# prints nothing when everything is already up.
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
PG_USER=postgres
PG_DB=approvals
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
WAIT_SECONDS=30

pg_up() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" >/dev/null 2>&1; }
rabbit_up() { rabbitmqctl -q await_startup >/dev/null 2>&1; }
redis_up() { [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]; }

wait_for() {
    local name=$1 check=$2 i
    for ((i = 0; i < WAIT_SECONDS; i++)); do
        if "$check"; then
            return 0
        fi
        sleep 1
    done
    echo "ensure_services: $name did not answer within ${WAIT_SECONDS}s" >&2
    return 1
}

if ! pg_up; then
    echo "ensure_services: starting PostgreSQL" >&2
    # One cluster version is installed; its directory name under /etc/postgresql is it.
    pg_version=$(ls /etc/postgresql | sort -V | tail -n 1)
    pg_ctlcluster --skip-systemctl-redirect "$pg_version" main start
    wait_for PostgreSQL pg_up
fi

if ! redis_up; then
    echo "ensure_services: starting Redis" >&2
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" \
        --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_for Redis redis_up
fi

# RabbitMQ: the broker of the multi-node test (tests/approvals/durability/test_multi_node.py).
if command -v rabbitmq-server >/dev/null && ! rabbit_up; then
    echo "ensure_services: starting RabbitMQ" >&2
    rabbitmq-server -detached
    wait_for RabbitMQ rabbit_up
fi

exists=$(psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -tAc \
    "SELECT 1 FROM pg_database WHERE datname='$PG_DB'")
if [ "$exists" != "1" ]; then
    psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -q -c "CREATE DATABASE $PG_DB" >/dev/null
fi
