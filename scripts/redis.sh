#!/usr/bin/env bash
# Prints a REDIS_URL for a Redis that is up on 127.0.0.1:6379, starting one if needed.
set -euo pipefail
if [ -n "${REDIS_URL:-}" ]; then echo "$REDIS_URL"; exit 0; fi
command -v redis-server >/dev/null || "$(dirname "$0")/apt-install.sh" redis-server
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "redis.sh: starting redis-server" >&2
  mkdir -p /tmp/cnpjgraph-redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /tmp/cnpjgraph-redis --logfile /tmp/cnpjgraph-redis/redis.log >&2
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.25; done
fi
echo "redis://127.0.0.1:6379/0"
