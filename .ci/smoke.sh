#!/usr/bin/env bash
# Starts the server the way the README says, checks it answers, then checks
# SIGTERM shuts it down cleanly (exit 0).
set -euo pipefail
dir=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
npm run build --silent
PORT=$port DATA_DIR=$dir node --max-semi-space-size=4 dist/src/main.js >"$dir/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break
  sleep 0.25
done
curl -fsS "http://127.0.0.1:$port/api/health"; echo
curl -fsS "http://127.0.0.1:$port/api/openapi.json" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const d=JSON.parse(s);if(!String(d.openapi).startsWith('3.1'))process.exit(1);console.log('openapi paths:',Object.keys(d.paths).length)})"
test "$(stat -c %a "$dir/master.key")" = 600
kill -TERM "$pid"
wait "$pid"
echo "graceful shutdown: exit $?"
grep -q "provider sms: sandbox" "$dir/server.log" || { echo "start-up did not log the sandbox providers"; cat "$dir/server.log"; exit 1; }
