#!/usr/bin/env bash
# bench/million.sh (run by make bench unless MILLION=0): N orders (1,000,000 by default) of
# bench/genorders's shape, each store in turn, the real binary on loopback: `orderd import`
# into a new SQLite file / an empty Redis (wall time, orders a second, peak RSS by
# /usr/bin/time -v), then `orderd serve` on it: its first `GET /v1/store/orders` (time to the
# whole body), then bench/walk over every order at pageSize 1000. Prints a Markdown section;
# with FIGURES=FILE also writes "STORE-{rate,rss,list,walk} VALUE" lines for the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
SEED=${SEED:-1}
FIGURES=${FIGURES:-/dev/null}
work=$(mktemp -d) pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/orderd" ./cmd/orderd
CGO_ENABLED=0 go build -trimpath -o "$work/walk" ./bench/walk
go run ./bench/genorders -n "$N" -seed "$SEED" > "$work/orders.json"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up() { for _ in $(seq 300); do curl -s -o /dev/null "http://$1/healthz" && return 0; sleep 0.1; done; echo "million: $1 did not start" >&2; exit 1; }
commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
: > "$FIGURES"

echo "## $(commas "$N") orders"
echo
echo "bench/million.sh: \`genorders -n $N -seed $SEED\` ($(du -m "$work/orders.json" | cut -f1) MB of JSON); \`orderd import\` into a new SQLite file and"
echo "an empty Redis after a \`sync\` (wall time, peak RSS of \`/usr/bin/time -v\`); then \`orderd serve\` on it: the time"
echo "of its first \`GET /v1/store/orders\` to the whole body (curl), and bench/walk over every order at pageSize 1000 (each"
echo "order exactly once, or it fails)."
echo
echo "| store | import | orders/s | import peak RSS | first v1 list | list size | walk, pageSize 1000 |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for mode in embedded redis; do
  echo "   $mode" >&2
  if [ "$mode" = embedded ]; then
    store=(--db "$work/million.db")
  else
    rport=$(free_port)
    redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no >/dev/null & pids+=($!)
    for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
    store=(--redis-url "redis://127.0.0.1:$rport/0")
  fi
  sync # the writeback of what came before (the input, the other store) is not the import's
  t0=$(date +%s.%N)
  ORDERD_REDIS_URL= /usr/bin/time -v "$work/orderd" import "${store[@]}" --orders "$work/orders.json" 2> "$work/import.err" >/dev/null \
    || { cat "$work/import.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
  rate=$(awk -v n="$N" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
  rss=$(awk '/Maximum resident set size/ {printf "%.0f", $6 / 1024}' "$work/import.err")
  key=$(ORDERD_REDIS_URL= "$work/orderd" keys create $big --name million "${store[@]}" 2>/dev/null)
  addr=127.0.0.1:$(free_port)
  ORDERD_REDIS_URL= "$work/orderd" serve --addr "$addr" "${store[@]}" --shutdown-delay 0 >/dev/null 2>&1 & pid=$!; pids+=($pid)
  up "$addr"
  read -r code list bytes <<< "$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' \
    -H "Authorization: Bearer $key" "http://$addr/v1/store/orders")"
  [ "$code" = 200 ] || { echo "million: $mode list answered $code" >&2; exit 1; }
  read -r walk _ pages <<< "$("$work/walk" -url "http://$addr" -key "$key" -size 1000 -want "$N")"
  printf '| %s | %s s | %s | %s MB | %.2f s | %s MB | %.2f s, %s pages |\n' "$mode" "$secs" "$(commas "$rate")" "$rss" \
    "$list" "$((bytes / 1000000))" "$walk" "$pages"
  printf '%s-rate %s\n%s-rss %s\n%s-list %.2f\n%s-walk %.2f\n' "$mode" "$rate" "$mode" "$rss" "$mode" "$list" "$mode" "$walk" >> "$FIGURES"
  kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=()
done
