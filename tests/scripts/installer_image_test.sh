#!/usr/bin/env bash
# scripts/build-installer-image.sh and scripts/push-installer-image.sh, checked with Debian's skopeo
# and umoci: the release zip becomes a windows/amd64 OCI image of ONE gzip layer, a Windows child
# layer (Hives/ and Files/ first, the zip's files, its paths kept, under Files/dxshim-release/, with
# go-winio's PAX records), reproducibly; a zip missing a required file is refused; and the push
# script puts the layer on a HostProcess base image (base layer first, diff_ids in order).
# The release zip is made here with package-windows.sh's layout (the real one needs the Windows
# build): stand-in executables, the repository's install scripts, configuration and licenses.
# MCR cannot be reached here, so the base is a stand-in of the shape
# microsoft/windows-host-process-containers-base-image v1.0.0's New-HostProcessBaseImage.ps1
# writes: a docker-archive (its output) of one layer holding only Files/ (empty
# Files/Windows/System32/config/{DEFAULT,SAM,SECURITY,SOFTWARE,SYSTEM}, Files/License.txt), made
# with `tar -cf layer.tar Files` as the script does on Linux, config os windows, architecture amd64,
# no os.version.
# usage: installer_image_test.sh SOURCE_DIR VERSION
# shellcheck disable=SC2046  # check takes $(...; echo $?): one word, a status
set -uo pipefail
export LC_ALL=C
src=${1:?usage: installer_image_test.sh SOURCE_DIR VERSION}
version=${2:?usage: installer_image_test.sh SOURCE_DIR VERSION}
work=$(mktemp -d /tmp/dxshim-installer-image-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME CONDITION-RESULT [DETAIL]
  if [ "$2" = 0 ]; then echo "ok: $1"; else failures=$((failures + 1)); echo "FAILED: $1"; [ -n "${3:-}" ] && printf '%s\n' "$3"; fi
}
for tool in skopeo umoci python3 tar; do
  command -v "$tool" >/dev/null || { echo "FAILED: $tool is not installed (scripts/install-deps.sh)"; exit 1; }
done
json() {  # json FILE EXPRESSION-OF-d
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
unzip_to() { python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }
mkzip() {  # mkzip STAGE ZIP: package-windows.sh's order, the licenses after
  python3 - "$1" "$2" <<'PY'
import pathlib, sys, zipfile
stage, out = pathlib.Path(sys.argv[1]), sys.argv[2]
top = ["dxshim.exe", "dxshim-devices.exe", "install.ps1", "installer-pod.ps1", "dxshim.yaml",
       "README.txt", "LICENSE", "NOTICE"]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for f in top:
        if (stage / f).exists():
            z.write(stage / f, f)
    for path in sorted((stage / "LICENSES").rglob("*")):
        if path.is_file():
            z.write(path, path.relative_to(stage).as_posix())
PY
}

# --- the release zip -------------------------------------------------------------------------
stage=$work/stage
mkdir -p "$stage/LICENSES/grpc" "$stage/LICENSES/a-third-party-component-with-a-rather-long-name-to-need-pax-paths"
head -c 3000000 /dev/urandom >"$stage/dxshim.exe"
head -c 200000 /dev/urandom >"$stage/dxshim-devices.exe"
cp "$src/deploy/windows/install.ps1" "$stage/"
if [ -f "$src/deploy/windows/installer-pod.ps1" ]; then
  cp "$src/deploy/windows/installer-pod.ps1" "$stage/"
else
  echo '# stand-in' >"$stage/installer-pod.ps1"
fi
cp "$src/deploy/examples/dxshim-windows.yaml" "$stage/dxshim.yaml"
sed "s/@VERSION@/$version/g" "$src/deploy/windows/README.txt.in" >"$stage/README.txt"
cp "$src/LICENSE" "$src/NOTICE" "$stage/"
echo "grpc license" >"$stage/LICENSES/grpc/LICENSE"
echo "long" >"$stage/LICENSES/a-third-party-component-with-a-rather-long-name-to-need-pax-paths/COPYING.txt"
mkzip "$stage" "$work/release.zip"
mkdir "$work/zip"
unzip_to "$work/release.zip" "$work/zip"

# --- build ----------------------------------------------------------------------------------
line=$("$src/scripts/build-installer-image.sh" "$work/release.zip" "$work/out1" 2>"$work/build.log")
check "build-installer-image.sh succeeds" $? "$(cat "$work/build.log")"
echo "$line"
read -r archive _ manifest_digest _ layer_digest <<<"$line"
check "it writes OUT_DIR/dxshim-installer-$version.oci.tar and names it" \
  $([ "$archive" = "$work/out1/dxshim-installer-$version.oci.tar" ] && [ -f "$archive" ]; echo $?) "$line"

skopeo inspect --raw "oci-archive:$archive" >"$work/manifest.json" 2>"$work/inspect.log"
check "skopeo inspect --raw reads the oci-archive" $? "$(cat "$work/inspect.log")"
skopeo inspect --config "oci-archive:$archive" >"$work/config.json" 2>"$work/inspect.log"
check "skopeo inspect --config reads it" $? "$(cat "$work/inspect.log")"
check "the printed manifest digest is the manifest's" \
  $([ "sha256:$(sha256sum <"$work/manifest.json" | cut -d' ' -f1)" = "$manifest_digest" ]; echo $?)
check "config: os windows, architecture amd64, no os.version" \
  $([ "$(json "$work/config.json" 'd["os"], d["architecture"], "os.version" in d')" = "('windows', 'amd64', False)" ]; echo $?) \
  "$(cat "$work/config.json")"
check "one layer, application/vnd.oci.image.layer.v1.tar+gzip, the printed digest" \
  $([ "$(json "$work/manifest.json" '[(l["mediaType"], l["digest"]) for l in d["layers"]]')" = \
      "[('application/vnd.oci.image.layer.v1.tar+gzip', '$layer_digest')]" ]; echo $?) \
  "$(cat "$work/manifest.json")"
base_ref="mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b"
check "manifest annotation and config label io.dxshim.base-image name the base by digest" \
  $([ "$(json "$work/manifest.json" 'd["annotations"]["io.dxshim.base-image"]')" = "$base_ref" ] &&
    [ "$(json "$work/config.json" 'd["config"]["Labels"]["io.dxshim.base-image"]')" = "$base_ref" ]; echo $?)
check "a history entry" $([ "$(json "$work/config.json" 'len(d["history"])')" = 1 ]; echo $?)

mkdir "$work/oci1"
tar -xf "$archive" -C "$work/oci1"
blob=$work/oci1/blobs/sha256/${layer_digest#sha256:}
check "the layer blob's sha256 is its digest" \
  $([ "sha256:$(sha256sum <"$blob" | cut -d' ' -f1)" = "$layer_digest" ]; echo $?)
gunzip -c <"$blob" >"$work/layer.tar"
diff_id=sha256:$(sha256sum <"$work/layer.tar" | cut -d' ' -f1)
check "rootfs.diff_ids = [sha256 of the gunzipped layer]" \
  $([ "$(json "$work/config.json" 'd["rootfs"]["diff_ids"]')" = "['$diff_id']" ]; echo $?) \
  "$diff_id vs $(json "$work/config.json" 'd["rootfs"]')"

tar -tf "$work/layer.tar" --warning=no-unknown-keyword >"$work/names"
check "the layer's first entries are the directories Hives/ and Files/" \
  $([ "$(head -2 "$work/names" | tr '\n' ' ')" = "Hives/ Files/ " ]; echo $?) "$(head -5 "$work/names")"
check "every other entry is under Files/dxshim-release/" \
  $(tail -n +3 "$work/names" | grep -qv '^Files/dxshim-release/'; [ $? = 1 ]; echo $?) "$(cat "$work/names")"
mkdir "$work/layer"
tar -xf "$work/layer.tar" -C "$work/layer" --warning=no-unknown-keyword
check "the files under Files/dxshim-release/ are the zip's, bytes and paths (LICENSES/ too)" \
  $(diff -r "$work/zip" "$work/layer/Files/dxshim-release" >"$work/diff" 2>&1; echo $?) "$(cat "$work/diff")"
# The PAX records go-winio's backuptar reads, owner 0, and the zip's times.
python3 - "$work/layer.tar" "$work/release.zip" >"$work/pax.log" 2>&1 <<'PY'
import calendar, sys, tarfile, zipfile
times = {i.filename: calendar.timegm(i.date_time + (0, 0, -1)) for i in zipfile.ZipFile(sys.argv[2]).infolist()}
bad = []
for m in tarfile.open(sys.argv[1]):
    want = {"MSWINDOWS.fileattr": "16" if m.isdir() else "32"}
    if m.name not in ("Hives", "Files"):
        want["MSWINDOWS.rawsd"] = m.pax_headers.get("MSWINDOWS.rawsd", "missing")
    if any(m.pax_headers.get(k) != v for k, v in want.items()) or "LIBARCHIVE.creationtime" not in m.pax_headers:
        bad.append(f"{m.name}: PAX records {m.pax_headers}")
    if (m.uid, m.gid) != (0, 0):
        bad.append(f"{m.name}: owner {m.uid}:{m.gid}")
    rel = m.name[len("Files/dxshim-release/"):]
    if m.isfile() and m.mtime != times.get(rel):
        bad.append(f"{m.name}: mtime {m.mtime}, the zip's {times.get(rel)}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
check "every entry has MSWINDOWS.fileattr, LIBARCHIVE.creationtime, MSWINDOWS.rawsd (not Hives, Files), uid/gid 0, the zip's times" \
  $? "$(cat "$work/pax.log")"

# --- reproducible ---------------------------------------------------------------------------
line2=$("$src/scripts/build-installer-image.sh" "$work/release.zip" "$work/out2" 2>&1)
read -r archive2 _ manifest_digest2 _ <<<"$line2"
check "a second build gives the same manifest digest ($manifest_digest)" \
  $([ "$manifest_digest2" = "$manifest_digest" ]; echo $?) "$line2"
check "and the same archive, byte for byte" $(cmp -s "$archive" "$archive2"; echo $?)

# --- a zip missing a required file ------------------------------------------------------------
rm "$stage/install.ps1"
mkzip "$stage" "$work/incomplete.zip"
"$src/scripts/build-installer-image.sh" "$work/incomplete.zip" "$work/out3" >"$work/out3.log" 2>&1
status=$?
check "a zip without install.ps1 is refused, naming it" \
  $([ "$status" != 0 ] && grep -q 'install.ps1 missing' "$work/out3.log" &&
    ! grep -q 'dxshim.exe,.*missing' "$work/out3.log" && [ ! -e "$work/out3/dxshim-installer-$version.oci.tar" ]; echo $?) \
  "exit $status: $(cat "$work/out3.log")"

# --- push onto a stand-in base -----------------------------------------------------------------
mkdir -p "$work/base/layer/Files/Windows/System32/config" "$work/base/image"
for f in DEFAULT SAM SECURITY SOFTWARE SYSTEM; do : >"$work/base/layer/Files/Windows/System32/config/$f"; done
echo "CC0 stand-in" >"$work/base/layer/Files/License.txt"
(cd "$work/base/layer" && tar -cf layer.tar Files)
python3 - "$work/base" <<'PY'
import hashlib, json, os, shutil, sys
base = sys.argv[1]
layer = open(f"{base}/layer/layer.tar", "rb").read()
h = hashlib.sha256(layer).hexdigest()
os.makedirs(f"{base}/image/{h}")
shutil.copy(f"{base}/layer/layer.tar", f"{base}/image/{h}/layer.tar")
config = json.dumps({"architecture": "amd64", "os": "windows",
                     "config": {"Cmd": ["c:\\windows\\system32\\cmd.exe"]},
                     "created": "2022-10-13T00:00:00Z", "history": [{"created": "2022-10-13T00:00:00Z"}],
                     "rootfs": {"type": "layers", "diff_ids": [f"sha256:{h}"]}}).encode()
c = hashlib.sha256(config).hexdigest()
open(f"{base}/image/{c}.json", "wb").write(config)
json.dump([{"Config": f"{c}.json", "RepoTags": ["hpc-base:v1.0.0"], "Layers": [f"{h}/layer.tar"]}],
          open(f"{base}/image/manifest.json", "w"))
PY
tar -cf "$work/base.tar" -C "$work/base/image" .
base_layer=sha256:$(sha256sum <"$work/base/layer/layer.tar" | cut -d' ' -f1)
push=$(DXSHIM_HPC_BASE="docker-archive:$work/base.tar" \
  "$src/scripts/push-installer-image.sh" "$archive" "oci-archive:$work/out.tar" 2>"$work/push.log")
check "push-installer-image.sh assembles and copies to oci-archive:" $? "$(cat "$work/push.log")"
echo "$push"
skopeo inspect --raw "oci-archive:$work/out.tar" >"$work/assembled.json" &&
  skopeo inspect --config "oci-archive:$work/out.tar" >"$work/assembled-config.json"
check "skopeo inspect reads the assembled image" $?
check "it prints the destination and the pushed manifest's digest" \
  $([ "$push" = "oci-archive:$work/out.tar sha256:$(sha256sum <"$work/assembled.json" | cut -d' ' -f1)" ]; echo $?) "$push"
check "diff_ids: the base's, then ours" \
  $([ "$(json "$work/assembled-config.json" 'd["rootfs"]["diff_ids"]')" = "['$base_layer', '$diff_id']" ]; echo $?) \
  "$(cat "$work/assembled-config.json")"
check "windows/amd64, no os.version, both history entries, the base's command, our labels naming the base used" \
  $([ "$(json "$work/assembled-config.json" 'd["os"], d["architecture"], "os.version" in d, len(d["history"]), d["config"]["Cmd"], d["config"]["Labels"]["io.dxshim.base-image"], d["config"]["Labels"]["org.opencontainers.image.version"]')" = \
      "('windows', 'amd64', False, 2, ['c:\\\\windows\\\\system32\\\\cmd.exe'], 'docker-archive:$work/base.tar', '$version')" ]; echo $?) \
  "$(cat "$work/assembled-config.json")"
# Each layer's own files, listed from its blob.
skopeo copy --quiet "oci-archive:$work/out.tar" "oci:$work/assembled:dxshim" 2>"$work/copy.log"
check "skopeo copies it to an OCI layout" $? "$(cat "$work/copy.log")"
layer_file() { echo "$work/assembled/blobs/sha256/$(json "$work/assembled.json" "d['layers'][$1]['digest'][7:]")"; }
# skopeo gzips the docker-archive's plain layer.tar on its way into the OCI layout: the base layer
# is known by its content (its diff_id), ours by its digest.
check "two layers: the base's first (its content the base's layer.tar), then ours (same digest)" \
  $([ "$(json "$work/assembled.json" 'len(d["layers"]), d["layers"][1]["digest"]')" = "(2, '$layer_digest')" ] &&
    [ "sha256:$(gunzip -c <"$(layer_file 0)" | sha256sum | cut -d' ' -f1)" = "$base_layer" ]; echo $?) \
  "$(cat "$work/assembled.json")"
tar -tzf "$(layer_file 0)" >"$work/names0" 2>&1
tar -tzf "$(layer_file 1)" --warning=no-unknown-keyword >"$work/names1" 2>&1
check "the first layer is the base's Files/ only, the second holds Files/dxshim-release/dxshim.exe" \
  $(grep -qx 'Files/Windows/System32/config/SYSTEM' "$work/names0" && ! grep -qv '^Files/' "$work/names0" &&
    ! grep -q 'dxshim' "$work/names0" && grep -qx 'Files/dxshim-release/dxshim.exe' "$work/names1"; echo $?) \
  "$(cat "$work/names0" "$work/names1")"
umoci raw unpack --image "$work/assembled:dxshim" "$work/rootfs" >"$work/umoci.log" 2>&1
check "umoci raw unpack applies both layers" $? "$(cat "$work/umoci.log")"
check "the unpacked image has the base's hives and License.txt and the zip's files under Files/dxshim-release" \
  $([ -f "$work/rootfs/Files/Windows/System32/config/SAM" ] && [ -f "$work/rootfs/Files/License.txt" ] &&
    diff -r "$work/zip" "$work/rootfs/Files/dxshim-release" >/dev/null; echo $?)

# A base that is not a Windows image is refused.
sed -i 's/"os": "windows"/"os": "linux"/' "$work/base/image/"*.json
python3 - "$work/base/image" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(f"{d}/manifest.json"))
data = open(f"{d}/{m[0]['Config']}", "rb").read()
os.remove(f"{d}/{m[0]['Config']}")
m[0]["Config"] = hashlib.sha256(data).hexdigest() + ".json"
open(f"{d}/{m[0]['Config']}", "wb").write(data)
json.dump(m, open(f"{d}/manifest.json", "w"))
PY
tar -cf "$work/linux-base.tar" -C "$work/base/image" .
DXSHIM_HPC_BASE="docker-archive:$work/linux-base.tar" \
  "$src/scripts/push-installer-image.sh" "$archive" "oci-archive:$work/bad.tar" >"$work/bad.log" 2>&1
status=$?
check "a base that is not windows/amd64 is refused" \
  $([ "$status" != 0 ] && grep -q 'not a windows/amd64 image' "$work/bad.log" && [ ! -e "$work/bad.tar" ]; echo $?) \
  "exit $status: $(cat "$work/bad.log")"

echo "$failures failed"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))
