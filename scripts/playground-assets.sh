#!/usr/bin/env bash
# Fetches the GraphiQL playground's assets from the npm registry (versions pinned
# in playground/package-lock.json) and copies the four files the page loads into
# playground/assets/, which the binary embeds. Nothing fetched is committed.
set -euo pipefail
cd "$(dirname "$0")/../playground"
want=(graphiql/graphiql.min.js graphiql/graphiql.min.css react/umd/react.production.min.js react-dom/umd/react-dom.production.min.js)
stamp=assets/.lock-sha
sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then exit 0; fi
command -v npm >/dev/null || ../scripts/apt-install.sh npm
echo "playground-assets: npm ci (GraphiQL, React; pinned in package-lock.json)" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
for f in "${want[@]}"; do cp "node_modules/$f" "assets/$(basename "$f")"; done
echo "$sum" > "$stamp"
