#!/usr/bin/env bash
# On a GPU host: a device pool on loopback with one GPU agent, and `tirtune time --target cuda
# --runner redis://...` and a short `tirtune tune --target cuda --runner redis://...` sent to it,
# as a tuner on a host without a GPU would. Needs the GPU-host
# bundle made with the broker inside: WITH_REDIS=1 scripts/gpu_host_bundle.sh. Results under
# $OUT (or /tmp/tirtune-pool-check).
# Usage: bench/gpu/pool_check.sh [BUNDLE.tar.xz]
set -u
bundle=${1:-build/tirtune-gpu-host.tar.xz}
results=${OUT:-/tmp/tirtune-pool-check}
mkdir -p "$results"
t=$(mktemp -d)
tar xJf "$bundle" -C "$t"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
broker="redis://127.0.0.1:$port"
"$t/redis-server" --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
  > "$results/redis.log" 2>&1 &
redis=$!
sleep 1
agent_pid=""
start_agent() {
  "$t/tirtune-agent" --broker "$broker" --target "cuda -arch=sm_90" --allow-unsigned "$@" \
    >> "$results/agent.log" 2>&1 &
  agent_pid=$!
  sleep 2
}
status=0
start_agent
"$t/tirtune" pool status --broker "$broker" 2>&1
run_time() {
  "$t/tirtune" time --workload "$1" --target "cuda -arch=sm_90" --trace "$2" --runner "$broker"
}
if ! run_time gemm:2048,2048,2048 bench/gpu/traces/gemm_4096.json; then
  echo "with the sandbox it failed; the agent's log:"; tail -20 "$results/agent.log"
  kill "$agent_pid"; wait "$agent_pid" 2>/dev/null
  start_agent --no-sandbox
  run_time gemm:2048,2048,2048 bench/gpu/traces/gemm_4096.json || status=1
fi
run_time softmax:4096,1024 bench/gpu/traces/softmax_cross_4096x1024.json || status=1
run_time conv2d:1,56,56,64,64,3,1,1 bench/gpu/traces/conv2d_56x56x64.json || status=1
# Tuning through the pool: candidates built here, measured by the agent (POOL_TUNE_TRIALS).
timeout -s INT -k 60 "${POOL_TUNE_SECONDS:-120}" "$t/tirtune" --json tune \
  --workload gemm:1024,1024,1024 --target "cuda -arch=sm_90" --trials "${POOL_TUNE_TRIALS:-128}" \
  --runner "$broker" --db "$results/pool_tune.db" --log "$results/pool_tune.log" \
  > "$results/pool_tune.json" || status=1
tail -3 "$results/pool_tune.log"
kill "$agent_pid" "$redis" 2>/dev/null
wait 2>/dev/null
echo "agent log:"; cat "$results/agent.log"
rm -rf "$t"
exit $status
