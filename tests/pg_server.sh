#!/usr/bin/env bash
# A throwaway PostgreSQL server for the ledger tests: initdb into DIR, a
# server listening only on a Unix socket in DIR (no TCP), stopped and
# removed by `stop`.  Used as a CTest fixture (CMakeLists.txt) and by hand:
#
#   bash tests/pg_server.sh start DIR     # prints the base URI, writes DIR/uri
#   bash tests/pg_server.sh uri DIR DB    # the URI of database DB (created if missing)
#   bash tests/pg_server.sh stop-immediate DIR   # crash-like stop (pg_ctl -m immediate)
#   bash tests/pg_server.sh restart DIR
#   bash tests/pg_server.sh stop DIR
#   bash tests/pg_server.sh sql DIR URI SQL      # run SQL on the database of URI
#
# initdb refuses to run as root: as root the server runs as the `postgres`
# user (created by Debian's postgresql package) and DIR is handed to it.
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cmd=${1:?usage: pg_server.sh start|uri|stop|stop-immediate|restart DIR [DB]}
dir=${2:?usage: pg_server.sh start|uri|stop|stop-immediate|restart DIR [DB]}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "pg_server.sh: PostgreSQL server binaries not found (Debian: apt-get install postgresql)" >&2
    exit 1
fi
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# a port number only names the socket file (no TCP listener)
port=54329

case $cmd in
start)
    if [ -e "$dir/data/postmaster.pid" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U dpacct --no-instructions >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -c listen_addresses= -p $port -c max_connections=200" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
    echo "postgresql:///postgres?host=$dir&port=$port&user=dpacct" >"$dir/uri"
    cat "$dir/uri"
    ;;
uri)
    db=${3:?pg_server.sh uri DIR DB}
    if ! "$bin/psql" -q -X -v ON_ERROR_STOP=1 "postgresql:///postgres?host=$dir&port=$port&user=dpacct" \
        -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
        "$bin/createdb" -h "$dir" -p "$port" -U dpacct "$db"
    fi
    echo "postgresql:///$db?host=$dir&port=$port&user=dpacct"
    ;;
sql)
    "$bin/psql" -q -X -v ON_ERROR_STOP=1 "${3:?URI}" -c "${4:?SQL}" >/dev/null
    ;;
stop-immediate)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
restart)
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -c listen_addresses= -p $port -c max_connections=200" start >/dev/null
    ;;
stop)
    if [ -e "$dir/data/postmaster.pid" ]; then
        as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "pg_server.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
