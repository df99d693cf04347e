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
command -v wrk >/dev/null || scripts/apt-install.sh wrk
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

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; pids=(); }
trap stop EXIT
start() { # start ADDR LOG [ENV=VALUE...]
  local addr=$1 log=$2; shift 2
  env ADDR="$addr" "$@" "$bin" serve >"$work/$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do curl -fs "http://$addr/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server $addr did not become ready"; tail "$work/$log"; exit 1
}
metric() { curl -fs "http://$1/metrics" | awk -v m="$2" '$1 ~ "^"m"({|$)" {s += $2} END {printf "%d", s}'; }

declare -A RPS P50 P99 TRIPS
run() { # run NAME ADDR KEY IDS PATH_FMT [BODY_FMT]: one load run, figures appended
  local name=$1 addr=$2 key=$3 ids=$4 fmt=$5 body=${6:-}
  local q0 r0 q1 r1 out
  q0=$(metric "$addr" cnpjgraph_sql_round_trips_total); r0=$(metric "$addr" cnpjgraph_http_requests_total)
  out=$(IDS_FILE="$ids" PATH_FMT="$fmt" BODY_FMT="$body" API_KEY="$key" \
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s scripts/bench/lookup.lua "http://$addr" 2>&1)
  q1=$(metric "$addr" cnpjgraph_sql_round_trips_total); r1=$(metric "$addr" cnpjgraph_http_requests_total)
  local bad
  bad=$(echo "$out" | sed -n 's/^non2xx_or_errors=//p')
  [ "${bad:-0}" = 0 ] || { echo "$name: $bad failed requests"; echo "$out"; exit 1; }
  RPS[$name]+="$(echo "$out" | awk '/Requests\/sec/ {print $2}') "
  P50[$name]+="$(echo "$out" | awk '$1 == "50%" {print $2}') "
  P99[$name]+="$(echo "$out" | awk '$1 == "99%" {print $2}') "
  TRIPS[$name]+="$(echo "scale=2; ($q1 - $q0) / ($r1 - $r0)" | bc) "
  printf '  run %-36s %s req/s\n' "$name" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
}
ms() { # a wrk latency (12.3ms, 1.2s, 900us) in milliseconds
  awk '{ v=$1; if (v ~ /us$/) { sub(/us$/,"",v); v/=1000 } else if (v ~ /ms$/) { sub(/ms$/,"",v) } else if (v ~ /s$/) { sub(/s$/,"",v); v*=1000 } printf "%.2f\n", v }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
report() {
  local name=$1
  printf '%-38s %9.0f req/s   p50 %7.2f ms   p99 %7.2f ms   SQL round trips/request %s\n' "$name" \
    "$(echo "${RPS[$name]}" | median)" \
    "$(echo "${P50[$name]}" | tr ' ' '\n' | grep -v '^$' | ms | median)" \
    "$(echo "${P99[$name]}" | tr ' ' '\n' | grep -v '^$' | ms | median)" \
    "$(echo "${TRIPS[$name]}" | median)"
}
ratio() { echo "scale=1; 100 * $(echo "${RPS[$1]}" | median) / $(echo "${RPS[$2]}" | median)" | bc; }

A=127.0.0.1:18080 # auth, rate limits and credits on
B=127.0.0.1:18081 # AUTH_DISABLED=true, otherwise the same
E=127.0.0.1:18082 # an edge: empty database, upstream = A
start "$A" server-a.log
start "$B" server-b.log AUTH_DISABLED=true
edge_db=${DATABASE_URL%%\?*}_edge
edge_db="${edge_db}?${DATABASE_URL#*\?}"
DATABASE_URL="$edge_db" "$bin" migrate >/dev/null
psql "$edge_db" -XAtq -c "TRUNCATE overlay_records"
start "$E" server-e.log DATABASE_URL="$edge_db" AUTH_DISABLED=true UPSTREAM_URL="http://$A" UPSTREAM_KEY="$key"
head -n 2000 "$work/taxids" > "$work/edge-taxids"
echo "== warming the edge's cache with 2,000 tax ids (fetched from A once, then served from its overlay)"
while read -r t; do curl -fs -o /dev/null "http://$E/office/$t?simples=true&strategy=CACHE_IF_ERROR&maxAge=1"; done < "$work/edge-taxids"

gql='{"query":"query($t: String!) { office(taxId: $t) { taxId company { name members { role { id } person { id name membership { nodes { since role { id } company { id name } } } } } } } }","variables":{"t":"%s"}}'
reps=${BENCH_REPEAT:-3}
echo "== $reps rounds of interleaved runs: $conns connections, ${secs}s each, wrk on this machine"
for i in $(seq 1 "$reps"); do
  run "office, auth off"                 "$B" ""     "$work/taxids" "/office/%s?simples=true"
  run "office, auth on (default)"        "$A" "$key" "$work/taxids" "/office/%s?simples=true"
  run "office, strategy=CACHE"           "$A" "$key" "$work/taxids" "/office/%s?simples=true&strategy=CACHE"
  run "company with 1,000+ offices"      "$A" "$key" "$work/bigroots" "/company/%s"
  run "graphql nested (5 levels)"        "$A" "$key" "$work/taxids" "/graphql" "$gql"
  run "edge: office from its own cache"  "$E" ""     "$work/edge-taxids" "/office/%s?simples=true&strategy=CACHE"
done
stop

echo
echo "== medians of $reps runs each ($n establishments, $conns connections, ${secs}s per run)"
for name in "office, auth off" "office, auth on (default)" "office, strategy=CACHE" \
  "company with 1,000+ offices" "graphql nested (5 levels)" "edge: office from its own cache"; do
  report "$name"
done
echo
printf 'auth + rate limits on, as a share of auth off:          %s%% of throughput\n' "$(ratio 'office, auth on (default)' 'office, auth off')"
printf 'default strategy (CACHE_IF_ERROR), as a share of CACHE: %s%% of throughput\n' "$(ratio 'office, auth on (default)' 'office, strategy=CACHE')"
