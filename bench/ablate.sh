#!/usr/bin/env bash
# bench/ablate.sh: builds of orderd, each with one optimisation taken out, against the ceiling
# and against each other, interleaved, with wrk on loopback (as make bench, fewer rows). It
# prints one line per run: "round path server requests/s p99". docs/benchmarks.md's ablation
# table is made from its output (medians of the rounds' ratios to the ceiling).
#
#   bench/ablate.sh NAME=BINARY[:ENV=VALUE...] ...
#
# e.g. bench/ablate.sh kept=/tmp/orderd gogc100=/tmp/orderd:GOGC=100 nobatch=/tmp/orderd-nobatch
# Every build serves the same 100 orders in both modes (its own SQLite file; its own
# redis-server); MODES=emb or MODES=red runs one. The ceiling is bench/ceiling, reading its
# bytes from the first build. Access lines go to /dev/null, or with LOG=pipe through a pipe to
# a reader, as a deployment's log collector reads them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-3s} MODES=${MODES:-"emb red"}
# A path named notmodified is sent with the list's ETag in If-None-Match, one ending in -gzip
# with Accept-Encoding: gzip.
PATHS=${PATHS:-"list:/v1/store/orders notmodified:/v1/store/orders page:/v2/store/orders?pageSize=100 notfound:/v1/store/orders/999999999"}
work=$(mktemp -d) pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/ceiling" ./bench/ceiling
go run ./bench/genorders -n 100 > "$work/orders.json"
big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768 on), where clients bind
up() { for _ in $(seq 100); do curl -s -o /dev/null "http://$1/healthz" && return 0; sleep 0.1; done; echo "ablate: $1 did not start" >&2; exit 1; }
declare -A ADDR KEY
servers=()
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; envs=()
  [ "$rest" != "$bin" ] && IFS=: read -r -a envs <<< "${rest#*:}"
  for mode in $MODES; do
    s=$name:$mode; servers+=("$s"); port=$((port + 2)); ADDR[$s]=127.0.0.1:$port
    if [ "$mode" = emb ]; then
      store=(--db "$work/$name.db")
    else
      redis-server --bind 127.0.0.1 --port $((port + 1)) --save '' --appendonly no >/dev/null & pids+=($!)
      for _ in $(seq 50); do redis-cli -p $((port + 1)) ping >/dev/null 2>&1 && break; sleep 0.1; done
      store=(--redis-url "redis://127.0.0.1:$((port + 1))/0")
    fi
    ORDERD_REDIS_URL= "$bin" import "${store[@]}" --orders "$work/orders.json" 2>/dev/null
    KEY[$s]=$(ORDERD_REDIS_URL= "$bin" keys create $big --name ablate "${store[@]}" 2>/dev/null)
    if [ "${LOG:-}" = pipe ]; then
      env ORDERD_REDIS_URL= "${envs[@]}" "$bin" serve --addr "${ADDR[$s]}" "${store[@]}" --page-token-secret "$secret" 2> >(cat > /dev/null) & pids+=($!)
    else
      env ORDERD_REDIS_URL= "${envs[@]}" "$bin" serve --addr "${ADDR[$s]}" "${store[@]}" --page-token-secret "$secret" 2>/dev/null & pids+=($!)
    fi
  done
done
for s in "${servers[@]}"; do up "${ADDR[$s]}"; done
port=$((port + 2)); ceil=127.0.0.1:$port
"$work/ceiling" --addr "$ceil" --from "http://${ADDR[${servers[0]}]}" --key "${KEY[${servers[0]}]}" & pids+=($!)
up "$ceil"
printf 'wrk.method = "DELETE"\n' > "$work/delete.lua"
etag=$(curl -s -o /dev/null -D - -H "Authorization: Bearer ${KEY[${servers[0]}]}" "http://${ADDR[${servers[0]}]}/v1/store/orders" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')
run() { wrk -t2 -c32 -d"$DURATION" --latency "$@" > "$work/out" 2>&1; awk '/Requests\/sec:/ {r=$2} /^ +99%/ {p=$2} END {print r, p}' "$work/out"; }
for round in $(seq "$ROUNDS"); do
  for entry in $PATHS; do
    name=${entry%%:*}; path=${entry#*:}; extra=()
    case $name in
      notfound) extra=(-s "$work/delete.lua") ;;
      notmodified) extra=(-H "If-None-Match: $etag") ;;
      *-gzip) extra=(-H "Accept-Encoding: gzip") ;;
    esac
    echo "$round $name ceiling $(run "${extra[@]}" -H "Authorization: Bearer ${KEY[${servers[0]}]}" "http://$ceil$path")"
    for s in "${servers[@]}"; do
      echo "$round $name $s $(run "${extra[@]}" -H "Authorization: Bearer ${KEY[$s]}" "http://${ADDR[$s]}$path")"
    done
  done
done
