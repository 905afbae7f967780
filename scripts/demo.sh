#!/usr/bin/env bash
# `make demo`: the main job on bundled data, then the lower-level router demo.
#
# Starts the throwaway MariaDB the tests use (scripts/test_services.sh:
# installs MariaDB if missing, loads the small sample world), builds a case
# from the bundled tracker issue against it and a tiny source history
# (python -m viano_bug_analysis.demo_case, output in service-data/demo), and
# stops the database however the demo ends.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
OUT=${VBA_DEMO_OUT:-service-data/demo}
env_file="service-data/demo-services.$$.env"
services() { VBA_TEST_SERVICES_ENV="$env_file" PYTHON="$PY" scripts/test_services.sh "$1"; }

trap 'services stop' EXIT
trap 'exit 130' INT TERM

if ! services start; then
    echo "demo: the sample world database did not start (see the lines above)" >&2
    exit 1
fi
set -a
# shellcheck disable=SC1090
. "./$env_file"
set +a

"$PY" -m viano_bug_analysis.demo_case --out "$OUT" --sample samples/demo \
    --db-port "$VBA_TEST_DB_PORT" --db-password-file "$VBA_TEST_DB_PASSWORD_FILE" || exit $?

echo
echo "== one level down: an investigation batch through the tool router (samples/bug-20)"
"$PY" -m viano_bug_analysis.demo samples/bug-20
