#!/usr/bin/env bash
# make bench: HTTP load runs against an import of the 1,000,000-establishment
# generated dump (made by make bench-import's dump when missing). Load comes
# from wrk on this machine over loopback, 32 connections, BENCH_SECONDS (30)
# per run. Each run prints requests/s, p50, p99 and SQL round trips per
# request (from the server's own counter), and the comparisons the issues ask
# for. Every run stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${BENCH_ESTABLISHMENTS:-1000000}
secs=${BENCH_SECONDS:-30}
conns=${BENCH_CONNECTIONS:-32}
dump=.data/bench/dump-$n
bin=bin/cnpjgraph
work=.data/bench/run
mkdir -p "$work"
: "${DATABASE_URL:?DATABASE_URL must be set (make bench sets it)}"
command -v wrk >/dev/null || { echo "== installing wrk"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
psqlq() { psql "$DATABASE_URL" -XAtq -v ON_ERROR_STOP=1 "$@"; }

"$bin" migrate >/dev/null
live=$(psqlq -c "SELECT coalesce((SELECT (row_counts->>'offices')::bigint FROM snapshots WHERE state = 'live'), 0)")
if [ "$live" -lt $((n * 9 / 10)) ]; then
  [ -f "$dump/Estabelecimentos0.zip" ] || "$bin" generate --establishments "$n" --out "$dump" --seed 1
  echo "== importing the $n-establishment dump"
  "$bin" import "$dump" | tail -n 3
fi

echo "== sampling tax ids"
psqlq -c "SELECT tax_id FROM cnpj.offices TABLESAMPLE SYSTEM (5) REPEATABLE (1) LIMIT 20000" > "$work/taxids"
psqlq -c "SELECT root FROM cnpj.offices GROUP BY root HAVING count(*) >= 1000" > "$work/bigroots"
[ -s "$work/bigroots" ] || { echo "no company with 1,000+ offices in the dump"; exit 1; }
key=$("$bin" key add development --name bench 2>/dev/null | grep -o 'cg_[A-Za-z0-9_-]*' || true)
if [ -z "$key" ]; then
  "$bin" account create development --plan dev --no-key >/dev/null
  key=$("$bin" key add development --name bench | grep -o 'cg_[A-Za-z0-9_-]*')
fi
"$bin" account grant development --plan dev >/dev/null

pid=""
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=""; }
trap stop EXIT
start() { # start ADDR [ENV=VALUE...]
  local addr=$1; shift
  stop
  env ADDR="$addr" "$@" "$bin" serve >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do curl -fs "http://$addr/readyz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server did not become ready"; tail "$work/server.log"; exit 1
}
metric() { curl -fs "http://$1/metrics" | awk -v m="$2" '$1 ~ "^"m"({|$)" {s += $2} END {printf "%d", s}'; }

declare -A RPS P99
run() { # run NAME ADDR IDS PATH_FMT [BODY_FMT]
  local name=$1 addr=$2 ids=$3 fmt=$4 body=${5:-}
  local q0 r0 q1 r1 out
  q0=$(metric "$addr" cnpjgraph_sql_round_trips_total); r0=$(metric "$addr" cnpjgraph_http_requests_total)
  out=$(IDS_FILE="$ids" PATH_FMT="$fmt" BODY_FMT="$body" API_KEY="${KEY:-}" \
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s scripts/bench/lookup.lua "http://$addr" 2>&1)
  q1=$(metric "$addr" cnpjgraph_sql_round_trips_total); r1=$(metric "$addr" cnpjgraph_http_requests_total)
  local rps p50 p99 bad
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  bad=$(echo "$out" | sed -n 's/^non2xx_or_errors=//p')
  RPS[$name]=$rps; P99[$name]=$p99
  printf '%-34s %10s req/s   p50 %8s   p99 %8s   SQL round trips/request %s   errors %s\n' \
    "$name" "$rps" "$p50" "$p99" "$(echo "scale=2; ($q1 - $q0) / ($r1 - $r0)" | bc)" "$bad"
}
ratio() { echo "scale=1; 100 * ${RPS[$1]} / ${RPS[$2]}" | bc; }

A=127.0.0.1:18080
echo "== runs: $conns connections, ${secs}s each, wrk on this machine"
start "$A" AUTH_DISABLED=true
KEY="" run "office (auth off)" "$A" "$work/taxids" "/office/%s?simples=true"
start "$A"
KEY=$key run "office, cached, default strategy" "$A" "$work/taxids" "/office/%s?simples=true"
KEY=$key run "office, strategy=CACHE" "$A" "$work/taxids" "/office/%s?simples=true&strategy=CACHE"
KEY=$key run "company with 1,000+ offices" "$A" "$work/bigroots" "/company/%s"
if curl -fs -o /dev/null -X POST -H "Authorization: $key" -H 'Content-Type: application/json' \
     -d '{"query":"{__typename}"}' "http://$A/graphql"; then
  q='{"query":"query($t: String!) { office(taxId: $t) { taxId company { name members { role { id } person { id name membership { since company { id name offices(first: 5) { totalCount nodes { taxId } } } } } } } } }","variables":{"t":"%s"}}'
  KEY=$key run "graphql nested (5 levels)" "$A" "$work/taxids" "/graphql" "$q"
fi
stop

echo
echo "== summary"
printf 'auth and rate limiting on / off:         %s%% of throughput\n' "$(ratio 'office, cached, default strategy' 'office (auth off)')"
printf 'default strategy / strategy=CACHE:       %s%% of throughput\n' "$(ratio 'office, cached, default strategy' 'office, strategy=CACHE')"
