#!/usr/bin/env bash
# Installs the official CNPJá client (@cnpja/sdk, pinned in
# sdkcheck/package-lock.json) for sdkcheck/sdk_test.go, which runs it against
# cnpjgraph. npm ci only when the lock changed; nothing fetched is committed.
set -euo pipefail
cd "$(dirname "$0")/../sdkcheck"
stamp=node_modules/.lock-sha
sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then exit 0; fi
command -v npm >/dev/null || ../scripts/apt-install.sh npm
echo "sdk-check: npm ci (@cnpja/sdk; pinned in sdkcheck/package-lock.json)" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
echo "$sum" > "$stamp"
