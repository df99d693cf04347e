#!/usr/bin/env bash
# make bench-import: generates a dump with BENCH_ESTABLISHMENTS (default
# 1,000,000) establishments, imports it, and prints rows/s per table, total
# rows/s, wall time, peak RSS, each phase's time and the snapshot's size
# with its largest indexes; then loads the same rows with plain COPY from
# already-decoded files into bare unlogged tables (the PostgreSQL ceiling on
# this machine) and prints our ratio to it. BENCH_WORD_TABLES=1 imports with
# the name searches' word tables (--word-tables), else without them, whatever
# the live snapshot has. BENCH_OFFICE_LOOKUPS=0 imports without
# office_lookups (--office-lookups=false).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${BENCH_ESTABLISHMENTS:-1000000}
dump=.data/bench/dump-$n
bin=bin/cnpjgraph
: "${DATABASE_URL:?DATABASE_URL must be set (make bench-import sets it)}"
need=()
[ -x /usr/bin/time ] || need+=(time)
command -v bc >/dev/null || need+=(bc)
command -v unzip >/dev/null || need+=(unzip)
if [ ${#need[@]} -gt 0 ]; then
  scripts/apt-install.sh "${need[@]}"
fi

if [ ! -f "$dump/Estabelecimentos0.zip" ]; then
  echo "== generating a dump with about $n establishments into $dump"
  rm -rf "$dump"
  "$bin" generate --establishments "$n" --out "$dump" --seed 1
fi
"$bin" migrate >/dev/null

wt=false; [ -n "${BENCH_WORD_TABLES:-}" ] && wt=true
ol=true; [ "${BENCH_OFFICE_LOOKUPS:-1}" = 0 ] && ol=false
echo "== importing (cnpjgraph import --allow-shrink --word-tables=$wt --office-lookups=$ol: a dump of another size than the last one measured)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s.%N)
/usr/bin/time -f 'peak RSS: %M KiB' "$bin" import --allow-shrink --word-tables="$wt" --office-lookups="$ol" --municipalities "$dump/TABMUN.CSV" --countries "$dump/paises-m49.csv" "$dump" 2>&1 | tee "$log" | grep -v '^\s*$' | tail -n 40
end=$(date +%s.%N)
wall=$(echo "$end - $start" | bc)

psqlq() { psql "$DATABASE_URL" -XAtq -v ON_ERROR_STOP=1 "$@"; }
big=$(psqlq -c "SELECT (row_counts->>'companies')::bigint + (row_counts->>'offices')::bigint + (row_counts->>'members')::bigint + (row_counts->>'simples')::bigint FROM snapshots WHERE state = 'live'")
rss=$(grep -o 'peak RSS: [0-9]* KiB' "$log" | tail -1 | awk '{print $3}')
ours=$(echo "$big / $wall" | bc)
# The live snapshot's tables with their indexes and TOAST, and its five
# largest indexes (the issues ask for both beside the import's speed).
snapshot_size=$(psqlq -c "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c
  WHERE c.relnamespace = 'cnpj'::regnamespace AND c.relkind = 'r'")
largest_indexes=$(psqlq -c "SELECT string_agg(relname || ' ' || pg_size_pretty(s), ', ' ORDER BY s DESC) FROM (
  SELECT c.relname, pg_relation_size(c.oid) s FROM pg_class c
  WHERE c.relnamespace = 'cnpj'::regnamespace AND c.relkind = 'i' ORDER BY s DESC LIMIT 5) t")
phases=$(grep -o 'phase [A-Za-z ,()]* done in [0-9hm.]*[µm]*s' "$log" | sed 's/^phase //; s/ (.*)//; s/ done in / /' | paste -sd, - | sed 's/,/, /g')

echo "== plain COPY ceiling: the same rows, decoded to UTF-8 files, into bare unlogged tables"
dec=.data/bench/decoded-$n
if [ ! -f "$dec/.done" ]; then
  rm -rf "$dec"; mkdir -p "$dec"
  for z in "$dump"/Empresas*.zip "$dump"/Estabelecimentos*.zip "$dump"/Socios*.zip "$dump"/Simples.zip; do
    unzip -p "$z" | tr -d '\000' | iconv -f latin1 -t utf8 > "$dec/$(basename "$z" .zip).csv"
  done
  touch "$dec/.done"
fi
cols() { local n=$1 s=""; for i in $(seq 1 "$n"); do s="$s${s:+, }c$i text"; done; echo "$s"; }
psqlq -c "DROP SCHEMA IF EXISTS bench_ceiling CASCADE; CREATE SCHEMA bench_ceiling;
  CREATE UNLOGGED TABLE bench_ceiling.empresas ($(cols 7));
  CREATE UNLOGGED TABLE bench_ceiling.estabelecimentos ($(cols 30));
  CREATE UNLOGGED TABLE bench_ceiling.socios ($(cols 11));
  CREATE UNLOGGED TABLE bench_ceiling.simples ($(cols 7));"
cstart=$(date +%s.%N)
for f in "$dec"/*.csv; do
  case "$(basename "$f")" in
    Empresas*) t=empresas ;; Estabelecimentos*) t=estabelecimentos ;; Socios*) t=socios ;; *) t=simples ;;
  esac
  psqlq -c "\\copy bench_ceiling.$t FROM '$f' (FORMAT csv, DELIMITER ';', QUOTE '\"')"
done
cend=$(date +%s.%N)
crows=$(psqlq -c "SELECT (SELECT count(*) FROM bench_ceiling.empresas) + (SELECT count(*) FROM bench_ceiling.estabelecimentos) + (SELECT count(*) FROM bench_ceiling.socios) + (SELECT count(*) FROM bench_ceiling.simples)")
cwall=$(echo "$cend - $cstart" | bc)
ceiling=$(echo "$crows / $cwall" | bc)
psqlq -c "DROP SCHEMA bench_ceiling CASCADE"

echo
echo "== rows/s per table (rows of its files over their load time; files load two at a time)"
grep -o 'loaded [A-Za-z]*[0-9]*\.zip: [0-9]* rows in [0-9.]*[µm]*s' "$log" | awk '
  { f=$2; sub(/[0-9]*\.zip:$/, "", f); rows=$3; d=$6
    if (d ~ /µs$/) { sub(/µs$/, "", d); d/=1e6 } else if (d ~ /ms$/) { sub(/ms$/, "", d); d/=1e3 } else { sub(/s$/, "", d) }
    r[f]+=rows; t[f]+=d }
  END { for (f in r) if (f ~ /^(Empresas|Estabelecimentos|Socios|Simples)$/) printf "  %-18s %9d rows  %8.0f rows/s\n", f, r[f], r[f]/t[f] }'

echo
echo "== bench-import summary ($n establishments)"
printf 'rows in the four big files: %s\n' "$big"
printf 'import wall time:           %.1f s (swap included)\n' "$wall"
printf 'import rows/s:              %s\n' "$ours"
printf 'importer peak RSS:          %s MiB\n' "$(( ${rss:-0} / 1024 ))"
printf 'plain COPY ceiling:         %s rows/s (%s rows in %.1f s)\n' "$ceiling" "$crows" "$cwall"
printf 'ratio to the ceiling:       %s%%\n' "$(echo "100 * $ours / $ceiling" | bc)"
printf 'phases:                     %s\n' "$phases"
printf 'snapshot size:              %s (largest indexes: %s)\n' "$snapshot_size" "$largest_indexes"
printf 'database size:              %s (accounts, usage and bench tables included)\n' \
  "$(psqlq -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
