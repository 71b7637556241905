#!/usr/bin/env bash
# Installs and starts a local PostgreSQL 15 with a role and database for tests.
# Idempotent; needs root (no systemd on these machines).
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -n | tail -1)
# Debian's shared_buffers is PostgreSQL's default, 128 MB, meant for the smallest machines: under the bench's writes
# the backends then write out dirty pages themselves and commits waited on stalled WAL flushes (PUT maxima of
# 168-514 ms; 42-146 ms with 1 GB). PostgreSQL's docs suggest a quarter of the memory for a dedicated server; 1 GB
# is plenty for the tests and the bench (bench/ANALYSIS.md, 27 Nov 2026).
# max_connections: the real-time test files run all at once (26 of them, each an app with its pools, some two), beside
# the rest; at the default 100 the PostgreSQL pass ran out of connection slots.
conf="/etc/postgresql/$version/main/conf.d/workspace.conf"
wanted=$'shared_buffers = 1GB\nmax_connections = 500'
if [ "$(cat "$conf" 2>/dev/null)" != "$wanted" ]; then
  mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$wanted" > "$conf"
  if pg_lsclusters -h | awk '{print $4}' | grep -q online; then pg_ctlcluster "$version" main restart; fi
fi
if ! pg_lsclusters -h | awk '{print $4}' | grep -q online; then
  pg_ctlcluster "$version" main start
fi
for _ in $(seq 1 30); do
  su postgres -c "psql -qtAc 'select 1'" >/dev/null 2>&1 && break
  sleep 0.5
done
su postgres -c "psql -qtAc \"select 1 from pg_roles where rolname='workspace'\"" | grep -q 1 ||
  su postgres -c "psql -qc \"create role workspace login password 'workspace'\""
su postgres -c "psql -qtAc \"select 1 from pg_database where datname='workspace_test'\"" | grep -q 1 ||
  su postgres -c "psql -qc 'create database workspace_test owner workspace'"
echo "postgres://workspace:workspace@127.0.0.1:5432/workspace_test"
