# Sourced by bench/run.sh. fixed_rate prints the table "p99 at a fixed rate" (issue 13): the
# list path offered, open-loop, half the ceiling's throughput on it measured by wrk in the
# same run (the median of the rounds), by bench/openload, which measures each latency from
# the moment the request was due, so a server that stalls is charged for the requests that
# waited. The ceiling, orderd embedded and orderd on Redis take turns in each of $ROUNDS
# rounds; the ratio is the median of the rounds' ratios of orderd's p99 to the ceiling's, and
# the figures beside it those of that round. It uses run.sh's variables: $R, $ROUNDS, $ceil,
# $emb, $red, $KEY_EMB, $KEY_RED, $CONNECTIONS, $work. Progress goes to stderr.
FIXED_DURATION=${FIXED_DURATION:-5s}
# FIXED_P99[embedded|redis]: the median ratio of orderd's p99 to the ceiling's, for run.sh's
# table of targets.
declare -A FIXED_P99

fixed_rate() {
  CGO_ENABLED=0 go build -trimpath -o "$work/openload" ./bench/openload
  local rate round target addr key ratio r
  rate=$(for round in $(seq "$ROUNDS"); do echo "${R[$round,list,ceiling]%% *}"; done |
    sort -n | awk '{a[NR]=$1} END {printf "%.0f", a[int((NR+1)/2)] / 2}')
  # F[round,target]: offered p50 p90 p99 p99.9 achieved errors non2xx late sent
  local -A F P99R
  for round in $(seq "$ROUNDS"); do
    for target in ceiling embedded redis; do
      server "$target"
      echo "== fixed rate, round $round: $rate/s to $target" >&2
      F[$round,$target]=$("$work/openload" -terse -rate "$rate" -c "$CONNECTIONS" -d "$FIXED_DURATION" -warmup 1s \
        -H "Authorization: Bearer $key" -url "http://$addr/v1/store/orders")
      echo "   ${F[$round,$target]}" >&2
    done
    for target in embedded redis; do
      P99R[$target]+="$(awk -v a="$(echo "${F[$round,$target]}" | cut -d' ' -f4)" -v b="$(echo "${F[$round,ceiling]}" | cut -d' ' -f4)" 'BEGIN{printf "%.2f", a/b}') "
    done
  done
  echo "| server | offered/s | answered/s | p50 | p99 | p99.9 | errors | non-2xx | sent late | p99 / ceiling's p99 (median) | ratios of the rounds |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  # Each orderd row comes after the ceiling's row of the same round, the round of its median.
  for target in embedded redis; do
    ratio=$(echo "${P99R[$target]}" | tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    FIXED_P99[$target]=$ratio
    r=$(fixed_rate_round "$ratio" ${P99R[$target]})
    fixed_rate_row "ceiling (round $r)" "${F[$r,ceiling]}" 1.00 ""
    fixed_rate_row "$target" "${F[$r,$target]}" "$ratio" "${P99R[$target]}"
  done
}

# fixed_rate_row NAME FIGURES RATIO RATIOS: one row of the table from openload's -terse line.
fixed_rate_row() {
  echo "$2" | awk -v t="$1" -v m="$3" -v all="$4" \
    '{printf "| %s | %s | %s | %.2fms | %.2fms | %.2fms | %s | %s | %s | %s | %s|\n", t, $1, $6, $2, $4, $5, $7, $8, $9, m, all}'
}

# fixed_rate_round RATIO RATIOS...: the round (1-based) whose ratio is RATIO.
fixed_rate_round() {
  local want=$1 i=0 x
  shift
  for x in "$@"; do i=$((i + 1)); [ "$x" = "$want" ] && { echo "$i"; return; }; done
  echo 1
}
