#!/usr/bin/env bash
# make bench: orderd against its ceiling (the same echo stack and server settings, no
# middleware, precomputed bytes), in one run, with wrk on loopback. Writes docs/benchmarks.md, which links to the notes
# on the figures (bench/notes.md, written by hand) and copies in the ablation (bench/ablation.md,
# written by hand from bench/ablate.sh's output). Figures are ratios to the ceiling measured
# in the same run: absolute numbers on a shared 2-core machine are noise.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-5}
CONNECTIONS=${CONNECTIONS:-32}
ORDERS=${ORDERS:-100}
# The sizes of the at-scale sections (v1's list and v2's pages); SIZES=10000,100000 for a
# quick check.
SIZES=${SIZES:-10000,100000,1000000}
# The orders of bench/million.sh's section (import, first list, RSS in both stores).
MILLION=${MILLION:-1000000}
# QUICK=1 writes only the sections measured on this run's servers (the table, the fixed rate,
# Redis per request): no allocations per request, no at-scale sections, no Go benchmarks. For
# a quick check, e.g. QUICK=1 ROUNDS=1 DURATION=2s OUT=/tmp/bench-check.md make bench.
QUICK=${QUICK:-}
OUT=${OUT:-docs/benchmarks.md}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need redis-server; then
  if [ "$(id -u)" = 0 ] && need apt-get; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk redis-server >/dev/null
  else
    echo "bench: needs wrk and redis-server (Debian packages wrk, redis-server)" >&2; exit 1
  fi
fi

echo "== building orderd and the ceiling"
CGO_ENABLED=0 go build -trimpath -o "$work/orderd" ./cmd/orderd
CGO_ENABLED=0 go build -trimpath -o "$work/ceiling" ./bench/ceiling
go run ./bench/genorders -n "$ORDERS" > "$work/orders.json"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
  || echo $((20000 + RANDOM % 20000)); }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "http://$1/healthz" && return 0; curl -s -o /dev/null "http://$1/v1/store/orders" && return 0; sleep 0.1; done; echo "bench: $1 did not start" >&2; exit 1; }

big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
# One page-token secret for both: v2's page then has the same bytes from either.
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Embedded
emb=127.0.0.1:$(free_port)
ORDERD_REDIS_URL= "$work/orderd" import --db "$work/orderd.db" --orders "$work/orders.json" 2>/dev/null
KEY_EMB=$(ORDERD_REDIS_URL= "$work/orderd" keys create $big --name bench --db "$work/orderd.db" 2>/dev/null)
ORDERD_REDIS_URL= "$work/orderd" serve --addr "$emb" --db "$work/orderd.db" --page-token-secret "$secret" 2>/dev/null & pids+=($!)
# Redis
rport=$(free_port)
redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --daemonize no >/dev/null & pids+=($!)
for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
rurl=redis://127.0.0.1:$rport/0
"$work/orderd" import --redis-url "$rurl" --orders "$work/orders.json" 2>/dev/null
KEY_RED=$("$work/orderd" keys create $big --name bench --redis-url "$rurl" 2>/dev/null)
red=127.0.0.1:$(free_port)
"$work/orderd" serve --addr "$red" --redis-url "$rurl" --page-token-secret "$secret" 2>/dev/null & pids+=($!)
wait_up "$emb"; wait_up "$red"
# Ceiling: the list's and the page's bytes, plain and gzipped, and the list's ETag, as the
# embedded orderd sends them (bench/ceiling says why).
ceil=127.0.0.1:$(free_port)
"$work/ceiling" --addr "$ceil" --from "http://$emb" --key "$KEY_EMB" & pids+=($!)
# The floor: the same ceiling, asking Redis (orderd's Redis) for the shared limiter's decision
# before each answer, as every request of a Redis deployment must (bench/ceiling, redisDecision).
floor=127.0.0.1:$(free_port)
"$work/ceiling" --addr "$floor" --from "http://$emb" --key "$KEY_EMB" --redis-url "$rurl" & pids+=($!)
wait_up "$ceil"; wait_up "$floor"
ETAG=$(curl -s -o /dev/null -D - -H "Authorization: Bearer $KEY_EMB" "http://$emb/v1/store/orders" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')

printf 'wrk.method = "DELETE"\n' > "$work/delete.lua"
# page-uncached: every request a query of its own (an extra parameter, which the find ignores
# and its Link drops), so that orderd finds and encodes the page on every request.
cat > "$work/uncached.lua" <<'LUA'
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function init(args) n = 0 end
function request() n = n + 1; return wrk.format(nil, wrk.path .. "&t=" .. tid .. "&n=" .. n) end
LUA
source bench/redis_per_request.sh
source bench/chain_allocs.sh
source bench/fixed_rate.sh

# The rows of the table, NAME:PATH; row_args says what each sends besides its path.
paths=("list:/v1/store/orders" "list-gzip:/v1/store/orders" "notmodified:/v1/store/orders"
  "page:/v2/store/orders?pageSize=100" "page-gzip:/v2/store/orders?pageSize=100"
  "page-uncached:/v2/store/orders?pageSize=100"
  "notfound:/v1/store/orders/999999999" "nokey:/v1/store/orders")

# row_args NAME KEY: sets ROW_ARGS, the arguments wrk sends for row NAME with KEY (none
# without a key).
row_args() {
  ROW_ARGS=()
  [ "$1" != nokey ] && ROW_ARGS+=(-H "Authorization: Bearer $2")
  case $1 in
    notfound) ROW_ARGS+=(-s "$work/delete.lua") ;;
    page-uncached) ROW_ARGS+=(-s "$work/uncached.lua") ;;
    *-gzip) ROW_ARGS+=(-H "Accept-Encoding: gzip") ;;
    notmodified) ROW_ARGS+=(-H "If-None-Match: $ETAG") ;;
  esac
}

# server TARGET: sets addr and key, the address of TARGET (ceiling, embedded or redis) and the
# key its requests send (the ceiling takes the embedded orderd's).
server() {
  case $1 in
    ceiling) addr=$ceil; key=$KEY_EMB ;;
    floor) addr=$floor; key=$KEY_EMB ;;
    embedded) addr=$emb; key=$KEY_EMB ;;
    redis) addr=$red; key=$KEY_RED ;;
  esac
}

# Before any load, one request of each row to each server: the ceiling must send what orderd
# sends (the same status, header field names and body; the values of some fields, such as
# the request id, differ by nature), and this first request is also every server's first
# of the row, which fills what a server fills on its first request (the list's encodings,
# the key). A row whose wrk script sets its method (notfound's DELETE) is sent with that
# method; the scripts themselves are wrk's, not curl's.
for entry in "${paths[@]}"; do
  name=${entry%%:*}; path=${entry#*:}
  method=GET; [ "$name" = notfound ] && method=DELETE
  for target in ceiling embedded redis floor; do
    server "$target"
    row_args "$name" "$key"
    args=(); for a in "${ROW_ARGS[@]}"; do case $a in -s|*.lua) ;; *) args+=("$a") ;; esac; done
    curl -s -X "$method" -D "$work/head.$target" -o "$work/body.$target" "${args[@]}" "http://$addr$path"
    tr -d '\r' < "$work/head.$target" | awk -F: 'NR == 1 {print $0; next} NF > 1 && tolower($1) != "date" {print tolower($1)}' \
      | sort >> "$work/body.$target"
  done
  if ! cmp -s "$work/body.ceiling" "$work/body.embedded" || ! cmp -s "$work/body.ceiling" "$work/body.redis" \
    || ! cmp -s "$work/body.ceiling" "$work/body.floor"; then
    echo "bench: $name: the ceiling's answer is not orderd's" >&2; exit 1
  fi
done

# run ADDR PATH [wrk args]: prints "rps p50 p99 non2xx"
run() {
  local addr=$1 path=$2; shift 2
  wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$@" "http://$addr$path" > "$work/wrk.out" 2>&1
  awk '
    /Requests\/sec:/ {rps=$2}
    /^ +50%/ {p50=$2}
    /^ +99%/ {p99=$2}
    /Non-2xx or 3xx responses:/ {non=$5}
    END {printf "%s %s %s %s\n", rps, p50, p99, (non==""?0:non)}' "$work/wrk.out"
}

# Each round runs every path on every server, one after the other, so that a passing change
# in the machine's load touches all three alike; the ratios reported are the median of the
# rounds' ratios, and the figures those of the median round.
declare -A R RATIOS
for round in $(seq "$ROUNDS"); do
  for entry in "${paths[@]}"; do
    name=${entry%%:*}; path=${entry#*:}
    for target in ceiling embedded redis floor; do
      server "$target"
      row_args "$name" "$key"
      echo "== round $round: $name, $target"
      R[$round,$name,$target]=$(run "$addr" "$path" "${ROW_ARGS[@]}")
      echo "   ${R[$round,$name,$target]}"
    done
    for target in embedded redis floor; do
      RATIOS[$name,$target]+="$(awk -v a="$(echo "${R[$round,$name,$target]}" | cut -d' ' -f1)" -v b="$(echo "${R[$round,$name,ceiling]}" | cut -d' ' -f1)" 'BEGIN{printf "%.3f", a/b}') "
    done
  done
done

# middle: the median of the ratios on stdin (words), one of them exactly as stored.
middle() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# median: the same in two places, as the tables show it.
median() { middle | awk '{printf "%.2f", $1}'; }
# median_round RATIOS...: the round (1-based) whose ratio is the median, for the figures shown
# with it. It compares the stored strings, as fixed_rate_round does: a round's ratio rounded
# afresh need not equal the median's rounding of the stored one (0.8451 is 0.85, 0.845 is 0.84).
median_round() {
  local want i=0 x
  want=$(echo "$*" | middle)
  for x in "$@"; do i=$((i + 1)); [ "$x" = "$want" ] && { echo "$i"; return; }; done
  echo 1
}

field() { echo "${R[$1,$2,$3]}" | cut -d' ' -f"$4"; }
# met FIGURE OP BOUND: "yes" or "no", as FIGURE OP BOUND holds (OP is >= or <=).
met() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? (a + 0 >= b + 0) : (a + 0 <= b + 0); print (a != "" && ok) ? "yes" : "**no**" }'; }

# at_scale prints the sections that need no server of this run: the list and v2's pages at
# $SIZES orders, a million orders and order events in both stores, and the Go benchmarks.
at_scale() {
  go run ./bench/scale -sizes "$SIZES"
  echo
  echo "== one million orders, both stores" >&2
  N=$MILLION bash bench/million.sh
  echo
  echo "== order events, both stores" >&2
  bash bench/events.sh
  echo
  echo "## Go benchmarks"
  echo
  echo "\`go test -run='^\$' -bench=. -benchmem\` over the limiters, the stores and the whole chain"
  echo "(the Redis ones against a redis-server on loopback)."
  echo
  echo '```'
  go test -run='^$' -bench=. -benchmem ./internal/api/ ./internal/inmem/ ./internal/redisstore/ ./internal/sqlitestore/ 2>/dev/null \
    | grep -E '^(pkg:|Benchmark)'
  echo '```'
  echo
  echo "== v2's pages at scale ($SIZES orders)" >&2
  go run ./bench/pages -sizes "$SIZES"
}

cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
{
  echo "# Benchmarks"
  echo
  echo "Made by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d): orderd and its ceiling (the"
  echo "same echo stack with no middleware, served by orderd's http.Server settings, answering"
  echo "precomputed bytes) driven in one run by wrk"
  echo "on loopback, $CONNECTIONS connections, 2 threads, $DURATION a run, in $ROUNDS interleaved rounds; a"
  echo "ratio is the median of the rounds' ratios, and the figures beside it are those of that"
  echo "round. The machine: $(nproc) cores ($cpu), $(go version | cut -d' ' -f3); wrk and the"
  echo "servers share the cores, so the ratios, not the absolute figures, are the result."
  echo
  echo "How the run differs from a naive one (start the servers, run wrk against each), so that"
  echo "its figures are the ones such a run reproduces: there is no load before the measured"
  echo "runs, only one request of each row to each server, to check that the ceiling sends"
  echo "orderd's answer (status, header field names and body), which fills no more than a server"
  echo "fills on its first request (the list's encodings, the key). Until issue 26 each run came"
  echo "after a 2 s wrk warm-up, and the ceiling sent the list chunked, a write more than orderd's"
  echo "answer with its Content-Length: both raised orderd's ratio above what a naive run measures"
  echo "(on 2026-11-24, 3 rounds, the embedded list: 0.81 with the warm-up, 0.72 without; the"
  echo "ceiling served 7 to 26% more with Content-Length). The ceiling now sends Content-Length,"
  echo "and since 2026-11-25 every header field of orderd's answer as orderd sent it (the rate-limit"
  echo "fields, the request id, Vary and the rest, which the contract puts on every answer): before,"
  echo "it sent its body's fields only, and served 9 to 23% more a second than it does with all of"
  echo "them (bench/notes.md, *The ceiling's answers*), so ratios before that day are lower for the"
  echo "same orderd. Making the fields' values stays orderd's work in the ratio. Since 2026-11-28 the"
  echo "ceiling is served by orderd's own http.Server settings (service.HTTPServer: the read, write"
  echo "and idle timeouts, whose deadlines Go's server sets on every request); before, it had none,"
  echo "and served 8 to 20% more a second than it does with them (bench/notes.md, *The ceiling's"
  echo "answers*), so ratios before that day are lower for the same orderd. orderd's access log goes to"
  echo "/dev/null: to a file, a pipe read by another process or a terminal (a pty), no difference"
  echo "stood out of the noise, and a run writes gigabytes of lines. Its key is an enterprise key"
  echo "with limits no run reaches, so that every request is a 200: a free or pro key is refused"
  echo "429 after its quota, which measures the refusal (the nokey row)."
  echo
  echo "What the figures mean, what bounds each path and what was tried are in"
  echo "[bench/notes.md](../bench/notes.md), written by hand."
  echo
  echo "| path | server | requests/s | p50 | p99 | non-2xx | ratio to ceiling (median) | ratios of the rounds |"
  echo "|---|---|---:|---:|---:|---:|---:|---|"
  for entry in "${paths[@]}"; do
    name=${entry%%:*}
    for target in embedded redis floor; do
      m=$(echo "${RATIOS[$name,$target]}" | median)
      r=$(median_round ${RATIOS[$name,$target]})
      [ "$target" = embedded ] && echo "| $name | ceiling | $(field "$r" "$name" ceiling 1) | $(field "$r" "$name" ceiling 2) | $(field "$r" "$name" ceiling 3) | $(field "$r" "$name" ceiling 4) | 1.00 | |"
      echo "| $name | $target | $(field "$r" "$name" "$target" 1) | $(field "$r" "$name" "$target" 2) | $(field "$r" "$name" "$target" 3) | $(field "$r" "$name" "$target" 4) | $m | ${RATIOS[$name,$target]}|"
    done
  done
  echo
  echo "orderd runs as deployed: access log at the default level (to /dev/null), metrics on."
  echo "**floor** is the ceiling that first asks orderd's Redis for the shared limiter's decision,"
  echo "with orderd's own limiter and nothing else of orderd's work: no server whose limits are exact"
  echo "across instances can beat it here on a request Redis must decide, so it bounds the Redis rows"
  echo "but nokey's, whose flood is banned: an instance answers a ban it knows from memory until it"
  echo "ends (bench/notes.md, *The floor of a Redis deployment*)."
  echo
  echo "- **list**: \`GET /v1/store/orders\` with a key, $ORDERS orders (enterprise limits, so that the"
  echo "  limiter decides and counts every request but never refuses), no \`Accept-Encoding\`."
  echo "- **list-gzip**: the same with \`Accept-Encoding: gzip\`: orderd sends the list as it"
  echo "  gzipped it once for this version of the orders, the ceiling the same bytes."
  echo "- **notmodified**: the same with \`If-None-Match\`: the list's ETag, answered 304 without a body."
  echo "- **page**: \`GET /v2/store/orders?pageSize=100\` with a key: v2's first page of 100. orderd"
  echo "  finds and encodes it on the first request of each version of the orders and query, and"
  echo "  answers it again after the version check every request makes (the page cache); the"
  echo "  ceiling sends the same bytes."
  echo "- **page-gzip**: the same with \`Accept-Encoding: gzip\`: orderd gzips the page once (level 1)"
  echo "  for its version; the ceiling sends the bytes orderd sent."
  echo "- **page-uncached**: the page row with a query of its own on every request (a parameter the"
  echo "  find ignores), so that orderd finds and encodes the page every time: what a page the"
  echo "  cache does not hold costs. No target."
  echo "- **notfound**: \`DELETE /v1/store/orders/999999999\` with a key: the 404 path."
  echo "- **nokey**: \`GET /v1/store/orders\` without a key. A flood from one address spends its free"
  echo "  quota (60 a minute) at once, so orderd answers nearly all of it 429 (non-2xx counts"
  echo "  them), then bans the address: this measures what an unauthenticated flood costs."
  echo
  echo "Targets (issue 13, with zero staleness and exact limits across instances): the list of 100,"
  echo "embedded ≥ 0.8 × the ceiling and Redis ≥ 0.5 ×; the 404 and no-key paths, embedded ≥ 0.6 ×"
  echo "and Redis ≥ 0.4 ×."
  echo
  echo "## p99 at a fixed rate"
  echo
  echo "The list, offered open-loop by bench/openload at half the ceiling's requests/s on it above"
  echo "(the median of the rounds; $CONNECTIONS connections, $FIXED_DURATION after a 1s warm-up, $ROUNDS interleaved"
  echo "rounds): each latency counts from the moment its request was due, so time spent waiting for"
  echo "a free connection is the server's (bench/fixed_rate.sh). Target (issue 13): orderd's p99 ≤ 2 × the ceiling's."
  echo
  fixed_rate
  echo
  echo "## Targets in this run"
  echo
  echo "Issue 13's, and issue 26's for the list with and without gzip, the 304 and v2's page. Each"
  echo "figure is the median above; a target is met when the median is. *floor* is the floor's ratio"
  echo "on the same row: the most a Redis figure can reach on this machine."
  echo
  echo "| target | embedded | met | Redis | met | floor |"
  echo "|---|---:|---|---:|---|---:|"
  for entry in "list:0.85:0.65" "list-gzip:0.8:0.6" "notmodified:0.7:0.5" "page:0.6:0.45" "page-gzip:0.6:0.45" \
    "notfound:0.6:0.4" "nokey:0.6:0.4"; do
    IFS=: read -r name want_emb want_red <<< "$entry"
    e=$(echo "${RATIOS[$name,embedded]}" | median); r=$(echo "${RATIOS[$name,redis]}" | median)
    f=$(echo "${RATIOS[$name,floor]}" | median)
    echo "| $name: ratio to the ceiling ≥ $want_emb (embedded), ≥ $want_red (Redis) | $e | $(met "$e" ">=" "$want_emb") | $r | $(met "$r" ">=" "$want_red") | $f |"
  done
  echo "| p99 at half the ceiling's rate ≤ 2 × the ceiling's p99 | ${FIXED_P99[embedded]} × | $(met "${FIXED_P99[embedded]}" "<=" 2) | ${FIXED_P99[redis]} × | $(met "${FIXED_P99[redis]}" "<=" 2) | |"
  echo
  cat bench/ablation.md
  echo
  echo "## Redis per request"
  echo
  echo "While wrk drives orderd in Redis mode ($DURATION a path): Redis's own counts (INFO stats) over"
  echo "the run, divided by the requests served. A read is one round trip, however many requests"
  echo "share it (bench/redis_per_request.sh)."
  echo
  redis_per_request
  echo
  if [ -z "$QUICK" ]; then
    echo "## Allocations per request"
    echo
    echo "internal/api's BenchmarkChain, the whole chain in process (-benchmem, 5 runs, medians)."
    echo
    chain_allocs
  fi
  echo
  [ -n "$QUICK" ] || at_scale
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "== wrote $OUT"
sed -n '/^| path/,/^$/p' "$OUT"
