#!/bin/sh
# Times `gpuwarden check` with the daemon down (one snapshot through the fake NVML: healthy,
# and a GPU whose power call hangs for 30 s) and up (verdict from /api/findings), beside
# `gpuwarden --version` (process start alone) as the yardstick. Usage:
#   bench/check/check_timing.sh BUILD_DIR [RUNS]
set -eu
B=$1/gpuwarden
N=${2:-5}
S=$(cd "$(dirname "$0")/../.." && pwd)/scenarios
T=$(mktemp -d)
trap 'kill $SERVE 2>/dev/null || true; rm -rf "$T"' EXIT
ms() { date +%s%3N; }
time_it() {  # label, command...
  label=$1; shift
  best=999999; total=0
  i=0
  while [ $i -lt "$N" ]; do
    t0=$(ms); "$@" >/dev/null 2>&1 || true; t1=$(ms)
    d=$((t1 - t0)); total=$((total + d)); [ $d -lt $best ] && best=$d
    i=$((i + 1))
  done
  echo "$label: median-free mean $((total / N)) ms, best $best ms over $N runs"
}
PORT=19417
printf '[serve]\nlisten = "127.0.0.1:%s"\n[storage]\nenabled = false\n[sampling]\nkernel_log = ""\n' "$PORT" > "$T/gw.toml"
time_it "yardstick: gpuwarden --version" "$B" --version
time_it "daemon down, healthy 8 GPUs (snapshot)" "$B" check --config "$T/gw.toml" --scenario "$S/healthy-8x-h100.json"
time_it "daemon down, GPU 3 hangs, --deadline-ms 2000 (default)" "$B" check --config "$T/gw.toml" --scenario "$S/hung-call.json"
"$B" serve --config "$T/gw.toml" --scenario "$S/hung-call.json" >"$T/serve.log" 2>&1 &
SERVE=$!
i=0; while [ $i -lt 100 ] && ! curl -sf "http://127.0.0.1:$PORT/api/findings" >/dev/null; do sleep 0.2; i=$((i+1)); done
time_it "daemon up (its GPU 3 hung), verdict from /api/findings" "$B" check --config "$T/gw.toml"
