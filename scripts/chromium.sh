#!/usr/bin/env bash
# The playground's browser test drives headless Chromium (Debian's package).
# Installs it when missing; prints its path.
set -euo pipefail
if ! command -v chromium >/dev/null; then
  echo "chromium.sh: installing Debian's chromium for the playground's browser test" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2
fi
command -v chromium
