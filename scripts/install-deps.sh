#!/usr/bin/env bash
# Installs what building, testing and the demo need, from Debian 12's archive (run as root),
# with a deb-src entry for the source packages the Windows build is made from
# (scripts/build-windows-deps.sh), and the PowerShell grammar the install-script test parses with, from the npm registry (Debian
# has no pwsh), as is Grafana's @grafana/data for the dashboard test. Runs `apt-get update` only
# when a package is missing.
set -euo pipefail
# wine64-preloader (only suggested by wine64): without it, a wine process now and then dies
# before its first instruction, when the C library's heap, placed at random, covers the page
# Windows keeps at 0x7ffe0000 ("failed to map the shared user data"); CreateProcess then fails
# with 1359 (tests/support/wine_prefix.sh refuses to run without it).
packages=(
  g++ cmake ninja-build pkg-config libc6-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libboost-program-options-dev libspdlog-dev libyaml-cpp-dev libgtest-dev libbenchmark-dev
  prometheus-cpp-dev prometheus
  containerd runc busybox-static curl socat
  g++-mingw-w64-x86-64-posix wine64 wine64-preloader clang libclang-rt-14-dev llvm-14
  systemd python3 python3-yaml python3-grpcio
  dpkg-dev patch
  skopeo umoci
)
# Node.js and npm: Debian's (Node 18) unless the machine already has them (another build of them).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The same archives and suites as Debian's own entry, for source packages (apt-get source).
update=false
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >/etc/apt/sources.list.d/dxshim-deb-src.sources
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/dxshim-deb-src.list
  fi
  update=true
fi
if [ ${#missing[@]} -gt 0 ] || $update; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# tree-sitter's runtime and its PowerShell grammar, pinned; npm checks each tarball against the
# registry's integrity hash. Unpacked where CMake looks by default (DXSHIM_POWERSHELL_GRAMMAR).
deps=/var/cache/dxshim
grammar="$deps/powershell-grammar"
if [ ! -f "$grammar/tree-sitter-powershell/src/parser.c" ] ||
  [ ! -f "$grammar/tree-sitter/vendor/tree-sitter/lib/src/lib.c" ]; then
  echo "fetching the PowerShell grammar (npm: tree-sitter@0.25.1, tree-sitter-powershell@0.26.4)"
  download=$(mktemp -d)
  (cd "$download" && npm pack --silent tree-sitter@0.25.1 tree-sitter-powershell@0.26.4 >/dev/null)
  rm -rf "$grammar"
  mkdir -p "$grammar/tree-sitter" "$grammar/tree-sitter-powershell"
  tar xzf "$download/tree-sitter-0.25.1.tgz" -C "$grammar/tree-sitter" --strip-components=1
  tar xzf "$download/tree-sitter-powershell-0.26.4.tgz" -C "$grammar/tree-sitter-powershell" \
    --strip-components=1
  rm -rf "$download"
fi

# Grafana's own data-frame code (@grafana/data, and the react it imports) for the dashboard test,
# tests/monitoring/dashboard_tables.mjs: the exact versions of tests/monitoring/package-lock.json,
# each tarball checked against the lock's integrity hash. Installed again only when that file
# changes, so a re-run needs no network.
grafana_data="$deps/grafana-data"
monitoring="$(dirname "$0")/../tests/monitoring"
if ! cmp -s "$monitoring/package-lock.json" "$grafana_data/package-lock.json" ||
  [ ! -f "$grafana_data/node_modules/@grafana/data/package.json" ]; then
  echo "installing the dashboard test's npm packages (npm ci: tests/monitoring/package-lock.json)"
  mkdir -p "$deps"
  staging=$(mktemp -d "$deps/grafana-data.XXXXXX")
  cp "$monitoring/package.json" "$monitoring/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
    { rm -rf "$staging"; exit 1; }
  chmod 755 "$staging"
  rm -rf "$grafana_data"
  mv "$staging" "$grafana_data"
fi
