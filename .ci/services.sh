#!/usr/bin/env bash
# Start the database servers the ODBC tests use, when they are not already up.
set -u
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
if ! mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
fi
for _ in $(seq 1 50); do  # up to ~10 s for both to answer
    pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null \
        && mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1 && exit 0
    sleep 0.2
done
echo "warning: PostgreSQL or MariaDB did not answer; the ODBC tests will fail" >&2
