#!/usr/bin/env bash
# Start the servers the tests use (PostgreSQL, MariaDB, Redis), when they are not already up.
set -u
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
if ! mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
for _ in $(seq 1 50); do  # up to ~10 s for all three to answer
    pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null \
        && mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1 \
        && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && exit 0
    sleep 0.2
done
echo "warning: PostgreSQL, MariaDB or Redis did not answer; the tests that need them will fail" >&2
