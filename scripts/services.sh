#!/usr/bin/env bash
# Throwaway services for the tests: a PostgreSQL server in a temporary directory, on a unix
# socket in that directory only (no TCP port), owned by an unprivileged user when run as
# root (initdb refuses root). Source it, then:
#   pg_start   sets VOUCH_TEST_PG (the URL the store tests use) and VOUCH_REQUIRE_PG=1
#   pg_stop    stops the server and removes the directory
# Debian's postgresql package puts initdb and pg_ctl under /usr/lib/postgresql/VERSION/bin.

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return 0; }
  echo "services.sh: no PostgreSQL server binaries (install Debian's postgresql)" >&2
  return 1
}

pg_as() {  # runs "$@" as the server's user
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi
}

pg_start() {
  local bin
  bin=$(pg_bin) || return 1
  PG_USER=$(id -un)
  if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then PG_USER=postgres; else PG_USER=nobody; fi
  fi
  PG_DIR=$(mktemp -d /tmp/vouch-pg.XXXXXX)
  chmod 755 "$PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$PG_USER" "$PG_DIR"
  pg_as "$bin/initdb" -D "$PG_DIR/data" -U vouch --auth=trust -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c fsync=off -c max_connections=60" \
    start >/dev/null || { cat "$PG_DIR/server.log" >&2; return 1; }
  pg_as "$bin/createdb" -h "$PG_DIR" -U vouch vouch_test || return 1
  PG_BIN=$bin
  export PG_DIR PG_USER PG_BIN
  export VOUCH_TEST_PG="postgresql://vouch@/vouch_test?host=$PG_DIR"
  export VOUCH_REQUIRE_PG=1
  echo "services.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $PG_DIR (VOUCH_TEST_PG)"
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  unset PG_DIR
}
