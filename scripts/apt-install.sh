#!/usr/bin/env bash
# apt-install.sh PACKAGE...: installs the Debian packages that are missing,
# quietly. Installed ones are skipped without touching apt (dpkg-query), so a
# machine that has everything runs no apt at all; otherwise one update and
# one install, non-interactive, their output in a log shown only on failure.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
log="${TMPDIR:-/tmp}/cnpjgraph-apt.log"
echo "installing ${missing[*]} from Debian's packages (log: $log)" >&2
export DEBIAN_FRONTEND=noninteractive
sudo=""
[ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo="sudo -E"
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "apt-install.sh: installing ${missing[*]} failed (log above, and in $log)" >&2
  exit 1
fi
