#!/usr/bin/env bash
# A team on one queue, on this machine: a throwaway PostgreSQL on 127.0.0.1 (Debian's
# `postgresql` package), the team's record set up with two staff and a lead, and the shop over
# Streamable HTTP on one database file (a team shares one system of record; each desk reaches
# it with its own token). Prints the three desk commands to open in three terminals.
# Ctrl-C stops the shop and PostgreSQL and removes everything this made.
#
#   bash scripts/team-demo.sh            # builds target/release/support-desk if needed
#   SUPPORT_DESK_BIN=target/debug/support-desk bash scripts/team-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "PostgreSQL is not installed: apt-get install postgresql (Debian), then run this again" >&2
    exit 1
fi
BIN=${SUPPORT_DESK_BIN:-target/release/support-desk}
if [ ! -x "$BIN" ]; then
    cargo build --release --locked
fi
BIN=$(realpath "$BIN")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
as_owner() {
    # initdb refuses to run as root: the cluster belongs to the unprivileged postgres user.
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

DIR=$(mktemp -d -t desk-team.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres "$DIR" && chmod 755 "$DIR"
PG_PORT=$(free_port)
SHOP_PORT=$(free_port)
ADMIN_PW=$(head -c 24 /dev/urandom | base64 | tr -d "/+=")
printf '%s\n' "$ADMIN_PW" > "$DIR/admin-pw"
chmod 644 "$DIR/admin-pw"

stop() {
    [ -n "${SHOP_PID:-}" ] && kill "$SHOP_PID" 2>/dev/null || true
    as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap stop EXIT

as_owner "$PG_BIN/initdb" -D "$DIR/data" -U admin --pwfile="$DIR/admin-pw" \
    --auth-local=trust --auth-host=scram-sha-256 >"$DIR/initdb.log"
as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/pg.log" -w \
    -o "-p $PG_PORT -h 127.0.0.1 -k $DIR" start >/dev/null
PGPASSWORD=$ADMIN_PW "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U admin desk
ADMIN_URL="postgres://admin@127.0.0.1:$PG_PORT/desk"

PGPASSWORD=$ADMIN_PW "$BIN" team init --store "$ADMIN_URL"
declare -A PASSWORD TOKEN
for person in ana bo lee; do
    PASSWORD[$person]=$(head -c 24 /dev/urandom | base64 | tr -d "/+=")
    TOKEN[$person]=$(head -c 24 /dev/urandom | base64 | tr -d "/+=")
    lead=""
    [ "$person" = lee ] && lead="--lead"
    PERSON_PW=${PASSWORD[$person]} PGPASSWORD=$ADMIN_PW \
        "$BIN" team add "$person" $lead --password-env PERSON_PW --store "$ADMIN_URL"
done

# One shop for the whole team, its staff tokens naming each person (lee as a lead). Its quote
# IDs are seeded as the bundled shop's are, so the desks' replay of the recording follows it.
SHOP_STAFF_TOKENS="ana=${TOKEN[ana]},bo=${TOKEN[bo]},lee=${TOKEN[lee]}:lead" \
    "$BIN" serve shop --http "127.0.0.1:$SHOP_PORT" --db "$DIR/shop.sqlite3" --seed 4217 \
    2>"$DIR/shop.log" &
SHOP_PID=$!

cat > "$DIR/team.toml" <<TOML
# Every desk of this team reaches the one shop over HTTP, with its person's token.
[servers.shop]
url = "http://127.0.0.1:$SHOP_PORT/mcp"
bearer_token_env = "SHOP_TOKEN"
attach_resources = true
# The release of a held refund goes to the team's leads (lee), never to whoever asked.
lead_forms = ["issue_refund"]
TOML
chmod 644 "$DIR/team.toml"

echo
echo "The team's record: $ADMIN_URL (PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'))"
echo "The shop: http://127.0.0.1:$SHOP_PORT/mcp on $DIR/shop.sqlite3"
echo
echo "Open one desk per terminal:"
for person in ana bo lee; do
    echo "  PGPASSWORD=${PASSWORD[$person]} SHOP_TOKEN=${TOKEN[$person]} $BIN --config $DIR/team.toml --data-dir $DIR/$person --store postgres://$person@127.0.0.1:$PG_PORT/desk"
done
echo
echo "What waits for a lead (lee answers from their desk with A, or with approve ID --accept):"
echo "  PGPASSWORD=${PASSWORD[lee]} $BIN approvals --store postgres://lee@127.0.0.1:$PG_PORT/desk"
echo
echo "And the queue as the team's record has it, owners included:"
echo "  PGPASSWORD=${PASSWORD[lee]} $BIN queue --store postgres://lee@127.0.0.1:$PG_PORT/desk"
echo
echo "Ctrl-C stops the shop and PostgreSQL and removes $DIR."
wait "$SHOP_PID" || { echo "the shop stopped:" >&2; tail -n 5 "$DIR/shop.log" >&2; }
