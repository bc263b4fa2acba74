#!/usr/bin/env bash
# The servers the tests use, installed, set up and started when they are not already:
# PostgreSQL (user postgres over 127.0.0.1 without a password, a database `test`), MariaDB
# (root over 127.0.0.1 with an empty password, a database `test`) and Redis. Each step
# runs only when what it makes is missing, so a machine set up already is left as it is.
# The loopback logins without a password are for a test machine, never a server's.
set -u

apt_install() {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# -- PostgreSQL --------------------------------------------------------------------------
command -v pg_ctlcluster >/dev/null || apt_install postgresql postgresql-contrib
PG_VERSION="$(ls /etc/postgresql 2>/dev/null | head -n1)"
PG_HBA="/etc/postgresql/$PG_VERSION/main/pg_hba.conf"
if [ -n "$PG_VERSION" ] && ! grep -Eq '^host +all +(all|postgres) +127\.0\.0\.1/32 +trust' "$PG_HBA"; then
    # pg_hba.conf: the first matching line wins, so this one goes first.
    sed -i '1i host all postgres 127.0.0.1/32 trust' "$PG_HBA"
    pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" main reload 2>/dev/null || true
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" main start || true
fi

# -- MariaDB -----------------------------------------------------------------------------
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server
if ! mariadb-admin --protocol=socket -u root ping >/dev/null 2>&1; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
        || true
fi

# -- Redis -------------------------------------------------------------------------------
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    command -v redis-server >/dev/null || apt_install redis-server
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi

up() {
    pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null \
        && mariadb-admin --protocol=socket -u root ping >/dev/null 2>&1 \
        && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1
}
for _ in $(seq 1 100); do  # up to ~20 s for all three to answer
    up && break
    sleep 0.2
done

# The logins and databases the tests expect (tests/servers.py), made once.
if ! psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
        2>/dev/null | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE test" || true
fi
if ! mariadb --protocol=tcp -h 127.0.0.1 -u root -e "SELECT 1" >/dev/null 2>&1; then
    mariadb --protocol=socket -u root -e \
        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;" || true
fi
mariadb --protocol=tcp -h 127.0.0.1 -u root -e "CREATE DATABASE IF NOT EXISTS test" || true

up || echo "warning: PostgreSQL, MariaDB or Redis did not answer; the tests that need them will fail" >&2
exit 0
