#!/usr/bin/env bash
# Restarts PostgreSQL under load: two server instances share one database (a
# schema of its own), requests run against both, `pg_ctlcluster … restart -m
# fast` cuts every connection, and both processes must still be alive with
# /api/health answering 200 within 30 s. Usage: .ci/pg-restart.sh DATABASE_URL
# (run as root on a machine whose PostgreSQL cluster `main` may be restarted).
set -euo pipefail
cd "$(dirname "$0")/.."
base_url=${1:?usage: .ci/pg-restart.sh DATABASE_URL}
version=$(ls /etc/postgresql | sort -V | tail -1)
schema="pgrestart_$$_$RANDOM"
dir=$(mktemp -d)
pids=()

node -e "const pg=require('pg');const c=new pg.Client({connectionString:process.argv[1]});c.connect().then(()=>c.query('create schema $schema')).then(()=>c.end())" "$base_url"
sep='?'; [[ $base_url == *\?* ]] && sep='&'
url="${base_url}${sep}options=-c%20search_path%3D${schema}"

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  node -e "const pg=require('pg');const c=new pg.Client({connectionString:process.argv[1]});c.connect().then(()=>c.query('drop schema if exists $schema cascade')).then(()=>c.end())" "$base_url" || true
  rm -rf "$dir"
}
trap cleanup EXIT

node scripts/build-if-stale.mjs
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
master=$(node -e "console.log(require('crypto').randomBytes(32).toString('base64'))")
jwt=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")
ports=()
for i in 1 2; do
  port=$(free_port)
  ports+=("$port")
  DATABASE_URL=$url MASTER_KEY=$master JWT_SECRET=$jwt PORT=$port HOST=127.0.0.1 DATA_DIR="$dir/$i" NODE_ENV=production ALLOW_SANDBOX=1 LOG_LEVEL=warn \
    node dist/server.js >"$dir/server$i.log" 2>&1 &
  pids+=($!)
done

healthy() { curl -fsS -m 2 "http://127.0.0.1:$1/api/health" >/dev/null 2>&1; }
for port in "${ports[@]}"; do
  for _ in $(seq 1 120); do healthy "$port" && break; sleep 0.25; done
  healthy "$port" || { echo "instance on port $port did not start"; cat "$dir"/server*.log; exit 1; }
done
echo "two instances up on ports ${ports[*]} (schema $schema)"

# A few hundred requests per instance, running before, during and after the restart; statuses are counted.
node -e "
const ports = process.argv.slice(1);
const counts = {};
// About 12 s of requests: before, during and after the restart.
const until = Date.now() + 12000;
let left = 0;
async function worker(port) {
  while (Date.now() < until) {
    left++;
    // Health, and an API-key lookup (a database read on every request; the key does not exist: 401).
    const path = left % 2 ? '/api/health' : '/api/api-keys';
    const init = path === '/api/health' ? {} : { headers: { authorization: 'Bearer wsk_' + 'x'.repeat(40) } };
    try { const r = await fetch('http://127.0.0.1:' + port + path, init); await r.arrayBuffer(); counts[r.status] = (counts[r.status] ?? 0) + 1; }
    catch { counts.network = (counts.network ?? 0) + 1; }
    await new Promise((r) => setTimeout(r, 20));
  }
}
Promise.all(ports.flatMap((p) => [worker(p), worker(p)])).then(() => {
  console.log('load statuses:', JSON.stringify(counts));
  if (!counts[200]) { console.error('no request succeeded'); process.exitCode = 1; }
  if (counts[500]) { console.error('requests answered 500 while the database restarted (expected 503)'); process.exitCode = 1; }
});
" "${ports[@]}" &
load=$!
sleep 1
echo "restarting PostgreSQL $version (fast)"
pg_ctlcluster "$version" main restart -m fast
restarted=$(date +%s)
wait "$load"

for i in 0 1; do
  kill -0 "${pids[$i]}" 2>/dev/null || { echo "instance $((i + 1)) died when PostgreSQL restarted:"; cat "$dir/server$((i + 1)).log"; exit 1; }
done
for port in "${ports[@]}"; do
  until healthy "$port"; do
    if (($(date +%s) - restarted > 30)); then echo "/api/health on port $port not 200 within 30 s of the restart"; cat "$dir"/server*.log; exit 1; fi
    sleep 0.5
  done
done
echo "both instances alive and answering /api/health 200 (checked $(($(date +%s) - restarted)) s after the restart, when the load ended)"
