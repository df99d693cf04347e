#!/usr/bin/env bash
# Prints a DATABASE_URL for a PostgreSQL that is up, starting one if needed:
#   1. $DATABASE_URL if set;
#   2. the server on 127.0.0.1:5432 (user postgres), started with
#      pg_ctlcluster if it is installed but down;
#   3. a private cluster under .data/postgres, created with initdb, on port 5433.
set -euo pipefail
log() { echo "postgres.sh: $*" >&2; }

if [ -n "${DATABASE_URL:-}" ]; then echo "$DATABASE_URL"; exit 0; fi

local_url="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
up() { pg_isready -q -h 127.0.0.1 -p "$1" 2>/dev/null; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
export PATH="$PATH:${pgbin}"

if ! command -v pg_isready >/dev/null; then
  "$(dirname "$0")/apt-install.sh" postgresql
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); export PATH="$PATH:$pgbin"
fi

if up 5432; then echo "$local_url"; exit 0; fi
if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
  for v in $(ls /etc/postgresql); do
    log "starting cluster $v/main"
    pg_ctlcluster --skip-systemctl-redirect "$v" main start >&2 || true
  done
  for _ in $(seq 1 30); do up 5432 && { echo "$local_url"; exit 0; }; sleep 0.5; done
fi

# A private cluster owned by the current user (postgres refuses to run as root).
dir="$(cd "$(dirname "$0")/.." && pwd)/.data/postgres"
owner=$(id -un)
run() { if [ "$owner" = root ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
if [ ! -f "$dir/PG_VERSION" ]; then
  log "creating a private cluster in $dir"
  mkdir -p "$dir"; [ "$owner" = root ] && chown postgres "$dir"
  run "initdb -A trust -U postgres -D '$dir'" >&2
fi
if ! up 5433; then
  log "starting the private cluster on port 5433"
  run "pg_ctl -D '$dir' -l '$dir/server.log' -o '-p 5433 -k /tmp' -w start" >&2
fi
echo "postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable"
