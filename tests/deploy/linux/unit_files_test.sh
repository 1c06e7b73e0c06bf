#!/usr/bin/env bash
# The Linux node service files in deploy/linux/, checked by systemd itself: `systemd-analyze
# verify` on dxshim.service (ExecStart pointed at the binary just built) must pass without a
# single complaint (an unknown key is only a warning there, so any output fails the test); the
# kubelet drop-in is verified as a drop-in of a stand-in kubelet.service.
# usage: unit_files_test.sh SOURCE_DIR DXSHIM_BINARY
set -uo pipefail
src=${1:?usage: unit_files_test.sh SOURCE_DIR DXSHIM_BINARY}
binary=${2:?usage: unit_files_test.sh SOURCE_DIR DXSHIM_BINARY}
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (apt-get install systemd)"; exit 1; }
work=$(mktemp -d /tmp/dxshim-units-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
verify() {  # verify NAME UNIT_FILE...
  local name=$1
  shift
  local out
  out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$@" 2>&1)
  local code=$?
  if [ "$code" = 0 ] && [ -z "$out" ]; then
    echo "ok: $name"
  else
    echo "FAILED: $name (exit $code)"
    echo "$out"
    failures=$((failures + 1))
  fi
}
sed "s|/usr/local/bin/dxshim|$binary|" "$src/deploy/linux/dxshim.service" >"$work/dxshim.service"
verify "dxshim.service" "$work/dxshim.service"
# A deliberately broken copy must be caught, or this test proves nothing.
sed 's/^Restart=always/Restartt=always/' "$work/dxshim.service" >"$work/broken.service"
out=$(systemd-analyze verify "$work/broken.service" 2>&1)
if [ -n "$out" ]; then echo "ok: a misspelt key is reported"; else echo "FAILED: misspelt key not reported"; failures=$((failures + 1)); fi
cat >"$work/kubelet.service" <<UNIT
[Unit]
Description=stand-in kubelet
[Service]
ExecStart=/bin/true
UNIT
mkdir -p "$work/kubelet.service.d"
cp "$src/deploy/linux/10-dxshim.conf" "$work/kubelet.service.d/"
# verify reads drop-ins next to the unit file's directory name only from the unit search path;
# SYSTEMD_UNIT_PATH points it at the work directory (":" keeps the defaults after it).
SYSTEMD_UNIT_PATH="$work:" verify "kubelet drop-in" "$work/kubelet.service"
[ "$failures" = 0 ]
