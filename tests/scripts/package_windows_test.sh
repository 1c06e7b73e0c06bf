#!/usr/bin/env bash
# scripts/package-windows.sh: the release zip holds exactly the files deploy/windows/install.ps1
# expects beside itself, the very binaries the windows-mingw build made and the Windows example
# configuration, dxshim's LICENSE and NOTICE, and under LICENSES/ the license of every third-party
# library the linker puts into either executable (both are relinked with the linker's trace and
# each library it takes members from is mapped to its component by deploy/windows/third-party.tsv);
# it carries no TLS library, and stays under 40 MiB.
# usage: package_test.sh SOURCE_DIR VERSION
set -uo pipefail
export LC_ALL=C
src=${1:?usage: package_test.sh SOURCE_DIR VERSION}
version=${2:?usage: package_test.sh SOURCE_DIR VERSION}
work=$(mktemp -d /tmp/dxshim-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME CONDITION-RESULT [DETAIL]
  if [ "$2" = 0 ]; then echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; [ -n "${3:-}" ] && printf '%s\n' "$3"; fi
}

line=$("$src/scripts/package-windows.sh" "$work/dist" 2>"$work/build.log" | tail -n 1)
check "package-windows.sh succeeds" $? "$(tail -20 "$work/build.log")"
echo "$line"
zip="$work/dist/dxshim-$version-windows-amd64.zip"
check "it names the zip, its size and its SHA-256" \
  $([[ "$line" == "$zip "*" bytes "*"sha256 $(sha256sum "$zip" | cut -d' ' -f1)" ]]; echo $?) "$line"
mkdir "$work/unpacked"
python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print("\n".join(z.namelist())); z.extractall(sys.argv[2])' \
  "$zip" "$work/unpacked" >"$work/names"
check "its top holds exactly dxshim.exe, dxshim-devices.exe, install.ps1, installer-pod.ps1, dxshim.yaml, README.txt, LICENSE, NOTICE, in that order, and the rest is under LICENSES/" \
  $([ "$(grep -v / "$work/names" | tr '\n' ' ')" = "dxshim.exe dxshim-devices.exe install.ps1 installer-pod.ps1 dxshim.yaml README.txt LICENSE NOTICE " ] &&
    ! grep / "$work/names" | grep -qv '^LICENSES/'; echo $?) \
  "$(cat "$work/names")"
check "LICENSE and NOTICE are the repository's" \
  $(cmp -s "$work/unpacked/LICENSE" "$src/LICENSE" && cmp -s "$work/unpacked/NOTICE" "$src/NOTICE"; echo $?)
"$src/scripts/third-party-licenses.sh" "$work/licenses" >/dev/null 2>"$work/licenses.log"
check "LICENSES/ is what scripts/third-party-licenses.sh writes" \
  $(diff -r "$work/licenses/LICENSES" "$work/unpacked/LICENSES" >"$work/licenses.diff" 2>&1; echo $?) \
  "$(cat "$work/licenses.log" "$work/licenses.diff")"
# Every file install.ps1 takes from beside itself (-SourceDir or $PSScriptRoot) is there.
wanted=$(grep -oE "Join-Path \\\$(SourceDir|PSScriptRoot) '[^']+'" "$src/deploy/windows/install.ps1" |
  sed -E "s/.*'([^']+)'/\1/" | sort -u)
missing=$(for f in $wanted; do [ -f "$work/unpacked/$f" ] || echo "$f"; done)
check "install.ps1 finds what it needs beside itself ($(echo $wanted))" \
  $([ -n "$wanted" ] && [ -z "$missing" ]; echo $?) "missing: $missing"
check "the binaries are the windows-mingw build's" \
  $(cmp -s "$work/unpacked/dxshim.exe" "$src/build-windows-mingw/shim/dxshim.exe" &&
    cmp -s "$work/unpacked/dxshim-devices.exe" "$src/build-windows-mingw/devices/dxshim-devices.exe"; echo $?)
check "dxshim.yaml is the Windows example configuration" \
  $(cmp -s "$work/unpacked/dxshim.yaml" "$src/deploy/examples/dxshim-windows.yaml"; echo $?)
check "README.txt names the version and no placeholder is left" \
  $(grep -qF "dxshim $version for Windows" "$work/unpacked/README.txt" && ! grep -q '@' "$work/unpacked/README.txt"; echo $?)
# dxshim uses no TLS: gRPC's unsecure library is linked, and OpenSSL, which announces itself in
# its version text, is not (scripts/grpc-unsecure/).
check "dxshim.exe carries no OpenSSL" $(! grep -qa 'OpenSSL' "$work/unpacked/dxshim.exe"; echo $?)
# Every third-party library the linker takes code from, for both executables: their link commands
# (from the build's ninja) run again into $work with the linker's trace (-t -t names each archive
# member it pulls in); every archive or object outside the build directory must belong to a
# component of deploy/windows/third-party.tsv (the cross-built ones from /var/cache/dxshim, the
# toolchain's from elsewhere), and each such component's license files must be in the zip, as in
# its source. Neither OpenSSL's libraries nor BoringSSL may be among them.
python3 - "$src/build-windows-mingw" "$src/deploy/windows/third-party.tsv" "$work/unpacked/LICENSES" \
  "$work" >"$work/linked.log" 2>&1 <<'PY'
import fnmatch, os, re, shlex, subprocess, sys
build, tsv, licenses, work = sys.argv[1:5]
srcs, cache = "/var/cache/dxshim/src", os.path.realpath("/var/cache/dxshim")
rows = []
for line in open(tsv):
    cols = line.rstrip("\n").split("\t")
    if line.startswith("#") or not line.strip() or cols[0] == "component":
        continue
    component, package, version, license, source, files, libraries = cols
    rows.append(dict(component=component, source=source, files=files.split(),
                     libraries=libraries.split()))
problems, used = [], {}
build_real = os.path.realpath(build)
if not os.path.exists(os.path.join(build, "build.ninja")):
    sys.exit(f"{build} is not a Ninja build (the windows-mingw preset's generator)")
for target in ("shim/dxshim.exe", "devices/dxshim-devices.exe"):
    name = os.path.basename(target)
    commands = subprocess.run(["ninja", "-C", build, "-t", "commands", target], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    # CMake's ": && <link> && :": the link is the part that writes -o TARGET.
    parts, part = [], []
    for token in shlex.split(commands[-1]):
        if token == "&&":
            parts.append(part); part = []
        else:
            part.append(token)
    parts.append(part)
    link = [p for p in parts if "-o" in p and p[p.index("-o") + 1] == target]
    if len(link) != 1:
        sys.exit(f"no link command for {target} in: {commands[-1]}")
    args, skip = [], False
    for token in link[0]:
        if skip:
            skip = False
        elif token == "-o":
            skip = True
        elif not token.startswith("-Wl,--out-implib,"):
            args.append(token)
    args += ["-o", os.path.join(work, "relinked-" + name), "-Wl,-t,-t"]
    run = subprocess.run(args, cwd=build, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"relinking {name} failed:\n{run.stderr[-3000:]}")
    inputs = set()
    for line in run.stdout.splitlines():
        member = re.match(r"^\((.+)\)[^()]+$", line)
        if member:
            inputs.add(member.group(1))          # an archive the linker took a member from
        elif line.endswith((".o", ".obj")):
            inputs.add(line)                     # an object linked whole
    for path in sorted(inputs):
        real = os.path.realpath(os.path.join(build, path))
        if real.startswith(build_real + "/"):
            continue                             # dxshim's own
        base = os.path.basename(real)
        if re.match(r"lib(ssl|crypto)\b", base) or "boringssl" in real.lower():
            problems.append(f"{name} links a TLS library: {real}")
        owners = [r for r in rows if any(fnmatch.fnmatchcase(base, p) for p in r["libraries"])]
        if not owners:
            problems.append(f"{base} ({real}), linked into {name}: no component in third-party.tsv")
        for r in owners:
            cached = real.startswith(cache + "/")
            if cached != (not r["source"].startswith("/")):
                problems.append(f"{base} linked into {name} from {real}, but third-party.tsv's "
                                f"{r['component']} comes from {r['source']}")
            used.setdefault(r["component"], set()).add(base)
for r in rows:
    if r["component"] not in used:
        continue
    base = r["source"] if r["source"].startswith("/") else os.path.join(srcs, r["source"])
    for f in r["files"]:
        shipped = os.path.join(licenses, r["component"], os.path.basename(f))
        if not os.path.isfile(shipped):
            problems.append(f"{r['component']}: LICENSES/{r['component']}/{os.path.basename(f)} "
                            "is missing from the zip")
        elif open(shipped, "rb").read() != open(os.path.join(base, f), "rb").read():
            problems.append(f"{r['component']}: {shipped} differs from {base}/{f}")
for component in sorted(used):
    libs = sorted(used[component])
    print(f"  {component}: {' '.join(libs) if len(libs) < 6 else f'{len(libs)} libraries'}")
if problems:
    print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
linked=$?
check "every third-party library linked into dxshim.exe or dxshim-devices.exe has its component's licenses in the zip" \
  $linked "$(cat "$work/linked.log")"
[ "$linked" = 0 ] && cat "$work/linked.log"
size=$(stat -c %s "$zip")
check "the zip is under 40 MiB ($size bytes)" $([ "$size" -lt $((40 << 20)) ]; echo $?)

# The installer image from this very zip (scripts/build-installer-image.sh; its format is
# tests/scripts/installer_image_test.sh's): skopeo reads it as windows/amd64, and its one layer
# holds the zip's files, byte for byte, under Files/dxshim-release/.
image_line=$("$src/scripts/build-installer-image.sh" "$zip" "$work/dist" 2>"$work/image.log" | tail -n 1)
check "build-installer-image.sh makes the image from the release zip" $? "$(cat "$work/image.log")"
echo "$image_line"
image="$work/dist/dxshim-installer-$version.oci.tar"
inspect=$(skopeo inspect "oci-archive:$image" 2>&1)
check "skopeo inspect: windows/amd64, one layer" \
  "$(python3 -c 'import json,sys; i=json.loads(sys.argv[1]); sys.exit(not (i["Os"] == "windows" and i["Architecture"] == "amd64" and len(i["Layers"]) == 1))' "$inspect"; echo $?)" "$inspect"
mkdir "$work/layout" "$work/layer"
tar -xf "$image" -C "$work/layout"
layer=$(python3 -c 'import json,sys; i=json.loads(sys.argv[1]); print(i["Layers"][0].split(":")[1])' "$inspect")
tar -xzf "$work/layout/blobs/sha256/$layer" -C "$work/layer" 2>/dev/null
check "the image's layer holds the zip's files under Files/dxshim-release/" \
  "$(diff -r "$work/unpacked" "$work/layer/Files/dxshim-release" >"$work/image-diff.log"; echo $?)" \
  "$(head -20 "$work/image-diff.log")"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
