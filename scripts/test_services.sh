#!/usr/bin/env bash
# Starts and stops the throwaway services the integration tests need.
#
#   scripts/test_services.sh start   install MariaDB if missing, start a fresh
#                                    server on a free port, load the fixture
#                                    world DBs (cata_world, cata_world_noquest,
#                                    world, vba_fixture_types, cata_private),
#                                    write the env file
#   scripts/test_services.sh stop    stop that server, delete its directory
#   scripts/test_services.sh browser install Debian's chromium if missing and
#                                    print the path of its executable (the
#                                    report's headless-browser test uses it)
#
# The env file (default service-data/test-services.env; override with
# VBA_TEST_SERVICES_ENV so parallel runs do not collide) holds
# VBA_TEST_DB_PORT, VBA_TEST_DB_PASSWORD_FILE and VBA_TEST_DB_DIR, which
# tests/project_research/conftest.py and benches/bench_mariadb.py read.
# Set VBA_KEEP_TEST_DB=1 to keep the directory (logs) after `stop`.
set -euo pipefail
cd "$(dirname "$0")/.."

ENV_FILE=${VBA_TEST_SERVICES_ENV:-service-data/test-services.env}
BASE_PORT=${VBA_TEST_DB_BASE_PORT:-33179}
PYTHON=${PYTHON:-python3}
FIXTURE=tests/fixtures/world_db.sql
# Rows of the consistency-rule tests, added to cata_world before it is copied.
FIXTURE_RULES=tests/fixtures/world_db_rules.sql
# cata_world without quest_template, copied from cata_world: load it second.
FIXTURE_NOQUEST=tests/fixtures/world_db_noquest.sql
# cata_world under TrinityCore's default name `world`, copied the same way.
FIXTURE_DEFAULT_NAME=tests/fixtures/world_db_default_name.sql

log() { echo "test_services: $*" >&2; }

have_mariadb() {
    local name dir
    for name in mariadbd mysqld; do
        command -v "$name" >/dev/null 2>&1 && return 0
        for dir in /usr/sbin /usr/bin; do [ -x "$dir/$name" ] && return 0; done
    done
    return 1
}

install_mariadb() {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "mariadbd not found; installing mariadb-server from the distribution (apt-get)"
    local started=$SECONDS
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        mariadb-server mariadb-client >/dev/null
    log "installed mariadb-server in $((SECONDS - started))s"
}

find_chromium() {
    local name
    for name in chromium chromium-browser; do
        command -v "$name" 2>/dev/null && return 0
    done
    return 1
}

browser() {
    find_chromium && return 0
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "chromium not found; installing it from the distribution (apt-get)"
    local started=$SECONDS
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium >/dev/null
    log "installed chromium in $((SECONDS - started))s"
    find_chromium
}

port_free() {
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
with socket.socket() as s:
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
    except (OSError, OverflowError):
        sys.exit(1)
EOF
}

stop_dir() {
    local dir=$1
    [ -d "$dir" ] || return 0
    "$PYTHON" scripts/dev_world_db.py stop --directory "$dir" >&2 || true
    if [ "${VBA_KEEP_TEST_DB:-0}" = 1 ]; then
        log "kept $dir"
    else
        rm -rf "$dir"
    fi
}

start() {
    have_mariadb || install_mariadb
    if [ -f "$ENV_FILE" ]; then  # a previous run did not stop: clean up first
        stop
    fi
    mkdir -p service-data/test-world-db
    local started=$SECONDS port dir attempt
    port=$BASE_PORT
    for attempt in 1 2 3 4 5; do
        while ! port_free "$port"; do
            port=$((port + 1))
            if [ "$port" -gt $((BASE_PORT + 200)) ]; then log "no free port near $BASE_PORT"; return 1; fi
        done
        # Short and unique: the unix socket path must stay below ~100 bytes.
        dir=$(mktemp -d "service-data/test-world-db/run-XXXXXX")
        if "$PYTHON" scripts/dev_world_db.py init --directory "$dir" --port "$port" \
                --database cata_world --database cata_world_noquest --database world \
                --database vba_fixture_types --database cata_private >&2 \
            && "$PYTHON" scripts/dev_world_db.py restore --directory "$dir" --dump "$FIXTURE" >&2 \
            && "$PYTHON" scripts/dev_world_db.py restore --directory "$dir" --dump "$FIXTURE_RULES" >&2 \
            && "$PYTHON" scripts/dev_world_db.py restore --directory "$dir" --dump "$FIXTURE_NOQUEST" >&2 \
            && "$PYTHON" scripts/dev_world_db.py restore --directory "$dir" --dump "$FIXTURE_DEFAULT_NAME" >&2
        then
            mkdir -p "$(dirname "$ENV_FILE")"
            {
                echo "VBA_TEST_DB_PORT=$port"
                echo "VBA_TEST_DB_PASSWORD_FILE=$(cd "$dir" && pwd)/reader.local.txt"
                echo "VBA_TEST_DB_DIR=$(cd "$dir" && pwd)"
            } >"$ENV_FILE"
            log "MariaDB ready on 127.0.0.1:$port in $((SECONDS - started))s ($dir)"
            return 0
        fi
        log "attempt $attempt on port $port failed; log follows"
        tail -n 20 "$dir/mariadb.log" >&2 2>/dev/null || true
        stop_dir "$dir"
        port=$((port + 1))
    done
    log "could not start MariaDB"
    return 1
}

stop() {
    [ -f "$ENV_FILE" ] || return 0
    local dir
    dir=$(sed -n 's/^VBA_TEST_DB_DIR=//p' "$ENV_FILE")
    [ -n "$dir" ] && stop_dir "$dir"
    rm -f "$ENV_FILE"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    browser) browser ;;
    *) echo "usage: $0 start|stop|browser" >&2; exit 2 ;;
esac
