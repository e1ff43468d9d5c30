#!/usr/bin/env bash
# CPU of `gpuwarden watch` at its default refresh (1 s) on 8 GPUs (the demo fleet, fake NVML),
# fed by the daemon, in a tmux pane of 120x40, over SECONDS seconds: utime+stime of the watch
# process from /proc/<pid>/stat. Also the same for direct mode (--demo, no daemon).
#   bench/watch/cpu.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=${1:?build dir}; secs=${2:-60}
bin=$build/gpuwarden; lib=$build/fake-nvml/libnvidia-ml.so.1
tmp=$(mktemp -d); trap 'tmux -S $tmp/s kill-server 2>/dev/null || true; kill $dpid 2>/dev/null || true; rm -rf $tmp' EXIT
port=$((20000 + RANDOM % 1000))
printf '[serve]\nlisten = "127.0.0.1:%s"\n[storage]\npath = "%s/h.db"\n[sampling]\nkernel_log = ""\n' "$port" "$tmp" > $tmp/gw.toml
$bin serve --demo --nvml-lib $lib --config $tmp/gw.toml >$tmp/serve.log 2>&1 & dpid=$!
sleep 3
hz=$(getconf CLK_TCK)
measure() {  # $1: window name, rest: command
  local name=$1; shift
  tmux -S $tmp/s new-window -d -n $name "$*" 2>/dev/null || tmux -S $tmp/s -f /dev/null new-session -d -s b -n $name -x 120 -y 40 "$*"
  sleep 3
  local pid; pid=$(tmux -S $tmp/s display-message -p -t b:$name '#{pane_pid}')
  pid=$(pgrep -P "$pid" -f "gpuwarden watch" || echo "$pid")
  local a; a=$(awk '{print $14+$15}' /proc/$pid/stat)
  sleep "$secs"
  local b; b=$(awk '{print $14+$15}' /proc/$pid/stat)
  awk -v t=$((b - a)) -v hz=$hz -v s=$secs -v n="$name" 'BEGIN { printf "%s: %.2f %% of one core (%d ticks in %d s)\n", n, 100 * t / hz / s, t, s }'
}
measure daemon "$bin watch --url http://127.0.0.1:$port"
measure direct "$bin watch --demo --nvml-lib $lib"
