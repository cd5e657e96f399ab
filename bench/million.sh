#!/usr/bin/env bash
# bench/million.sh: a million orders as an operator meets them, in both stores, with the real
# binary on loopback: `orderd import` (wall time, orders a second, peak RSS by /usr/bin/time),
# then two instances of `orderd serve` on the store: the first v1 list of one after it starts
# and a warm one, plain and gzipped, its RSS once both are built, and the other's v2 pages (wrk,
# 1 thread, 4 connections) alone, while the first starts again and builds its list again and
# again, and while a client reads the whole list from it again and again. Prints a Markdown section; make bench copies it
# into docs/benchmarks.md. N=100000 bench/million.sh for a quick check.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
DURATION=${DURATION:-10s}
work=$(mktemp -d) pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/orderd" ./cmd/orderd
go run ./bench/genorders -n "$N" > "$work/orders.json"
mib() { awk -v k="$1" 'BEGIN {printf "%.0f MiB", k / 1024}'; }
up() { for _ in $(seq 100); do curl -s -o /dev/null "http://$1/healthz" && return 0; sleep 0.1; done; echo "million: $1 did not start" >&2; exit 1; }
big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
port=$((20000 + RANDOM % 12000)) # below the ephemeral range
tenfold=()

echo "## One million orders"
echo
echo "Made by \`bench/million.sh\` (in \`make bench\`): $N orders ($(du -m "$work/orders.json" | cut -f1) MB of JSON, \`bench/genorders\`),"
echo "the real binary on loopback, each store in turn, default flags, two instances (A, B) on"
echo "the same store. *Import*: \`orderd import\` of the file into an empty store, after a \`sync\`,"
echo "wall time and peak RSS (\`/usr/bin/time -v\`). *First list*: A's first \`GET /v1/store/orders\` after it"
echo "starts, which reads and encodes the list, with nothing else running; *while B pages*: the"
echo "same, the median of the builds below; *warm*: the next one. *RSS*: A's resident memory"
echo "once the plain and the gzip encodings are both built. *v2 page*: B's"
echo "\`GET /v2/store/orders?pageSize=100\` with wrk (1 thread, 4 connections, $DURATION) alone; while A"
echo "builds: for the whole run, A is started again and asked for its first list, again and again;"
echo "and while another client reads the whole list from A again and again. *Fallbacks*: the lines"
echo "in which either instance's limiter said Redis was out (the list's reads must not stall it)."
echo
echo "| store | import | orders/s | import peak RSS | first list | first list while B pages | warm list | first gzip list | warm gzip list | list bytes plain / gzip | A's RSS | B's v2 page p50 / p99: alone | while A builds | while A serves the list | fallbacks |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in embedded redis; do
  port=$((port + 4))
  if [ "$mode" = embedded ]; then
    store=(--db "$work/million.db")
  else
    redis-server --bind 127.0.0.1 --port $((port + 2)) --save '' --appendonly no >/dev/null & pids+=($!)
    for _ in $(seq 50); do redis-cli -p $((port + 2)) ping >/dev/null 2>&1 && break; sleep 0.1; done
    store=(--redis-url "redis://127.0.0.1:$((port + 2))/0")
  fi
  sync # the writeback of what came before (the input, the other store) is not the import's
  t0=$(date +%s.%N)
  ORDERD_REDIS_URL= /usr/bin/time -v "$work/orderd" import "${store[@]}" --orders "$work/orders.json" 2> "$work/import.err" >/dev/null
  t1=$(date +%s.%N)
  secs=$(echo "$t1 - $t0" | bc -l)
  rate=$(echo "$N / $secs" | bc -l | cut -d. -f1)
  import_rss=$(awk '/Maximum resident set size/ {print $6}' "$work/import.err")
  key=$(ORDERD_REDIS_URL= "$work/orderd" keys create $big --name million "${store[@]}" 2>/dev/null)
  a=127.0.0.1:$port b=127.0.0.1:$((port + 1))
  startA() { ORDERD_REDIS_URL= "$work/orderd" serve --addr "$a" "${store[@]}" 2>> "$work/a.log" & pid=$!; pids+=($pid); up "$a"; }
  startA
  ORDERD_REDIS_URL= "$work/orderd" serve --addr "$b" "${store[@]}" 2> "$work/b.log" & pids+=($!)
  up "$b"
  get() { curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' -H "Authorization: Bearer $key" "$@" "http://$a/v1/store/orders"; }
  page() {
    wrk -t1 -c4 -d"$DURATION" --latency -H "Authorization: Bearer $key" "http://$b/v2/store/orders?pageSize=100" |
      awk '/^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {print p50 " / " p99}'
  }
  alone=$(page)
  read -r c1 first bytes <<< "$(get)" # with nothing else running
  read -r c2 warm _ <<< "$(get)"
  read -r c3 gfirst gbytes <<< "$(get -H 'Accept-Encoding: gzip')"
  read -r c4 gwarm _ <<< "$(get -H 'Accept-Encoding: gzip')"
  for c in $c1 $c2 $c3 $c4; do [ "$c" = 200 ] || { echo "million: $mode list answered $c" >&2; exit 1; }; done
  serve_rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  # B's pages while A builds: A starts again and is asked for its first list, again and again
  # for the whole page run (at most 50 times), so that the run is all build, not some.
  kill "$pid"; wait "$pid" 2>/dev/null || true
  touch "$work/building"
  (for _ in $(seq 50); do [ -e "$work/building" ] || break; startA; get >> "$work/builds"; echo >> "$work/builds"
    kill "$pid"; wait "$pid" 2>/dev/null || true; done) & builder=$!
  building=$(page)
  rm -f "$work/building"; wait "$builder"
  loaded=$(awk '$1 == 200 {print $2}' "$work/builds" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  rm -f "$work/builds"
  startA; get >/dev/null
  # Another client reads the whole list until the page run ends (bounded: at most 10,000 reads).
  touch "$work/reading"
  (for _ in $(seq 10000); do [ -e "$work/reading" ] || break; get >/dev/null; done) & reader=$!
  serving=$(page)
  rm -f "$work/reading"; wait "$reader" 2>/dev/null || true
  fallbacks=$(cat "$work/a.log" "$work/b.log" | grep -c 'limits on its own' || true)
  ms() { echo "$1 * 1000" | bc -l | xargs printf '%.0f ms'; }
  printf '| %s | %.1f s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |\n' "$mode" "$secs" "$rate" "$(mib "$import_rss")" \
    "$(ms "$first")" "$(ms "$loaded")" "$(ms "$warm")" "$(ms "$gfirst")" "$(ms "$gwarm")" "$(mib $((bytes / 1024)))" "$(mib $((gbytes / 1024)))" \
    "$(mib "$serve_rss")" "$alone" "$building" "$serving" "$fallbacks"
  kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=()
  tenfold+=("$(printf '%s: import about %.0f s, the first list about %.0f s, the two encodings %s, serve RSS about %s' "$mode" \
    "$(echo "$secs * 10000000 / $N" | bc -l)" "$(echo "$first * 10000000 / $N" | bc -l)" \
    "$(mib $(((bytes + gbytes) / 1024 * (10000000 / N))))" "$(mib $((serve_rss * (10000000 / N))))")")
done
echo
echo "Between runs on this machine these figures move a lot (the Redis import by a third, with"
echo "Redis's own time for the same work). What bounds the Redis import and the first list, and"
echo "the spread over runs, measured by hand: bench/notes.md, *The import of a million orders in"
echo "Redis* and *The list of a million orders in Redis*."
echo
echo "Ten million orders, scaled linearly from these rows (every cost here grows with the orders:"
echo "the list is read, encoded and held whole, once per version, and the next version is built"
echo "beside the current one, so memory needs room for two):"
echo
for line in "${tenfold[@]}"; do echo "- $line."; done
