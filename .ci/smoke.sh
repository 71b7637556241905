#!/usr/bin/env bash
# Starts the server the way the README says (`npm start`), checks it answers
# with its security headers, then checks SIGTERM to the npm process stops the
# server cleanly and frees the port.
set -euo pipefail
dir=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
PORT=$port DATA_DIR=$dir npm start --silent >"$dir/server.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 240); do
  curl -fsS "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break
  sleep 0.25
done
curl -fsS "http://127.0.0.1:$port/api/health"; echo
curl -fsS "http://127.0.0.1:$port/api/openapi.json" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const d=JSON.parse(s);if(!String(d.openapi).startsWith('3.1'))process.exit(1);console.log('openapi paths:',Object.keys(d.paths).length)})"
curl -fsSI "http://127.0.0.1:$port/api/health" | grep -qi '^content-security-policy:' || { echo "no security headers"; exit 1; }
# npm start runs the bundle (dist/server.js): the console's files are found from it beside dist/src.
grep -q 'dist/server.js' package.json || { echo "npm start does not run dist/server.js"; exit 1; }
curl -fsS "http://127.0.0.1:$port/console" | grep -qi '<!doctype html' || { echo "the console page did not answer"; exit 1; }
curl -fsS "http://127.0.0.1:$port/api/docs/static/swagger-ui.css" >/dev/null || { echo "the API docs' files did not answer"; exit 1; }
test "$(stat -c %a "$dir/master.key")" = 600
test "$(stat -c %a "$dir/workspace.sqlite")" = 600
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
echo "graceful shutdown: exit $status"
test "$status" = 0
node -e "const s=require('net').createServer().once('error',()=>{console.error('port still in use after SIGTERM');process.exit(1)}).listen($port,'127.0.0.1',()=>s.close())"
grep -q "provider sms: sandbox" "$dir/server.log" || { echo "start-up did not log the sandbox providers"; cat "$dir/server.log"; exit 1; }
# dist/ is current now: a second start must not compile again.
node scripts/build-if-stale.mjs 2>&1 | grep -q building && { echo "prestart rebuilt a current dist/"; exit 1; }
echo "smoke test passed"
