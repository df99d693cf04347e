#!/usr/bin/env bash
# Tools the tests drive, from Debian's packages, installed when missing:
# headless Chromium (the playground's browser test) and poppler-utils
# (pdftotext and pdftoppm read the certificates back).
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v pdftotext >/dev/null || need+=(poppler-utils)
if [ ${#need[@]} -gt 0 ]; then
  echo "test-tools.sh: installing ${need[*]} from Debian's packages" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >&2
fi
