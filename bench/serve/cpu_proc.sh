#!/bin/sh
# Daemon CPU from the outside: starts `gpuwarden serve` on the 8-GPU fake scenario at 1 Hz,
# lets it settle, and reads utime+stime of its /proc/<pid>/stat over SECONDS (default 60).
# Usage: bench/serve/cpu_proc.sh BUILD_DIR [SECONDS]    (e.g. build/release 60)
set -eu
build=${1:?build folder, e.g. build/release}
secs=${2:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
printf '[serve]\nlisten = "127.0.0.1:0"\n[storage]\npath = "%s/h.db"\n[sampling]\ninterval = "1s"\nkernel_log = ""\n' \
  "$dir" >"$dir/gw.toml"
"$build/gpuwarden" serve --config "$dir/gw.toml" --nvml-lib "$build/fake-nvml/libnvidia-ml.so.1" \
  --scenario "$src/bench/serve/bench-8x-h100-gpm.json" >"$dir/log" 2>&1 &
pid=$!
sleep 5  # past start-up: probes, the first diagnosis, the database created
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }  # utime + stime, clock ticks
hz=$(getconf CLK_TCK)
t0=$(ticks)
w0=$(date +%s.%N)
sleep "$secs"
t1=$(ticks)
w1=$(date +%s.%N)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v w0="$w0" -v w1="$w1" -v rss="$rss" 'BEGIN {
  cpu = (b - a) / hz; wall = w1 - w0;
  printf "cpu_proc: %.3f s CPU in %.1f s = %.3f%% of one core; RSS %.1f MiB\n", cpu, wall,
         100 * cpu / wall, rss / 1024 }'
