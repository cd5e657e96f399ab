# Sourced by bench/run.sh. redis_per_request prints, for each path, the Redis commands and the
# reads Redis made of its clients' sockets per request, measured while wrk drives orderd in
# Redis mode: deltas of INFO stats (total_commands_processed, total_reads_processed) over a
# wrk run, divided by the requests wrk completed. A read is what one round trip costs Redis
# (a pipeline's commands arriving together are one read), so reads per request is the round
# trips per request, shared ones counted once. It uses run.sh's variables: $rport (Redis),
# $red (orderd on Redis), $KEY_RED, $CONNECTIONS, $DURATION, and its paths array and row_args.
redis_stat() { redis-cli -p "$rport" info stats | tr -d '\r' | awk -F: -v k="$1" '$1==k {print $2}'; }

redis_per_request() {
  echo "| path | Redis commands per request | Redis reads (round trips) per request | requests |"
  echo "|---|---:|---:|---:|"
  local entry name path c0 r0 c1 r1 n
  for entry in "${paths[@]}"; do
    name=${entry%%:*}; path=${entry#*:}
    row_args "$name" "$KEY_RED"
    c0=$(redis_stat total_commands_processed); r0=$(redis_stat total_reads_processed)
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" "${ROW_ARGS[@]}" "http://$red$path" > "$work/wrk-redis.out" 2>&1
    c1=$(redis_stat total_commands_processed); r1=$(redis_stat total_reads_processed)
    n=$(awk '/requests in/ {print $1}' "$work/wrk-redis.out")
    # Two INFO calls are commands and reads of their own: take them off.
    awk -v name="$name" -v c=$((c1 - c0 - 1)) -v r=$((r1 - r0 - 1)) -v n="$n" \
      'BEGIN {printf "| %s | %.2f | %.2f | %d |\n", name, c/n, r/n, n}'
  done
}
