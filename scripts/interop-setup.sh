#!/usr/bin/env bash
# Installs the peers the interop tests talk to, under target/interop (run it again and it
# reuses what it has):
#   target/interop/venv   Python venv with the official Python SDK, mcp==2.3.0 (PyPI)
#   target/interop/node   @modelcontextprotocol/server-everything, pinned (npm)
#   target/interop/oauth  oauth2-mock-server, a real OAuth 2.0 / OpenID Connect authorization
#                         server, with node 22 from the npm registry's `node` package (it
#                         needs node >= 22.12), for the sign-in tests (tests/it/oauth.rs)
# Then: cargo test --locked --test it interop -- --ignored
set -euo pipefail
cd "$(dirname "$0")/.."

PY_SDK="mcp==2.3.0"
EVERYTHING="@modelcontextprotocol/server-everything@2026.8.31"
OAUTH_SERVER="oauth2-mock-server@9.3.0"
OAUTH_NODE="node@22.23.3"
# server-everything declares no engines; its SDK (@modelcontextprotocol/sdk 1.x) and express 5
# need node >= 18.
NODE_MAJOR_MIN=18

root="$PWD/target/interop"
venv="$root/venv"
node_prefix="$root/node"
mkdir -p "$root"

python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "$PY_SDK"
fi

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt "$NODE_MAJOR_MIN" ]; then
    echo "node >= $NODE_MAJOR_MIN is needed for $EVERYTHING (found: $(node --version 2>/dev/null || echo none))" >&2
    exit 1
fi
package_dir="$node_prefix/node_modules/@modelcontextprotocol/server-everything"
installed_version() { node -p "require('$package_dir/package.json').version" 2>/dev/null || true; }
if [ "$(installed_version)" != "${EVERYTHING##*@}" ]; then
    npm install --prefix "$node_prefix" --save-exact --no-audit --no-fund --loglevel=error "$EVERYTHING"
fi

oauth_prefix="$root/oauth"
oauth_dir="$oauth_prefix/node_modules/oauth2-mock-server"
oauth_version() { node -p "require('$oauth_dir/package.json').version" 2>/dev/null || true; }
if [ "$(oauth_version)" != "${OAUTH_SERVER##*@}" ] || [ ! -x "$oauth_prefix/node_modules/.bin/node" ]; then
    npm install --prefix "$oauth_prefix" --save-exact --no-audit --no-fund --loglevel=error "$OAUTH_NODE" "$OAUTH_SERVER"
fi

echo "python: $venv/bin/python (mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))'))"
echo "server-everything: node $package_dir/dist/index.js ($(installed_version), node $(node --version))"
echo "oauth2-mock-server: $oauth_dir ($(oauth_version), node $("$oauth_prefix/node_modules/.bin/node" --version))"
