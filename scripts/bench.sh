#!/usr/bin/env bash
# make bench: HTTP load runs against an import of the 1,000,000-establishment
# generated dump (made by make bench-import's dump when missing), beside
# PostgreSQL's own ceiling measured in the same run. Load comes from wrk on
# this machine over loopback, BENCH_SECONDS (30) per run, BENCH_REPEAT (3)
# interleaved rounds, medians. Tax ids are drawn uniformly from ALL offices
# of the import, so no cache can hold the working set. Each run prints
# requests/s, p50, p99 and SQL round trips per request (the server's own
# counter), and the CPU time each request cost the server, PostgreSQL and
# the load generator. Every run stops by itself; traffic stays on 127.0.0.1.
#
# BENCH_BASELINE=path/to/an/older/cnpjgraph adds its office, company and
# GraphQL runs, interleaved with these, to compare two versions in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${BENCH_ESTABLISHMENTS:-1000000}
secs=${BENCH_SECONDS:-30}
reps=${BENCH_REPEAT:-3}
baseline=${BENCH_BASELINE:-}
only=${BENCH_ONLY:-all}            # all, lookups or search
search_secs=${BENCH_SEARCH_SECONDS:-10}
dump=.data/bench/dump-$n
bin=bin/cnpjgraph
work=.data/bench/run
mkdir -p "$work"
: "${DATABASE_URL:?DATABASE_URL must be set (make bench sets it)}"
[ -x /usr/bin/time ] || scripts/apt-install.sh time
command -v wrk >/dev/null || scripts/apt-install.sh wrk
command -v pgbench >/dev/null || scripts/apt-install.sh postgresql-client
command -v jq >/dev/null || scripts/apt-install.sh jq
psqlq() { psql "$DATABASE_URL" -XAtq -v ON_ERROR_STOP=1 "$@"; }

"$bin" migrate >/dev/null
live=$(psqlq -c "SELECT coalesce((SELECT (row_counts->>'offices')::bigint FROM snapshots WHERE state = 'live'), 0)")
if [ "$live" -lt $((n * 9 / 10)) ]; then
  [ -f "$dump/Estabelecimentos0.zip" ] || "$bin" generate --establishments "$n" --out "$dump" --seed 1
  echo "== importing the $n-establishment dump"
  "$bin" import "$dump" | tail -n 3
fi

echo "== tax ids: every office of the import; pgbench's id table"
psqlq -c "SELECT tax_id FROM cnpj.offices" > "$work/taxids"
shuf -n 2000 --random-source=<(yes) "$work/taxids" > "$work/hot-taxids"
psqlq -c "SELECT root FROM cnpj.offices GROUP BY root HAVING count(*) >= 1000" > "$work/bigroots"
[ -s "$work/bigroots" ] || { echo "no company with 1,000+ offices in the dump"; exit 1; }
offices=$(wc -l < "$work/taxids")
# pgbench cannot read a file of ids: a numbered copy of the tax ids lets its
# script draw one uniformly (\set i random(1, N)) and read the office row by
# primary key in the same statement.
psqlq -c "CREATE SCHEMA IF NOT EXISTS bench; DROP TABLE IF EXISTS bench.ids;
  CREATE TABLE bench.ids AS SELECT row_number() OVER ()::int AS i, tax_id FROM cnpj.offices;
  ALTER TABLE bench.ids ADD PRIMARY KEY (i); ANALYZE bench.ids"
printf '\\set i random(1, %d)\nSELECT o.* FROM cnpj.offices o WHERE o.tax_id = (SELECT tax_id FROM bench.ids WHERE i = :i);\n' "$offices" > "$work/ceiling.sql"

# The bench account's earlier runs: their keys and their usage rows (one
# per request, ~170 MB a run) are of no further use.
psqlq -c "DELETE FROM api_keys WHERE name = 'bench' AND account_id IN (SELECT id FROM accounts WHERE name = 'development');
  DELETE FROM usage WHERE account_id IN (SELECT id FROM accounts WHERE name = 'development')" >/dev/null
key=$("$bin" key add development --name bench 2>/dev/null | grep -o 'cg_[A-Za-z0-9_-]*' || true)
if [ -z "$key" ]; then
  "$bin" account create development --plan dev --no-key >/dev/null
  key=$("$bin" key add development --name bench | grep -o 'cg_[A-Za-z0-9_-]*')
fi
# A full run spends ~400,000 credits on search pages, past the plan's daily
# allowance after a few runs in a day: add a day's worth for this one.
"$bin" account grant development --plan dev --credits 1000000 >/dev/null
# The account's row takes an update per priced request (the search runs'
# pages, 700 a second): where autovacuum is off (this project's CI machines),
# its dead versions would pile up and slow every authenticated request
# (README, "Accounts and keys"), so the run stands in for autovacuum.
psqlq -c "VACUUM ANALYZE accounts, api_keys, usage, search_tokens"

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; pids=(); }
trap stop EXIT
if [ "$(psqlq -c "SHOW autovacuum")" = off ]; then
  echo "== autovacuum is off on this server: VACUUM accounts every 5 s during the runs"
  (while sleep 5; do psqlq -c "VACUUM accounts" || exit 0; done) &
  pids+=($!)
fi
start() { # start BINARY ADDR LOG [ENV=VALUE...]
  local b=$1 addr=$2 log=$3; shift 3
  # Another server on the address would answer the health check and be
  # measured in this one's place.
  if curl -fs "http://$addr/healthz" >/dev/null 2>&1; then
    echo "something already answers on $addr: stop it first"; exit 1
  fi
  # Idle connections close within a second: the servers of the other runs
  # (and pgbench) would otherwise find max_connections taken.
  env ADDR="$addr" DB_CONN_MAX_IDLE_TIME=1s "$@" "$b" serve >"$work/$log" 2>&1 &
  pids+=($!)
  LOGS[$addr]=$work/$log
  SERVER[$addr]=$! # env execs the server: the same process
  for _ in $(seq 1 100); do
    kill -0 "${SERVER[$addr]}" 2>/dev/null || { echo "server $addr exited"; tail "$work/$log"; exit 1; }
    curl -fs "http://$addr/healthz" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "server $addr did not become ready"; tail "$work/$log"; exit 1
}
metric() { curl -fs "http://$1/metrics" | awk -v m="$2" '$1 ~ "^"m"({|$)" {s += $2} END {printf "%d", s}'; }

declare -A RPS P50 P99 TRIPS SP99 BLKS LOGS SERVER CPU_S CPU_P CPU_C
names=()
record() { # record NAME RPS P50 P99 TRIPS SERVER_P99 BLOCKS
  [[ " ${names[*]} " == *" $1 "* ]] || names+=("$1")
  RPS[$1]+="$2 "; P50[$1]+="$3 "; P99[$1]+="$4 "; TRIPS[$1]+="$5 "; SP99[$1]+="${6:--} "; BLKS[$1]+="${7:--} "
}
# CPU per request, in microseconds, from the kernel's counters around a run:
# the server process's own time (/proc/PID/stat), the load generator's
# (/usr/bin/time), and the rest of what the machine's cores did (/proc/stat):
# mostly PostgreSQL's backends, then the kernel's loopback work that no
# process is charged for, the idle servers and the VACUUM loop. pgbench's
# backends exit with it, so "the rest" is measured the same way for all.
# The issue's bars compare throughputs; these say where each request's
# time goes.
tck=$(getconf CLK_TCK)
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
record_cpu() { # record_cpu NAME REQUESTS SERVER_TICKS|- BUSY_TICKS CLIENT_SECONDS
  local n=$2 server=$3 busy=$4 client=$5 rest
  [ "${n:-0}" -gt 0 ] && [ -n "$client" ] || return 0
  [ "$server" = - ] || CPU_S[$1]+="$(echo "$server * 1000000 / $tck / $n" | bc) "
  CPU_C[$1]+="$(echo "$client * 1000000 / $n" | bc) "
  rest=$(echo "(($busy - ${server/-/0}) * 1000000 / $tck - $client * 1000000) / $n" | bc)
  CPU_P[$1]+="$(( rest < 0 ? 0 : rest )) "
}
# Blocks PostgreSQL read from outside its shared buffers (the page cache, or
# the disk when the page cache was reclaimed): a lookup touches several
# tables where the ceiling reads one row, so a small shared_buffers or a
# cold page cache weighs on both, and more on us. Read once the run's
# sessions have ended and flushed their statistics.
blocks_read() { psqlq -c "SELECT blks_read FROM pg_stat_database WHERE datname = current_database()"; }
per_request() { # per_request DELTA REQUESTS
  if [ "${2:-0}" -gt 0 ]; then echo "scale=2; $1 / $2" | bc; else echo -; fi
}
# server_p99 LOG FROM_LINE: the p99 of the handler's own durations (the
# access log's duration_ms) of the API requests logged after FROM_LINE.
# wrk's p99 also holds the time a request waits for a core outside the
# handler, on a machine where wrk, the server and PostgreSQL share 2 cores.
server_p99() {
  tail -n +"$(( $2 + 1 ))" "$1" | grep '"msg":"request"' | grep -v '"route":"/\(healthz\|metrics\)"' |
    sed -n 's/.*"duration_ms":\([0-9.]*\).*/\1/p' | sort -g |
    awk '{a[NR] = $1} END {if (NR == 0) {print "-"; exit}; i = int(NR * 0.99); if (i < 1) i = 1; printf "%.3f\n", a[i]}'
}
run() { # run NAME CONNS ADDR KEY IDS PATH_FMT [BODY_FMT]: one wrk run
  local name=$1 c=$2 addr=$3 key=$4 ids=$5 fmt=$6 body=${7:-}
  local q0 r0 q1 r1 l0 b0 b1 s0 s1 u0 u1 out bad total threads=2
  [ "$c" -lt 2 ] && threads=1
  b0=$(blocks_read)
  q0=$(metric "$addr" cnpjgraph_sql_round_trips_total); r0=$(metric "$addr" cnpjgraph_http_requests_total)
  l0=$(wc -l < "${LOGS[$addr]}")
  s0=$(proc_ticks "${SERVER[$addr]}"); u0=$(busy_ticks)
  out=$(IDS_FILE="$ids" PATH_FMT="$fmt" BODY_FMT="$body" API_KEY="$key" /usr/bin/time -f 'client_cpu %U %S' \
    wrk -t"$threads" -c"$c" -d"${secs}s" --latency -s scripts/bench/lookup.lua "http://$addr" 2>&1)
  s1=$(proc_ticks "${SERVER[$addr]}"); u1=$(busy_ticks)
  q1=$(metric "$addr" cnpjgraph_sql_round_trips_total); r1=$(metric "$addr" cnpjgraph_http_requests_total)
  # The server lets its connections go (idle 1 s), so the next run starts
  # on a quiet PostgreSQL, and their sessions flush their statistics.
  sleep 2; b1=$(blocks_read)
  bad=$(echo "$out" | sed -n 's/^non2xx_or_errors=//p')
  total=$(echo "$out" | awk '/requests in/ {print $1}')
  # A run ends by closing its connections: the requests in flight then end
  # 504, and wrk may read them, one per connection at most. More than that
  # and one in a thousand fails the run.
  if [ "${bad:-0}" -gt $(( ${total:-0} / 1000 + c )) ]; then echo "$name: $bad failed requests"; echo "$out"; exit 1; fi
  [ "${bad:-0}" = 0 ] || echo "  ($name: $bad of $total requests failed, within one in a thousand and one per connection)"
  record "$name" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(echo "$out" | awk '$1 == "50%" {print $2}' | ms)" "$(echo "$out" | awk '$1 == "99%" {print $2}' | ms)" \
    "$(echo "scale=2; ($q1 - $q0) / ($r1 - $r0)" | bc)" "$(server_p99 "${LOGS[$addr]}" "$l0")" \
    "$(per_request $(( b1 - b0 )) $(( r1 - r0 )))"
  record_cpu "$name" "${total:-0}" $(( s1 - s0 )) $(( u1 - u0 )) "$(echo "$out" | awk '/^client_cpu/ {print $2 + $3}')"
  printf '  run %-44s %s req/s\n' "$name" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
}
ceiling() { # ceiling NAME CLIENTS: pgbench, the same duration
  local out b0 b1 u0 u1 n
  b0=$(blocks_read); u0=$(busy_ticks)
  out=$(/usr/bin/time -f 'client_cpu %U %S' \
    pgbench -n -M prepared -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$secs" -f "$work/ceiling.sql" "$DATABASE_URL" 2>&1)
  u1=$(busy_ticks)
  sleep 0.5; b1=$(blocks_read) # pgbench's sessions have ended
  n=$(echo "$out" | awk '/actually processed/ {print $NF}' | cut -d/ -f1)
  record "$1" "$(echo "$out" | awk '/^tps/ {print $3}')" "-" "-" "1" "-" "$(per_request $(( b1 - b0 )) "$n")"
  record_cpu "$1" "${n:-0}" - $(( u1 - u0 )) "$(echo "$out" | awk '/^client_cpu/ {print $2 + $3}')"
  printf '  run %-44s %s tx/s\n' "$1" "$(echo "$out" | awk '/^tps/ {print $3}')"
}
ms() { # a wrk latency (12.3ms, 1.2s, 900us) in milliseconds
  awk '{ v=$1; if (v ~ /us$/) { sub(/us$/,"",v); v/=1000 } else if (v ~ /ms$/) { sub(/ms$/,"",v) } else if (v ~ /s$/) { sub(/s$/,"",v); v*=1000 } printf "%.3f\n", v }'
}
median() { tr ' ' '\n' | grep -v '^$' | grep -v '^-$' | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
report() {
  printf '%-46s %9.0f req/s   p50 %8s ms   p99 %8s ms (server %8s ms)   SQL round trips/request %-4s   blocks read/request %-5s   CPU µs/request: server %s, PostgreSQL and the rest %s, client %s\n' "$1" \
    "$(echo "${RPS[$1]}" | median)" "$(echo "${P50[$1]}" | median)" "$(echo "${P99[$1]}" | median)" \
    "$(echo "${SP99[$1]}" | median)" "$(echo "${TRIPS[$1]}" | median)" "$(echo "${BLKS[$1]}" | median)" \
    "$(echo "${CPU_S[$1]:-}" | median)" "$(echo "${CPU_P[$1]:-}" | median)" "$(echo "${CPU_C[$1]:-}" | median)"
}
cpu_total() { # the median CPU µs per request of a run, server + the rest + client
  local s p c
  s=$(echo "${CPU_S[$1]:-}" | median); p=$(echo "${CPU_P[$1]:-}" | median); c=$(echo "${CPU_C[$1]:-}" | median)
  [ "$p" = - ] && { echo -; return; }
  echo "${s/-/0} + $p + $c" | bc
}
ratio() { echo "scale=1; 100 * $(echo "${RPS[$1]}" | median) / $(echo "${RPS[$2]}" | median)" | bc; }

A=127.0.0.1:18080 # auth, rate limits and credits on
B=127.0.0.1:18081 # AUTH_DISABLED=true, otherwise the same
E=127.0.0.1:18082 # an edge: empty database, upstream = A
O=127.0.0.1:18083 # BENCH_BASELINE, auth on
G=127.0.0.1:18084 # GOMAXPROCS=1 (README: a box shared with PostgreSQL), otherwise as A
start "$bin" "$A" server-a.log
if [ "$only" != search ]; then
start "$bin" "$B" server-b.log AUTH_DISABLED=true
start "$bin" "$G" server-g.log GOMAXPROCS=1
[ -n "$baseline" ] && start "$baseline" "$O" server-o.log
edge_db=${DATABASE_URL%%\?*}_edge
edge_db="${edge_db}?${DATABASE_URL#*\?}"
DATABASE_URL="$edge_db" "$bin" migrate >/dev/null
psql "$edge_db" -XAtq -c "TRUNCATE overlay_records"
start "$bin" "$E" server-e.log DATABASE_URL="$edge_db" AUTH_DISABLED=true UPSTREAM_URL="http://$A" UPSTREAM_KEY="$key"
head -n 2000 "$work/hot-taxids" > "$work/edge-taxids"
echo "== warming the edge's cache with 2,000 tax ids (fetched from A once, then served from its overlay)"
while read -r t; do curl -fs -o /dev/null "http://$E/office/$t?simples=true&strategy=CACHE_IF_ERROR&maxAge=1"; done < "$work/edge-taxids"

gql='{"query":"query($t: String!) { office(taxId: $t) { taxId company { name members { role { id } person { id name membership { nodes { since role { id } company { id name } } } } } } } }","variables":{"t":"%s"}}'
echo "== $reps rounds of interleaved runs, ${secs}s each, wrk and pgbench on this machine"
for i in $(seq 1 "$reps"); do
  ceiling "pgbench ceiling, 32 clients" 32
  run "office, auth on, 32 connections"          32 "$A" "$key" "$work/taxids" "/office/%s?simples=true"
  ceiling "pgbench ceiling, 1 client" 1
  run "office, auth on, 1 connection"            1  "$A" "$key" "$work/taxids" "/office/%s?simples=true"
  run "office, auth off, 32 connections"         32 "$B" ""     "$work/taxids" "/office/%s?simples=true"
  run "office, strategy=CACHE, 32 connections"   32 "$A" "$key" "$work/taxids" "/office/%s?simples=true&strategy=CACHE"
  run "office, hot set of 2,000 ids"             32 "$A" "$key" "$work/hot-taxids" "/office/%s?simples=true"
  run "company with 1,000+ offices"              32 "$A" "$key" "$work/bigroots" "/company/%s"
  run "graphql nested (5 levels)"                32 "$A" "$key" "$work/taxids" "/graphql" "$gql"
  run "edge: office from its own cache"          32 "$E" ""     "$work/edge-taxids" "/office/%s?simples=true&strategy=CACHE"
  run "GOMAXPROCS=1: office, 1 connection"       1  "$G" "$key" "$work/taxids" "/office/%s?simples=true"
  run "GOMAXPROCS=1: office, 32 connections"     32 "$G" "$key" "$work/taxids" "/office/%s?simples=true"
  run "GOMAXPROCS=1: graphql nested"             32 "$G" "$key" "$work/taxids" "/graphql" "$gql"
  if [ -n "$baseline" ]; then
    run "baseline: office, auth on, 32 conns"    32 "$O" "$key" "$work/taxids" "/office/%s?simples=true"
    run "baseline: office, auth on, 1 conn"      1  "$O" "$key" "$work/taxids" "/office/%s?simples=true"
    run "baseline: company with 1,000+ offices"  32 "$O" "$key" "$work/bigroots" "/company/%s"
    run "baseline: graphql nested (5 levels)"    32 "$O" "$key" "$work/taxids" "/graphql" "$gql"
  fi
done
fi # lookups

if [ "$only" != lookups ]; then
  # shellcheck source=scripts/bench/search.sh
  . scripts/bench/search.sh
fi
stop

echo
[ "$only" = search ] && { search_report; exit 0; }
echo "== medians of $reps runs each ($offices offices, tax ids uniform over all of them, ${secs}s per run)"
for name in "${names[@]}"; do report "$name"; done
echo
printf 'office, 32 connections, as a share of the pgbench ceiling (32 clients): %s%%\n' "$(ratio 'office, auth on, 32 connections' 'pgbench ceiling, 32 clients')"
printf 'office, 1 connection, as a share of the pgbench ceiling (1 client):     %s%%\n' "$(ratio 'office, auth on, 1 connection' 'pgbench ceiling, 1 client')"
# Where a switch between processes is dear (the PVM guests), 32 pgbench
# clients run slower than one, and the 32-client ceiling flatters the
# lookups: say so, with their share of pgbench's faster rate.
if [ "$(echo "$(ratio 'pgbench ceiling, 1 client' 'pgbench ceiling, 32 clients') > 100" | bc)" = 1 ]; then
  printf 'office, 32 connections, as a share of pgbench at 1 client, faster here than at 32: %s%%\n' "$(ratio 'office, auth on, 32 connections' 'pgbench ceiling, 1 client')"
fi
printf 'graphql nested, as a share of the REST office lookup (32 connections):  %s%%\n' "$(ratio 'graphql nested (5 levels)' 'office, auth on, 32 connections')"
# pgbench keeps the cores busy, so its CPU per transaction over the share a
# bar asks for is what a request may cost the whole machine to meet it.
printf 'CPU µs per request (server + PostgreSQL and the rest + client): office at 32 connections %s, where 30%% of the ceiling allows %s; graphql nested %s\n' \
  "$(cpu_total 'office, auth on, 32 connections')" \
  "$(c=$(cpu_total 'pgbench ceiling, 32 clients'); [ "$c" = - ] && echo - || echo "$c * 10 / 3" | bc)" \
  "$(cpu_total 'graphql nested (5 levels)')"
printf 'auth on, as a share of auth off (32 connections):                       %s%%\n' "$(ratio 'office, auth on, 32 connections' 'office, auth off, 32 connections')"
printf 'GOMAXPROCS=1, as a share of the default: office 1 conn %s%% (%s%% of the ceiling), 32 conns %s%%, graphql %s%%\n' \
  "$(ratio 'GOMAXPROCS=1: office, 1 connection' 'office, auth on, 1 connection')" \
  "$(ratio 'GOMAXPROCS=1: office, 1 connection' 'pgbench ceiling, 1 client')" \
  "$(ratio 'GOMAXPROCS=1: office, 32 connections' 'office, auth on, 32 connections')" \
  "$(ratio 'GOMAXPROCS=1: graphql nested' 'graphql nested (5 levels)')"
if [ -n "$baseline" ]; then
  printf 'this version / baseline: office 32 conns %s%%, office 1 conn %s%%, company %s%%, graphql %s%%\n' \
    "$(ratio 'office, auth on, 32 connections' 'baseline: office, auth on, 32 conns')" \
    "$(ratio 'office, auth on, 1 connection' 'baseline: office, auth on, 1 conn')" \
    "$(ratio 'company with 1,000+ offices' 'baseline: company with 1,000+ offices')" \
    "$(ratio 'graphql nested (5 levels)' 'baseline: graphql nested (5 levels)')"
fi
echo "(the pgbench ceiling reads one offices row by primary key, the tax id drawn uniformly through bench.ids: $work/ceiling.sql)"
if [ "$only" = all ]; then search_report; fi
