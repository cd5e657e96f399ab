#!/usr/bin/env bash
# Measures `orderd import` of N orders (default a million, 112 MB of JSON by bench/genorders)
# into a new SQLite file and into an empty Redis, then the same file again (nothing changes):
# the wall time of the whole command (the Redis reindex included), orders a second, and the
# peak RSS from /usr/bin/time -v. Figures on a shared 2-core machine move by a second or two:
# ROUNDS runs each, all printed.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cleanup() { redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/orderd" ./cmd/orderd
go run ./bench/genorders -n "$N" >"$work/orders.json"
echo "$N orders, $(du -m "$work/orders.json" | cut -f1) MB of JSON"
redis-server --port "$port" --save '' --appendonly no --daemonize yes --logfile "$work/redis.log"
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done

run() { # run LABEL ARGS...: one import, timed
  local label=$1
  shift
  /usr/bin/time -v "$work/orderd" import --orders "$work/orders.json" "$@" 2>"$work/time" >/dev/null || { cat "$work/time"; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$work/time")
  printf '%-18s %6.2f s  %7.0f orders/s  peak RSS %4d MB   %s\n' "$label" "$wall" "$(echo "$N / $wall" | bc -l)" "$rss" "$(head -1 "$work/time")"
}
for _ in $(seq "$ROUNDS"); do
  rm -f "$work"/orderd.db*
  run "sqlite, new file" --db "$work/orderd.db"
  run "sqlite, again" --db "$work/orderd.db"
  redis-cli -p "$port" flushall >/dev/null
  run "redis, empty" --redis-url "redis://127.0.0.1:$port"
  run "redis, again" --redis-url "redis://127.0.0.1:$port"
done
