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

# A free loopback port below 55536 whose cluster bus port (itself + 10000) is free too.
free_cluster_port() {
  python3 -c '
import random, socket
for _ in range(200):
    p = random.randint(20000, 45000)
    try:
        for q in (p, p + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
        print(p); break
    except OSError:
        pass'
}

# start_cluster DIR N: a Redis Cluster of N masters, no replicas and no persistence, on loopback,
# the slots spread by redis-cli; sets cluster_ports and cluster_pids (arrays) and returns once every
# master reports cluster_state:ok (or fails after 10 s).
start_cluster() {
  local dir="$1" n="$2" port i
  cluster_ports=(); cluster_pids=()
  for i in $(seq "$n"); do
    port="$(free_cluster_port)"
    mkdir -p "$dir/node-$port"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir/node-$port" \
      --cluster-enabled yes --cluster-config-file nodes.conf >"$dir/node-$port/redis.log" 2>&1 &
    cluster_pids+=("$!"); cluster_ports+=("$port")
  done
  for port in "${cluster_ports[@]}"; do
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  done
  redis-cli --cluster create $(printf '127.0.0.1:%s ' "${cluster_ports[@]}") --cluster-replicas 0 --cluster-yes \
    >"$dir/cluster-create.log" 2>&1 || { cat "$dir/cluster-create.log" >&2; return 1; }
  for port in "${cluster_ports[@]}"; do
    for i in $(seq 201); do
      redis-cli -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
      [ "$i" = 201 ] && { echo "cluster node $port never reached cluster_state:ok" >&2; return 1; }
      sleep 0.05
    done
  done
}
