#!/usr/bin/env bash
# Runs a command with the throwaway test services up, and stops them however
# the command ends:  scripts/with_test_services.sh CMD [ARGS...]
#
# Outside CI a failed service start only means the service tests skip (they
# say how to enable them); under CI=true it fails the run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

env_file="service-data/test-services.$$.env"
services() { VBA_TEST_SERVICES_ENV="$env_file" scripts/test_services.sh "$1"; }
llm_server() { VBA_TEST_SERVICES_ENV="$env_file" scripts/llm_test_server.sh "$1"; }

# The LLM server's lines are read from the env file, so it stops first.
trap 'llm_server stop; services stop' EXIT
trap 'exit 130' INT TERM

if ! services start; then
    if [ "${CI:-}" = true ]; then
        echo "test services did not start (CI=true): failing" >&2
        exit 1
    fi
    echo "test services did not start: the MariaDB tests will be skipped" >&2
fi
# The real LLM server (llama-cpp-python, built from source once per machine).
if ! llm_server start; then
    if [ "${CI:-}" = true ]; then
        echo "the LLM test server did not start (CI=true): failing" >&2
        exit 1
    fi
    echo "the LLM test server did not start: the real-server tests will be skipped" >&2
fi
# The report's browser test loads its HTML in headless chromium (Debian's package).
if chromium_path=$(scripts/test_services.sh browser); then
    export VBA_TEST_CHROMIUM="$chromium_path"
elif [ "${CI:-}" = true ]; then
    echo "chromium could not be installed (CI=true): failing" >&2
    exit 1
else
    echo "chromium could not be installed: the browser test will be skipped" >&2
fi
if [ -f "$env_file" ]; then
    set -a
    # shellcheck disable=SC1090
    . "./$env_file"
    set +a
fi
"$@"
