#!/bin/sh
# The daemon under many scrapers (docs/perf/serve.md): starts the release `gpuwarden serve` on a
# scenario (default scenarios/demo.json, 8 GPUs) at 1 Hz, measures its CPU idle for SECONDS,
# then runs CLIENTS scrapers (default 16), each opening a new connection per /metrics request,
# for SECONDS, and prints the latency p50/p99, the daemon's CPU under the load, the longest
# sampling round and the rounds completed. The machine's load average is printed with it.
# Usage: bench/serve/scrape.sh BUILD_DIR [SECONDS=30] [CLIENTS=16] [PAUSE_MS=0] [SCENARIO]
set -eu
build=${1:?build folder, e.g. build/release}
secs=${2:-30}
clients=${3:-16}
pause=${4:-0}
src=$(cd "$(dirname "$0")/../.." && pwd)
scenario=${5:-$src/scenarios/demo.json}
dir=$(mktemp -d)
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi; rm -rf "$dir"' EXIT
printf '[serve]\nlisten = "127.0.0.1:0"\n[storage]\npath = "%s/h.db"\n[sampling]\ninterval = "1s"\nkernel_log = ""\n' \
  "$dir" >"$dir/gw.toml"
"$build/gpuwarden" serve --config "$dir/gw.toml" --nvml-lib "$build/fake-nvml/libnvidia-ml.so.1" \
  --scenario "$scenario" >"$dir/log" 2>&1 &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$dir/log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "scrape.sh: the daemon did not start:" >&2; cat "$dir/log" >&2; exit 1; }
sleep 5  # past start-up: probes, the first diagnosis, the database created
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }  # utime + stime, clock ticks
hz=$(getconf CLK_TCK)
cpu_over() { # cpu_over LABEL COMMAND...: the daemon's CPU while COMMAND runs
  label=$1
  shift
  t0=$(ticks)
  w0=$(date +%s.%N)
  "$@"
  t1=$(ticks)
  w1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v hz="$hz" -v w0="$w0" -v w1="$w1" -v l="$label" 'BEGIN {
    printf "daemon CPU %s: %.3f s in %.1f s = %.3f%% of one core\n", l, (b - a) / hz, w1 - w0,
           100 * (b - a) / hz / (w1 - w0) }'
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
cpu_over "idle at 1 Hz" sleep "$secs"
cpu_over "under $clients scrapers" "$build/bench/serve/scrape_load" "$port" "$secs" "$clients" "$pause"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
