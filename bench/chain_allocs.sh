# Sourced by bench/run.sh. chain_allocs prints the allocations (and bytes) per request of the
# whole chain in process, from internal/api's BenchmarkChain (-benchmem, 5 runs, medians):
# what each request costs the garbage collector, apart from any network.
chain_allocs() {
  echo "| request | allocs/op | B/op | ns/op |"
  echo "|---|---:|---:|---:|"
  go test -run='^$' -bench='^BenchmarkChain' -benchmem -count=5 ./internal/api/ 2>/dev/null |
    awk '/^BenchmarkChain/ {
        name=$1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
        for (i=3; i<NF; i++) { if ($(i+1)=="ns/op") ns[name]=ns[name] " " $i; if ($(i+1)=="B/op") b[name]=b[name] " " $i; if ($(i+1)=="allocs/op") a[name]=a[name] " " $i }
        if (!(name in seen)) { seen[name]=1; order[++n]=name }
      }
      function med(s,   v, k, i, j, t) { k=split(s, v, " "); for (i=1;i<=k;i++) for (j=i+1;j<=k;j++) if (v[j]+0<v[i]+0) {t=v[i]; v[i]=v[j]; v[j]=t}; return v[int((k+1)/2)] }
      END { for (i=1;i<=n;i++) printf "| %s | %s | %s | %s |\n", order[i], med(a[order[i]]), med(b[order[i]]), med(ns[order[i]]) }'
}
