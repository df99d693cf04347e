#!/usr/bin/env bash
# Interleaved A/B runs of two cnpjgraph binaries over the same URLs: how
# docs/benchmarks.md measures a change against the binary before it.
#
#   scripts/bench/compare.sh BIN_A BIN_B URLS [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Both binaries serve the import at $DATABASE_URL at once (A on 127.0.0.1:8090,
# B on :8091); each round runs wrk against one and then the other, the order
# alternating, so a noisy minute on the shared machine falls on both. URLS
# holds one path per line (search URLs from make bench-search's draw,
# .data/bench/run/search-N.urls, say); API_KEY is the key sent (make bench
# prints how to make one). URLS may instead hold ids, with PATH_FMT the
# path around each one (%s), and BODY_FMT, if set, a body to POST with the
# id in it (a GraphQL query: PATH_FMT=/graphql). Prints one line per run: A
# or B, req/s, p50 and p99, the server's CPU per request (from /proc), and
# the count of answers that were not 2xx, if any. ACCEPT_ENCODING, if set, is
# sent as the Accept-Encoding of every request. Stops both servers. A
# wrapper script that execs the binary (to set its environment) keeps its
# pid, so its CPU is read too.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BIN_A BIN_B URLS [ROUNDS] [SECONDS] [CONNECTIONS]" >&2; exit 2; }
a=$1 b=$2 urls=$3 rounds=${4:-4} secs=${5:-8} conns=${6:-8}
: "${DATABASE_URL:?set DATABASE_URL to the import to serve}"
: "${API_KEY:?set API_KEY to a key of an account with credits}"
here=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || "$here/../apt-install.sh" wrk # as make bench
log=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$log"' EXIT

serve() { # BIN PORT
  ADDR=127.0.0.1:$2 DB_CONN_MAX_IDLE_TIME=1s "$1" serve >"$log/$2.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$2/healthz" >/dev/null 2>&1 && return
    sleep 0.2
  done
  echo "$1 did not start on :$2"; tail "$log/$2.log"; exit 1
}
serve "$a" 8090
serve "$b" 8091
# Where autovacuum is off, as make bench: every priced request updates the
# account's row, and its dead versions slow every later one (the ledger's
# checks walk them too), so later rounds would be slower than earlier ones.
psql "$DATABASE_URL" -XAtq -c "VACUUM accounts"
if [ "$(psql "$DATABASE_URL" -XAtq -c "SHOW autovacuum")" = off ]; then
  (while sleep 5; do psql "$DATABASE_URL" -XAtq -c "VACUUM accounts" || exit 0; done) &
  pids+=($!)
fi

threads=2; [ "$conns" -lt 2 ] && threads=1 # wrk wants a connection per thread
tick=$(getconf CLK_TCK)
cpu() { # PID: the process's CPU time so far, in clock ticks
  local f; read -r -a f < "/proc/$1/stat"; echo $((f[13] + f[14]))
}
run() { # PORT NAME PID
  local c0 c1
  c0=$(cpu "$3")
  IDS_FILE=$urls PATH_FMT=${PATH_FMT:-%s} BODY_FMT=${BODY_FMT:-} wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -s "$here/lookup.lua" "http://127.0.0.1:$1" >"$log/wrk" 2>&1
  c1=$(cpu "$3")
  awk -v n="$2" -v ticks=$((c1 - c0)) -v tick="$tick" '/requests in/ {q=$1} /Requests\/sec/ {r=$2} / 50%/ {p50=$2} / 99%/ {p99=$2} /Non-2xx/ {e=$0}
    END {printf "%s %s req/s, p50 %s p99 %s, server CPU %.0f µs/request %s\n", n, r, p50, p99, (q ? ticks / tick * 1e6 / q : 0), e}' "$log/wrk"
}
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 1 ]; then run 8090 A "${pids[0]}"; run 8091 B "${pids[1]}"; else run 8091 B "${pids[1]}"; run 8090 A "${pids[0]}"; fi
done
