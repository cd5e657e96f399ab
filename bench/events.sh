#!/usr/bin/env bash
# bench/events.sh: what order events cost and how fast they travel, with the real binary on
# loopback, in both stores. Prints a Markdown section; make bench copies it into
# docs/benchmarks.md.
#
# - The cancel path: every pending order of a fresh store cancelled once (each cancel a write,
#   and now an event), by 32 clients, with this build and with $EVENTS_BASE, the last commit
#   before the event log, built from the same repository: the ratio of their rates is what
#   recording an event costs. Rounds alternate the builds; the median ratio is reported.
# - Streams: $STREAMS streams of `GET /v2/store/events` on instance B, then $EVENTS cancels made
#   one at a time on instance A; for each stream and cancel, the time from just before the
#   cancel was sent to the event's arrival on the stream.
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS_BASE=${EVENTS_BASE:-4f2f8e6}
ROUNDS=${ROUNDS:-3}
PENDING=${PENDING:-10000}
STREAMS=${STREAMS:-1000}
EVENTS=${EVENTS:-50}
MODES=${MODES:-embedded redis}
work=$(mktemp -d) pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; git worktree remove --force "$work/base-src" 2>/dev/null || true; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/orderd" ./cmd/orderd
git worktree add -q --detach "$work/base-src" "$EVENTS_BASE"
(cd "$work/base-src" && CGO_ENABLED=0 go build -trimpath -o "$work/orderd-base" ./cmd/orderd)
go build -o "$work/events" ./bench/events
go run ./bench/genorders -n $((3 * PENDING)) > "$work/orders.json"
up() { for _ in $(seq 100); do curl -s -o /dev/null "http://$1/healthz" && return 0; sleep 0.1; done; echo "events: $1 did not start" >&2; exit 1; }
big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
port=$((20000 + RANDOM % 12000)) # below the ephemeral range

# store MODE N: sets store, the flags of a new empty store of MODE (a new Redis on port N).
store() {
  if [ "$1" = embedded ]; then
    rm -f "$work"/s.db*; store=(--db "$work/s.db")
  else
    redis-server --bind 127.0.0.1 --port "$2" --save '' --appendonly no >/dev/null & pids+=($!)
    for _ in $(seq 50); do redis-cli -p "$2" ping >/dev/null 2>&1 && break; sleep 0.1; done
    store=(--redis-url "redis://127.0.0.1:$2/0")
  fi
}

# serve BIN ADDR [flags]: starts BIN serve on the store, returns once it answers.
serve() {
  local bin=$1 addr=$2; shift 2
  ORDERD_REDIS_URL= "$bin" serve --addr "$addr" "${store[@]}" "$@" 2>/dev/null & pids+=($!)
  up "$addr"
}

echo "## Order events"
echo
echo "Made by \`bench/events.sh\` (in \`make bench\`), the real binary on loopback. *Cancel*: every"
echo "one of $PENDING pending orders of a fresh store cancelled once by 32 clients (\`bench/events\`),"
echo "with this build and with $EVENTS_BASE, the build before the event log; the ratio of their rates,"
echo "the median of $ROUNDS alternating rounds, is what recording each cancel's event costs"
echo "(bound: at least 0.9). *Streams*: $STREAMS streams on instance B, then $EVENTS cancels made one at a"
echo "time on instance A; per stream and cancel, the time from just before the cancel is sent to"
echo "the event's arrival (bound: p99 within 100 ms)."
echo
echo "| store | cancels/s before | with events | ratio | p99 before / with (ms) | stream delay p50 | p99 | max | samples |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
  ratios=() rows=()
  for round in $(seq "$ROUNDS"); do
    for bin in orderd-base orderd; do
      port=$((port + 2))
      store "$mode" $((port + 1))
      ORDERD_REDIS_URL= "$work/$bin" import "${store[@]}" --orders "$work/orders.json" >/dev/null 2>&1
      key=$(ORDERD_REDIS_URL= "$work/$bin" keys create $big --name events "${store[@]}" 2>/dev/null)
      serve "$work/$bin" "127.0.0.1:$port"
      read -r rate _ p99 <<< "$("$work/events" cancel -base "http://127.0.0.1:$port" -key "$key" -ids "$PENDING")"
      echo "== $mode round $round $bin: $rate cancels/s, p99 $p99 ms" >&2
      if [ "$bin" = orderd-base ]; then before=$rate before99=$p99; else
        ratios+=("$(echo "$rate / $before" | bc -l | xargs printf '%.2f')")
        rows+=("$before $rate $before99 $p99")
      fi
      for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=()
    done
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")
  for i in "${!ratios[@]}"; do [ "${ratios[$i]}" = "$median" ] && { read -r before rate before99 p99 <<< "${rows[$i]}"; break; }; done

  port=$((port + 3))
  store "$mode" $((port + 2))
  ORDERD_REDIS_URL= "$work/orderd" import "${store[@]}" --orders "$work/orders.json" >/dev/null 2>&1
  key=$(ORDERD_REDIS_URL= "$work/orderd" keys create $big --name events "${store[@]}" 2>/dev/null)
  serve "$work/orderd" "127.0.0.1:$port"
  serve "$work/orderd" "127.0.0.1:$((port + 1))" --max-streams-per-key "$STREAMS"
  read -r s50 s99 smax n <<< "$("$work/events" streams -a "http://127.0.0.1:$port" -b "http://127.0.0.1:$((port + 1))" -key "$key" -streams "$STREAMS" -events "$EVENTS")"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=()
  echo "| $mode | $before | $rate | $median | $before99 / $p99 | $s50 ms | $s99 ms | $smax ms | $n |"
done
echo
echo "An embedded cancel's rate is bound by its commit's \`fsync\` and moves by a fifth between runs"
echo "here; what the log costs each store, and the runs before this one: bench/notes.md, *Order"
echo "events: what recording costs*."
