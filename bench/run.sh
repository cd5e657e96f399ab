#!/usr/bin/env bash
# make bench: orderd at 100,000 orders (the size and shape users have) against its ceiling,
# in both stores, with wrk on loopback; then walks of every order, and the million section
# (bench/million.sh). Writes docs/benchmarks.md; the header it writes says what the run does.
#
# Settings (environment): ROUNDS (5), DURATION (5s a wrk run), ORDERS (100000), SEED (1),
# MILLION (1000000; 0 skips the million section), CONNECTIONS (32), OUT (docs/benchmarks.md),
# BASE_REV (a git revision: its orderd runs every cached and no-cache row beside this one's, in
# the same rounds, and a section compares the two), ROWS (names of rows to run, space-separated:
# those only, and no walks).
# A quick check:
#   ROUNDS=1 DURATION=2s MILLION=0 OUT=/tmp/bench.md make bench
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-5}
CONNECTIONS=${CONNECTIONS:-32}
ORDERS=${ORDERS:-100000}
SEED=${SEED:-1}
MILLION=${MILLION:-1000000}
OUT=${OUT:-docs/benchmarks.md}
SHIP_FROM=2026-07-01T00:00:00Z # mid-year: the status+shipDateFrom rows
CANCEL_RATE=10                 # a second, in the mixed rows
work=$(mktemp -d)
pids=()
stop_servers() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap 'stop_servers; rm -rf "$work"' EXIT
t_start=$(date +%s)

need() { command -v "$1" >/dev/null 2>&1; }
for cmd in wrk redis-server redis-cli curl /usr/bin/time; do
  need "$cmd" || { echo "bench: needs $cmd (Debian packages wrk, redis-server, curl, time)" >&2; exit 1; }
done

echo "== building orderd, the ceiling, walk and cancels; $ORDERS orders (seed $SEED)" >&2
for p in ceiling walk cancels; do CGO_ENABLED=0 go build -trimpath -o "$work/$p" "./bench/$p"; done
CGO_ENABLED=0 go build -trimpath -o "$work/orderd" ./cmd/orderd
BASE_REV=${BASE_REV:-}
if [ -n "$BASE_REV" ]; then
  git worktree add -q --detach "$work/base-src" "$BASE_REV"
  (cd "$work/base-src" && CGO_ENABLED=0 go build -trimpath -o "$work/orderd-base" ./cmd/orderd)
  git worktree remove --force "$work/base-src"
fi
go run ./bench/genorders -n "$ORDERS" -seed "$SEED" -pets "$work/pets.txt" > "$work/orders.json"
grep '"status":"pending"' "$work/orders.json" | sed 's/^[^0-9]*\([0-9]*\).*/\1/' > "$work/pending.txt"
PENDING=$(wc -l < "$work/pending.txt")
PET=$(head -1 "$work/pets.txt") # the pet of the ceiling's recorded petId page

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "http://$1/healthz" && return 0; curl -s -o /dev/null "http://$1/v1/store/orders" && return 0; sleep 0.1; done; echo "bench: $1 did not start" >&2; exit 1; }

big="--plan enterprise --per-minute 1000000000000 --per-day 1000000000000"
# One page-token secret for all: v2's pages then have the same bytes from every server.
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
serve_flags=(--page-token-secret "$secret" --shutdown-delay 0)

rport=$(free_port)
redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --daemonize no >/dev/null & pids+=($!)
for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done

# start_orderd NAME STORE-FLAGS...: imports the orders into the store, makes a key (KEY_NAME)
# and serves it (ADDR_NAME). Two instances per store: the main one, and one (mix) of its own
# store for the mixed rows, whose cancels must not change what the other rows measure.
declare -A ADDR KEY
start_orderd() {
  local name=$1 bin=$work/orderd; shift
  [[ $name = *-base ]] && bin=$work/orderd-base
  ORDERD_REDIS_URL= "$bin" import "$@" --orders "$work/orders.json" >/dev/null 2>&1
  KEY[$name]=$(ORDERD_REDIS_URL= "$bin" keys create $big --name bench "$@" 2>/dev/null)
  ADDR[$name]=127.0.0.1:$(free_port)
  ORDERD_REDIS_URL= "$bin" serve --addr "${ADDR[$name]}" "$@" "${serve_flags[@]}" >/dev/null 2>&1 & pids+=($!)
}
start_orderd embedded --db "$work/orderd.db"
start_orderd embedded-mix --db "$work/mix.db"
start_orderd redis --redis-url "redis://127.0.0.1:$rport/0"
start_orderd redis-mix --redis-url "redis://127.0.0.1:$rport/1"
bases=""
if [ -n "$BASE_REV" ]; then
  start_orderd embedded-base --db "$work/base.db"
  start_orderd redis-base --redis-url "redis://127.0.0.1:$rport/2"
  bases="embedded-base redis-base"
fi
for s in embedded embedded-mix redis redis-mix $bases; do wait_up "${ADDR[$s]}"; done
# The ceiling records each row's answer from the embedded orderd (bench/ceiling says why); the
# floor is the same ceiling asking orderd's Redis for the shared limiter's decision first.
ADDR[ceiling]=127.0.0.1:$(free_port); KEY[ceiling]=${KEY[embedded]}
ADDR[floor]=127.0.0.1:$(free_port); KEY[floor]=${KEY[embedded]}
ceil_flags=(--from "http://${ADDR[embedded]}" --key "${KEY[embedded]}" --pet "$PET" --ship-from "$SHIP_FROM")
"$work/ceiling" --addr "${ADDR[ceiling]}" "${ceil_flags[@]}" 2>/dev/null & pids+=($!)
"$work/ceiling" --addr "${ADDR[floor]}" "${ceil_flags[@]}" --redis-url "redis://127.0.0.1:$rport/0" 2>/dev/null & pids+=($!)
wait_up "${ADDR[ceiling]}"; wait_up "${ADDR[floor]}"
ETAG=$(curl -s -o /dev/null -D - -H "Authorization: Bearer ${KEY[embedded]}" "http://${ADDR[embedded]}/v1/store/orders" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')
printf 'wrk.method = "DELETE"\n' > "$work/delete.lua"

# The rows, NAME|KIND|PATH. cached: answers orderd may keep (measured on the ceiling, both
# stores and the floor); nocache: a query of its own per request (bench/unique.lua); mixed:
# with cancels at $CANCEL_RATE a second to the same server, against the ceiling's row REF_OF.
rows=(
  "list|cached|/v1/store/orders"
  "list-gzip|cached|/v1/store/orders"
  "notmodified|cached|/v1/store/orders"
  "page|cached|/v2/store/orders?pageSize=100"
  "page-gzip|cached|/v2/store/orders?pageSize=100"
  "notfound|cached|/v1/store/orders/999999999"
  "nokey|cached|/v1/store/orders"
  "nocache|nocache|/v2/store/orders?pageSize=100"
  "nocache-status|nocache|/v2/store/orders?status=pending&pageSize=100"
  "nocache-pet|nocache-pet|/v2/store/orders?pageSize=100"
  "nocache-status-date|nocache|/v2/store/orders?status=pending&shipDateFrom=$SHIP_FROM&pageSize=100"
  "list-cancels|mixed|/v1/store/orders"
  "nocache-cancels|mixed|/v2/store/orders?pageSize=100"
)
declare -A REF_OF=([list-cancels]=list [nocache-cancels]=nocache)
if [ -n "${ROWS:-}" ]; then # some rows only, as an ablation needs; no walks then
  kept=(); for e in "${rows[@]}"; do [[ " $ROWS " = *" ${e%%|*} "* ]] && kept+=("$e"); done; rows=("${kept[@]}")
fi
targets_of() {
  case $1 in
    cached) echo ceiling embedded redis floor $bases ;;
    nocache|nocache-pet) echo ceiling embedded redis $bases ;;
    mixed) echo embedded redis ;;
  esac
}
# server KIND TARGET: the instance a row of KIND measures as TARGET.
server() { if [ "$1" = mixed ] && [ "$2" != ceiling ]; then echo "$2-mix"; else echo "$2"; fi; }

# row_args NAME KEY: sets ROW_ARGS (wrk's arguments besides the URL) and ROW_ENV.
row_args() {
  ROW_ARGS=() ROW_ENV=()
  [ "$1" != nokey ] && ROW_ARGS+=(-H "Authorization: Bearer $2")
  case $1 in
    notfound) ROW_ARGS+=(-s "$work/delete.lua") ;;
    nocache*) ROW_ARGS+=(-s bench/unique.lua) ;;
    *-gzip) ROW_ARGS+=(-H "Accept-Encoding: gzip") ;;
    notmodified) ROW_ARGS+=(-H "If-None-Match: $ETAG") ;;
  esac
  [ "$1" = nocache-pet ] && ROW_ENV=(PETS="$work/pets.txt")
  return 0
}

# Before any load, one request of each row to each server (the first request of the row as
# bench/unique.lua makes it: petId the first pet, t=0&n=0): the ceiling must send what orderd
# sends, the same status and header field names, and for the cached rows the same body. This
# also fills what a server fills on its first request (the list's encodings, the key).
for entry in "${rows[@]}"; do
  IFS='|' read -r name kind path <<< "$entry"
  method=GET; [ "$name" = notfound ] && method=DELETE
  qpath=$path
  [ "$name" = nocache-pet ] && qpath="$qpath&petId=$PET"
  [[ $name = nocache* ]] && qpath="$qpath&t=0&n=0"
  for target in $(echo ceiling $(targets_of "$kind") | tr ' ' '\n' | awk '!seen[$0]++'); do
    s=$(server "$kind" "$target")
    row_args "$name" "${KEY[$s]}"
    args=(); for a in "${ROW_ARGS[@]}"; do case $a in -s|*.lua) ;; *) args+=("$a") ;; esac; done
    rm -f "$work/body.$target"
    curl -s -X "$method" -D "$work/head.$target" -o "$work/body.$target" "${args[@]}" "http://${ADDR[$s]}$qpath"
    [ "$kind" = cached ] && [ -f "$work/body.$target" ] || : > "$work/body.$target"
    tr -d '\r' < "$work/head.$target" | awk -F: 'NR == 1 {print $0; next} NF > 1 && tolower($1) != "date" {print tolower($1)}' \
      | sort >> "$work/body.$target"
  done
  for target in $(targets_of "$kind"); do
    [ "$target" = ceiling ] && continue
    c=ceiling
    cmp -s "$work/body.$c" "$work/body.$target" || {
      echo "bench: $name: the ceiling's answer is not orderd's ($target):" >&2
      diff -a <(cut -c1-200 "$work/body.$c") <(cut -c1-200 "$work/body.$target") | cut -c1-300 | head -20 >&2 || true
      head -30 "$work/head.$c" "$work/head.$target" >&2; exit 1; }
  done
done

# wrk_run ADDR PATH [wrk args]: prints "rps p99 non2xx socket-errors timeouts" (wrk's: a
# request unanswered after 2 s, still counted when its answer comes)
wrk_run() {
  local addr=$1 path=$2; shift 2
  env "${ROW_ENV[@]}" wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$@" "http://$addr$path" > "$work/wrk.out" 2>&1
  awk '/Requests\/sec:/ {rps=$2} /^ +99%/ {p99=$2} /Non-2xx or 3xx responses:/ {non=$5}
    /Socket errors:/ {gsub(",", ""); err=$4+$6+$8; slow=$10}
    END {printf "%s %s %d %d %d\n", rps, p99, non, err, slow}' "$work/wrk.out"
}

# The rounds: every row on every server, one after the other, then the walks; the next round
# after. A ratio is a row's requests/s on a server ÷ the ceiling's on the same round.
declare -A R RATIOS WALK SKIP=([embedded]=0 [redis]=0)
CANCELS=""
walks=("all-100|100|" "all-1000|1000|" "pending-100|100|status=pending")
[ -n "${ROWS:-}" ] && walks=()
for round in $(seq "$ROUNDS"); do
  for entry in "${rows[@]}"; do
    IFS='|' read -r name kind path <<< "$entry"
    for target in $(targets_of "$kind"); do
      s=$(server "$kind" "$target")
      row_args "$name" "${KEY[$s]}"
      echo "== round $round/$ROUNDS: $name, $target" >&2
      if [ "$kind" = mixed ]; then
        "$work/cancels" -url "http://${ADDR[$s]}" -key "${KEY[$s]}" -ids "$work/pending.txt" \
          -skip "${SKIP[$target]}" -rate "$CANCEL_RATE" -for "$DURATION" > "$work/cancels.out" & cpid=$!
        R[$round,$name,$target]=$(wrk_run "${ADDR[$s]}" "$path" "${ROW_ARGS[@]}")
        wait "$cpid" || { echo "bench: $name, $target: a cancel failed" >&2; exit 1; }
        read -r sent _ < "$work/cancels.out"
        SKIP[$target]=$((SKIP[$target] + sent)); CANCELS+="$sent "
      else
        R[$round,$name,$target]=$(wrk_run "${ADDR[$s]}" "$path" "${ROW_ARGS[@]}")
      fi
      echo "   ${R[$round,$name,$target]}" >&2
    done
    ref=${REF_OF[$name]:-$name}
    for target in $(targets_of "$kind"); do
      [ "$target" = ceiling ] && continue
      c=ceiling
      RATIOS[$name,$target]+="$(awk -v a="${R[$round,$name,$target]%% *}" -v b="${R[$round,$ref,$c]%% *}" 'BEGIN{printf "%.3f", a/b}') "
    done
  done
  # Each walk's query has a parameter of its round (ignored by orderd), so that no page of a
  # walk is answered from the page cache of the round before.
  for w in "${walks[@]}"; do
    IFS='|' read -r wname size filter <<< "$w"
    want=$ORDERS; [ -n "$filter" ] && want=$PENDING
    for target in embedded redis; do
      echo "== round $round/$ROUNDS: walk $wname, $target" >&2
      WALK[$round,$wname,$target]=$("$work/walk" -url "http://${ADDR[$target]}" -key "${KEY[$target]}" \
        -size "$size" -query "${filter:+$filter&}round=$round" -want "$want")
      echo "   ${WALK[$round,$wname,$target]}" >&2
    done
  done
done
stop_servers

MILLION_MD=""
if [ "$MILLION" != 0 ]; then
  echo "== $MILLION orders, both stores (bench/million.sh)" >&2
  MILLION_MD=$(N=$MILLION SEED=$SEED FIGURES="$work/million.fig" bash bench/million.sh)
fi

# median: the median of the words on stdin.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) printf "%.2f", a[int((NR+1)/2)]}'; }
# median_round RATIOS...: the round whose ratio is the median (its figures are shown).
median_round() {
  local want i=0 x
  want=$(echo "$*" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  for x in "$@"; do i=$((i + 1)); [ "$x" = "$want" ] && { echo "$i"; return; }; done
  echo 1
}
commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
# rps ROUND ROW SERVER: its requests/s, and its non-2xx answers, socket errors and requests
# unanswered after 2 s if any (but not the non-2xx of notfound and nokey: 404, 401 and 429 by
# design).
rps() { echo "${R[$1,$2,$3]}" | awk -v row="$2" '{printf "%.0f", $1; if ($3 && row != "nokey" && row != "notfound") printf " (%d non-2xx)", $3; if ($4) printf " (%d socket errors)", $4; if ($5) printf " (%d > 2 s)", $5}'; }
# met FIGURE OP BOUND: "yes" or "**no**".
met() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? (a + 0 >= b + 0) : (a + 0 <= b + 0); print (a != "" && ok) ? "yes" : "**no**" }'; }
ratio() { echo "${RATIOS[$1,$2]:-}" | median; }
walk_median() { # WALK STORE: the median seconds, and the pages of a walk
  local r secs=""
  for r in $(seq "$ROUNDS"); do secs+="$(echo "${WALK[$r,$1,$2]}" | cut -d' ' -f1) "; done
  printf '%s s, %s pages' "$(echo "$secs" | median)" "$(echo "${WALK[1,$1,$2]}" | cut -d' ' -f3)"
}
mfig() { [ -f "$work/million.fig" ] && awk -v k="$1" '$1 == k {print $2}' "$work/million.fig"; }

cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
# The lessons at the end of docs/benchmarks.md are written by hand; every run keeps them.
lessons=$(sed -n '/^## What the runs have taught$/,$p' docs/benchmarks.md)
{
  echo "# Benchmarks"
  echo
  echo "Made by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d), $(nproc) cores ($cpu), $(go version | cut -d' ' -f3), all on"
  echo "loopback. Data: \`go run ./bench/genorders -n $ORDERS -seed $SEED\` (ids 1..N; pets at random among a million ids; ship"
  echo "dates at a random second of 2026; 60/25/15% pending/shipped/cancelled), imported by \`orderd import\` into a new SQLite"
  echo "file (embedded) and an empty Redis, each served by \`orderd serve\` (defaults; access log to /dev/null) and asked with an"
  echo "enterprise key whose limits no run reaches. The *ceiling* (bench/ceiling: orderd's echo stack and http.Server settings,"
  echo "no middleware) answers each row with the status, header fields and body it recorded once from the embedded orderd (for"
  echo "a no-cache row, one page of the row's query shape); the *floor* is the ceiling plus the Redis rate-limit round trip of every Redis request. Each row is \`wrk -t2"
  echo "-c$CONNECTIONS -d$DURATION\` with \`Authorization: Bearer KEY\`, after one request per row and server checking that the ceiling"
  echo "answers as orderd does (status and header field names; the body too for cached rows). $ROUNDS interleaved round(s): every"
  echo "row on every server, then the walks, then the next round. A ratio is orderd's requests/s ÷ the ceiling's in the same"
  echo "round; shown: the median of the rounds' ratios, with the requests/s of the median round. No-cache rows make each request"
  echo "a query of its own (bench/unique.lua appends \`&t=THREAD&n=COUNTER\`, which orderd ignores; nocache-pet also a different"
  echo "pet with orders each request). Mixed rows run on a second instance per store (its own copy of the orders) while"
  echo "bench/cancels sends it $CANCEL_RATE \`DELETE /v1/store/orders/{id}\` of pending orders a second ($(echo "$CANCELS" | awk '{print $1}') per run)."
  echo
  echo "## Requests per second at $(commas "$ORDERS") orders"
  echo
  echo "| row | request | ceiling | embedded | ratio | Redis | ratio | floor ratio |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  for entry in "${rows[@]}"; do
    IFS='|' read -r name kind path <<< "$entry"
    ref=${REF_OF[$name]:-$name}
    case $name in
      list) what='`GET /v1/store/orders`, the whole list' ;;
      list-gzip) what='the same, `Accept-Encoding: gzip`' ;;
      notmodified) what='the same, `If-None-Match` the list'"'"'s ETag: 304' ;;
      page) what='`GET /v2/store/orders?pageSize=100`' ;;
      page-gzip) what='the same, `Accept-Encoding: gzip`' ;;
      notfound) what='`DELETE /v1/store/orders/999999999`: 404' ;;
      nokey) what='`GET /v1/store/orders`, no key: 401, then 429' ;;
      nocache) what='`?pageSize=100` + unique' ;;
      nocache-status) what='`?status=pending&pageSize=100` + unique' ;;
      nocache-pet) what='`?pageSize=100&petId=` a pet with orders + unique' ;;
      nocache-status-date) what='`?status=pending&shipDateFrom='"$SHIP_FROM"'&pageSize=100` + unique' ;;
      list-cancels) what="the list, with $CANCEL_RATE cancels/s" ;;
      nocache-cancels) what="nocache, with $CANCEL_RATE cancels/s" ;;
    esac
    e=$(median_round ${RATIOS[$name,embedded]}); r=$(median_round ${RATIOS[$name,redis]})
    f="" ; [ "$kind" = cached ] && f=$(ratio "$name" floor)
    c=$(rps "$e" "$ref" ceiling)
    echo "| $name | $what | $c | $(rps "$e" "$name" embedded) | $(ratio "$name" embedded) | $(rps "$r" "$name" redis) | $(ratio "$name" redis) | $f |"
  done
  echo
  echo "## Walks at $(commas "$ORDERS") orders"
  echo
  echo "bench/walk: one client, plain JSON, follows \`nextPageToken\` from the first page to the last and fails unless every"
  echo "order came exactly once, in id order. Median wall time of the rounds; each walk's query also has \`round=R\` (ignored),"
  echo "so that no page comes from the cache of a walk before."
  echo
  echo "| walk | orders | embedded | Redis |"
  echo "|---|---:|---:|---:|"
  for w in "${walks[@]}"; do
    IFS='|' read -r wname size filter <<< "$w"
    echo "| \`${filter:+$filter&}pageSize=$size\` | $(commas "$(echo "${WALK[1,$wname,embedded]}" | cut -d' ' -f2)") | $(walk_median "$wname" embedded) | $(walk_median "$wname" redis) |"
  done
  echo
  if [ -n "$BASE_REV" ]; then
    echo "## Against the build before ($(git rev-parse --short "$BASE_REV"))"
    echo
    echo "The same rounds served each cached and no-cache row by orderd built from $(git rev-parse --short "$BASE_REV") too, on its"
    echo "own copy of the orders; each figure is the median ratio to the ceiling. A change below -0.05 is in bold."
    echo
    echo "| row | embedded | before | change | Redis | before | change |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for entry in "${rows[@]}"; do
      IFS='|' read -r name kind path <<< "$entry"
      [ "$kind" = mixed ] && continue
      line="| $name"
      for st in embedded redis; do
        now=$(ratio "$name" "$st"); before=$(ratio "$name" "$st-base")
        ch=$(awk -v a="$now" -v b="$before" 'BEGIN {d = a - b; printf (d < -0.05 ? "**%+.2f**" : "%+.2f"), d}')
        line+=" | $now | $before | $ch"
      done
      echo "$line |"
    done
    echo
  fi
  if [ -n "$MILLION_MD" ]; then echo "$MILLION_MD"; echo; fi
  if [ -n "${ROWS:-}" ]; then # some rows only: no targets judged
    echo "## Targets"; echo; echo "Not judged: ROWS=$ROWS ran some rows only."
  else
  echo "## Targets"
  echo
  echo "Ratios are the medians above, at $(commas "$ORDERS") orders; Redis's cached rows are judged against the floor's"
  echo "ratio (Redis ÷ floor). A target is met when its figure is."
  echo
  echo "| target | embedded | met | Redis | met |"
  echo "|---|---:|---|---:|---|"
  for t in "nocache:0.35:0.25" "nocache-status:0.35:0.25" "nocache-pet:0.35:0.25" "nocache-status-date:0.2:0.15"; do
    IFS=: read -r name we wr <<< "$t"
    e=$(ratio "$name" embedded); r=$(ratio "$name" redis)
    echo "| $name ≥ $we (embedded), ≥ $wr (Redis) of the ceiling | $e | $(met "$e" ">=" "$we") | $r | $(met "$r" ">=" "$wr") |"
  done
  for t in list:0.85 list-gzip:0.8 notmodified:0.7 page:0.6 page-gzip:0.6 notfound:0.6 nokey:0.6; do
    IFS=: read -r name we <<< "$t"
    e=$(ratio "$name" embedded); r=$(ratio "$name" redis); f=$(ratio "$name" floor)
    rf=$(awk -v r="$r" -v f="$f" 'BEGIN {printf "%.2f", r / f}')
    echo "| $name ≥ $we of the ceiling (embedded), ≥ 0.85 of the floor (Redis) | $e | $(met "$e" ">=" "$we") | $rf | $(met "$rf" ">=" 0.85) |"
  done
  if [ "$MILLION" = 1000000 ]; then
    for t in "walk:walk of a million orders, pageSize 1000 (s):<=:5:10" "list:first v1 list after start (s):<=:3:3" \
      "rate:import (orders/s):>=:100000:80000" "rss:import peak RSS (MB):<=:150:150"; do
      IFS=: read -r k what op we wr <<< "$t"
      e=$(mfig "embedded-$k"); r=$(mfig "redis-$k")
      sym=≤; [ "$op" = ">=" ] && sym=≥
      echo "| $what $sym $we (embedded), $sym $wr (Redis) | $e | $(met "$e" "$op" "$we") | $r | $(met "$r" "$op" "$wr") |"
    done
  else
    echo "| the million targets (walk, first list, import) | not judged: MILLION=$MILLION | | | |"
  fi
  fi
  if [ -n "$lessons" ]; then echo; echo "$lessons"; fi
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "== wrote $OUT in $(( $(date +%s) - t_start )) s" >&2
