# Sourced by scripts/bench.sh (make bench, make bench-search): the search
# mix over the same import and server A (auth on). Ten realistic
# searches, each a set of values drawn from the import (a name word, a name
# word + state, main activity + municipality, state + status + Simples
# optant, founded range + size, a partner's name, an e-mail domain, a CEP
# range, main activity + state, a name word + a company's fact), wrk picking one of the set's URLs at random per request at 8
# connections: first pages, then pages 51 reached by following next 50
# times. Prints req/s, p50 and p99 per search (and the server's own p99 of
# the first pages, from its access log) and the deep/first ratio.

sq() { psqlq -c "$1" > "$2"; }
echo "== search: drawing the values of the 10 searches from the import"
states="ARRAY['SP','RJ','MG','RS','PR','BA','SC','GO','PE','CE']"
sq "SELECT '/office?limit=10&names.in=' || w FROM (SELECT w FROM (SELECT unnest(name_words) w FROM cnpj.companies) t
    GROUP BY w HAVING count(*) BETWEEN 300 AND 30000 ORDER BY random() LIMIT 100) x" "$work/search-1.urls"
sq "SELECT '/office?limit=10&names.in=' || w || '&address.state.in=' || ($states)[1 + floor(random() * 10)::int]
    FROM (SELECT w FROM (SELECT unnest(name_words) w FROM cnpj.companies) t
    GROUP BY w HAVING count(*) BETWEEN 3000 AND 60000 ORDER BY random() LIMIT 100) x" "$work/search-2.urls"
sq "SELECT DISTINCT '/office?limit=10&mainActivity.id.in=' || ltrim(o.main_activity, '0') || '&address.municipality.in=' || m.ibge
    FROM cnpj.offices o TABLESAMPLE SYSTEM (1) JOIN cnpj.municipalities m ON m.code = o.municipality
    WHERE m.ibge IS NOT NULL AND o.main_activity <> '8888888' LIMIT 100" "$work/search-3.urls"
sq "SELECT '/office?limit=10&address.state.in=' || s || '&status.id.in=' || st || '&company.simples.optant.eq=' || opt
    FROM unnest($states) s, unnest(ARRAY[2, 8]) st, unnest(ARRAY['true', 'false']) opt" "$work/search-4.urls"
sq "SELECT '/office?limit=10&founded.gte=' || y || '-01-01&founded.lte=' || (y + 2) || '-12-31&company.size.id.in=' || sz
    FROM generate_series(1990, 2020) y, unnest(ARRAY[1, 3, 5]) sz" "$work/search-5.urls"
sq "SELECT '/person?limit=10&name.in=' || w FROM (SELECT w FROM (SELECT unnest(name_words) w FROM cnpj.persons) t
    GROUP BY w HAVING count(*) BETWEEN 100 AND 30000 ORDER BY random() LIMIT 100) x" "$work/search-6.urls"
sq "SELECT '/office?limit=10&emails.domain.in=' || d FROM (SELECT lower(split_part(email, '@', 2)) d FROM cnpj.offices
    WHERE email IS NOT NULL GROUP BY 1 HAVING count(*) >= 20 ORDER BY random() LIMIT 100) x" "$work/search-7.urls"
sq "SELECT '/office?limit=10&address.zip.gte=' || lpad(p::text, 2, '0') || '000000&address.zip.lte=' || lpad(p::text, 2, '0') || '999999'
    FROM generate_series(1, 99) p" "$work/search-8.urls"
sq "SELECT '/office?limit=10&mainActivity.id.in=' || ltrim(a, '0') || '&address.state.in=' || s
    FROM (SELECT DISTINCT o.main_activity a FROM cnpj.offices o TABLESAMPLE SYSTEM (1) WHERE o.main_activity <> '8888888') x,
    unnest($states) s ORDER BY random() LIMIT 100" "$work/search-9.urls"
# A name word with one of the company's facts the index of the names holds
# beside their words (docs/api.md, "Search"): many matches or none.
sq "SELECT '/office?limit=10&names.in=' || w || '&' || (ARRAY['company.simples.optant.eq=true', 'company.simei.optant.eq=true',
    'company.size.id.in=1', 'company.size.id.in=5', 'company.nature.id.in=2062', 'company.nature.id.in=3999'])[1 + floor(random() * 6)::int]
    FROM (SELECT w FROM (SELECT unnest(name_words) w FROM cnpj.companies) t
    GROUP BY w HAVING count(*) BETWEEN 300 AND 30000 ORDER BY random() LIMIT 100) x" "$work/search-10.urls"
search_names=("" "a name word" "a name word + state" "main activity + municipality" "state + status + Simples optant"
  "founded range + size" "partner name (GET /person)" "e-mail domain" "CEP range" "main activity + state"
  "a name word + company fact")

# Pages 51: follow next 50 times from first pages with enough matches.
deep_n=${BENCH_SEARCH_DEEP:-10}
echo "== search: following next 50 pages deep from up to $deep_n first pages of each search"
deep() { # deep URL: prints the URL of page 51, or nothing
  local url=$1 route=${1%%\?*} next i
  for i in $(seq 1 50); do
    next=$(curl -fs -H "Authorization: $key" "http://$A$url" | jq -r '.next // empty') || return 0
    [ -n "$next" ] || return 0
    url="$route?token=$next"
  done
  echo "$url"
}
export -f deep
export A key
for n in $(seq 1 10); do
  # Not piped into head: a closed pipe would kill the walks (SIGPIPE).
  shuf -n $((deep_n * 3 / 2)) "$work/search-$n.urls" | xargs -P 6 -I{} bash -c 'deep "$@"' _ {} > "$work/search-$n.deep.all"
  head -n "$deep_n" "$work/search-$n.deep.all" > "$work/search-$n.deep"
  printf '  %-34s %3d first-page URLs, %2d deep\n' "${search_names[$n]}" "$(wc -l < "$work/search-$n.urls")" "$(wc -l < "$work/search-$n.deep")"
done

echo "== search: $reps rounds, ${search_secs}s per run, 8 connections"
saved_secs=$secs
secs=$search_secs
for i in $(seq 1 "$reps"); do
  for n in $(seq 1 10); do
    run "search $n first page" 8 "$A" "$key" "$work/search-$n.urls" "%s"
    [ -s "$work/search-$n.deep" ] && run "search $n page 51" 8 "$A" "$key" "$work/search-$n.deep" "%s"
  done
done
secs=$saved_secs

search_report() {
  echo "== search: medians of $reps runs (8 connections, ${search_secs}s each); bar: p99 <= 50 ms, page 51 within 2x of the first"
  printf '%-36s %10s %10s %10s %10s   %10s %10s %10s   %s\n' search "first r/s" "p50 ms" "p99 ms" "server p99" "p51 r/s" "p50 ms" "p99 ms" "p99 p51/first"
  for n in $(seq 1 10); do
    local f="search $n first page" d="search $n page 51"
    printf '%-36s %10.0f %10s %10s %10s   %10s %10s %10s   %s\n' "${search_names[$n]}" \
      "$(echo "${RPS[$f]}" | median)" "$(echo "${P50[$f]}" | median)" "$(echo "${P99[$f]}" | median)" "$(echo "${SP99[$f]}" | median)" \
      "$(echo "${RPS[$d]:-}" | median)" "$(echo "${P50[$d]:-}" | median)" "$(echo "${P99[$d]:-}" | median)" \
      "$( [ -n "${RPS[$d]:-}" ] && echo "scale=2; $(echo "${P99[$d]}" | median) / $(echo "${P99[$f]}" | median)" | bc)"
  done
  echo "index sizes:"
  psqlq -c "SELECT '  ' || c.relname || ' ' || pg_size_pretty(pg_relation_size(c.oid)) FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'cnpj' AND c.relkind = 'i' ORDER BY pg_relation_size(c.oid) DESC"
  echo "  database: $(psqlq -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
}
