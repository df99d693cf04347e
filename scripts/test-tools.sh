#!/usr/bin/env bash
# Tools the tests drive, from Debian's packages, installed when missing:
# headless Chromium (the playground's browser test) and poppler-utils
# (pdftotext and pdftoppm read the certificates back).
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v pdftotext >/dev/null || need+=(poppler-utils)
if [ ${#need[@]} -gt 0 ]; then
  "$(dirname "$0")/apt-install.sh" "${need[@]}"
fi
