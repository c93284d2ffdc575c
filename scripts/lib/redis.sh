# Sourced by the benchmark scripts that need a throwaway redis-server on loopback.

# A free loopback port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_redis DIR [PREFIX...]: a redis-server without persistence on a free loopback port, its files in
# DIR, run under PREFIX (e.g. taskset -c 1) when given; sets redis_port and redis_pid, and returns once
# it answers PING (or after 5 s).
start_redis() {
  local dir="$1"; shift
  redis_port="$(free_port)"
  "$@" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.05; done
}
