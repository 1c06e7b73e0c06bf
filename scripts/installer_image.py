#!/usr/bin/env python3
"""The installer DaemonSet's image, from the Windows release zip, with Python's standard library
only (no Windows machine, no registry). Used by scripts/build-installer-image.sh and
scripts/push-installer-image.sh.

  installer_image.py build ZIP OUT_TAR VERSION REQUIRED_NAME...
      OUT_TAR: an OCI image layout as a tar (skopeo's oci-archive: transport) with one
      windows/amd64 manifest and ONE layer: the zip's files under Files/dxshim-release/.
      Prints "OUT_TAR manifest sha256:... layer sha256:...".
  installer_image.py base-ref OCI_TAR
      Prints the base image the layer must be assembled on (its io.dxshim.base-image label).
  installer_image.py append OCI_TAR LAYOUT BASE_TAG OUT_TAG BASE_REF
      Puts OCI_TAR's layer on the image LAYOUT:BASE_TAG (an OCI layout skopeo copied the base
      into) and tags the result OUT_TAG in LAYOUT. Prints its manifest digest.

Why a child layer on a base: hcsshim imports a layer with no parent as a *base* layer
(internal/wclayer/importlayer.go, `if len(parentLayerPaths) == 0` -> baseLayerWriter), which
Windows' ProcessBaseLayer then processes; that needs the registry hives under
Files/Windows/System32/config. microsoft/windows-host-process-containers-base-image v1.0.0
(8383af35, New-HostProcessBaseImage.ps1) is such a base: one layer of only Files/ (the five hives,
License.txt), config os windows / architecture amd64 and no os.version (dropped in d3e3f82), so
containerd >= 1.7 pulls it on any Windows Server version (platforms/defaults_windows.go, #8101).
No registry is reachable where this is built, so the layer is assembled on that base at push time.
"""
import calendar
import copy
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import time
import zipfile

BASE_IMAGE = ("mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"
              "@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b")
RELEASE_DIR = "Files/dxshim-release"   # %CONTAINER_SANDBOX_MOUNT_POINT%\dxshim-release in the pod
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"   # containerd on Windows takes it
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"

# Windows child-layer tar, as BuildKit writes it (moby/buildkit util/winlayers/differ.go:
# prepareWinHeader, addSecurityDescriptor; go-containerregistry internal/windows/windows.go does the
# same with fewer records): the directories Hives and Files first, every path under Files/, and per
# entry the PAX records go-winio's backuptar reads on import (containerd
# pkg/archive/tar_opts_windows.go -> hcsshim ociwclayer.ImportLayerFromTar -> FileInfoFromHeader,
# WriteBackupStreamFromTarFile): MSWINDOWS.fileattr (16 directory, 32 file),
# LIBARCHIVE.creationtime and MSWINDOWS.rawsd, a binary security descriptor, base64.
# O:BAG:SYD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;;FA;;;BA)(A;OICIIO;GA;;;CO)(A;OICI;0x1200a9;;;BU)(A;CI;LC;;;BU)(A;CI;DC;;;BU)
SD_DIRECTORY = ("AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgCoAAcAAAAAAxgA/wEfAAEC"
                "AAAAAAAFIAAAACACAAAAAxQA/wEfAAEBAAAAAAAFEgAAAAAAGAD/AR8AAQIAAAAAAAUgAAAAIAIAAAALFAAAAAAQ"
                "AQEAAAAAAAMAAAAAAAMYAKkAEgABAgAAAAAABSAAAAAhAgAAAAIYAAQAAAABAgAAAAAABSAAAAAhAgAAAAIYAAIA"
                "AAABAgAAAAAABSAAAAAhAgAA")
# O:BAG:SYD:(A;;FA;;;BA)(A;;FA;;;SY)(A;;0x1200a9;;;BU): Administrators and SYSTEM full, Users read.
SD_FILE = ("AQAEgBQAAAAkAAAAAAAAADAAAAABAgAAAAAABSAAAAAgAgAAAQEAAAAAAAUSAAAAAgBMAAMAAAAAABgA/wEfAAECAAAA"
           "AAAFIAAAACACAAAAABQA/wEfAAEBAAAAAAAFEgAAAAAAGACpABIAAQIAAAAAAAUgAAAAIQIAAA==")


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def descriptor(media_type, data, **extra):
    return {"mediaType": media_type, "digest": sha256(data), "size": len(data), **extra}


def tar_entry(name, directory, mtime, security=True):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    info.mtime = mtime
    info.pax_headers = {"MSWINDOWS.fileattr": "16" if directory else "32",
                        "LIBARCHIVE.creationtime": str(mtime)}
    if security:
        info.pax_headers["MSWINDOWS.rawsd"] = SD_DIRECTORY if directory else SD_FILE
    return info


def windows_layer(zip_path, required):
    """The uncompressed layer tar and the newest time in the zip."""
    with zipfile.ZipFile(zip_path) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        missing = [n for n in required if n not in names]
        if missing:
            sys.exit(f"{zip_path}: {', '.join(missing)} missing at the top of the zip "
                     f"(the release must hold {', '.join(required)})")
        files, dirs = {}, set()
        for i in infos:
            name = i.filename.rstrip("/")
            parts = name.split("/")
            if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
                sys.exit(f"{zip_path}: refusing the entry name {i.filename!r}")
            # Zip times carry no zone; they are read as UTC, so the layer depends on the zip only.
            mtime = calendar.timegm(i.date_time + (0, 0, -1))
            dirs.update("/".join(parts[:k]) for k in range(1, len(parts)))
            if i.is_dir():
                dirs.add(name)
            elif name in files:
                sys.exit(f"{zip_path}: {name} is in the zip twice")
            else:
                files[name] = (mtime, z.read(i))
    newest = max(m for m, _ in files.values())
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as t:
        for top in ("Hives", "Files"):
            t.addfile(tar_entry(top, True, newest, security=False))
        t.addfile(tar_entry(RELEASE_DIR, True, newest))
        for name in sorted(dirs | set(files)):   # a directory sorts before what is in it
            path = f"{RELEASE_DIR}/{name}"
            if name in files:
                mtime, data = files[name]
                info = tar_entry(path, False, mtime)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            else:
                t.addfile(tar_entry(path, True, newest))
    return out.getvalue(), newest


def gzip_bytes(data):
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as g:
        g.write(data)
    return out.getvalue()


def write_oci_tar(path, blobs, index):
    """An OCI image layout (oci-layout, index.json, blobs/sha256/...) as a reproducible tar."""
    members = {"oci-layout": canonical({"imageLayoutVersion": "1.0.0"}), "index.json": canonical(index)}
    members.update({"blobs/sha256/" + sha256(b)[7:]: b for b in blobs})
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as t:
        for d in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            t.addfile(info)
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(members[name]), 0o644
            t.addfile(info, io.BytesIO(members[name]))
    os.replace(tmp, path)


def build(zip_path, out_tar, version, required):
    layer_tar, newest = windows_layer(zip_path, required)
    layer = gzip_bytes(layer_tar)
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(newest))
    labels = {
        "io.dxshim.base-image": BASE_IMAGE,
        "io.dxshim.assembly": "a child layer only: scripts/push-installer-image.sh puts it on "
                              "io.dxshim.base-image (a layer with no parent is imported as a base layer)",
        "org.opencontainers.image.title": "dxshim-installer",
        "org.opencontainers.image.version": version,
    }
    config = canonical({
        "created": created, "architecture": "amd64", "os": "windows",
        "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [sha256(layer_tar)]},
        "history": [{"created": created,
                     "created_by": f"scripts/build-installer-image.sh {os.path.basename(zip_path)}",
                     "comment": "the release zip's files, in the pod at "
                                "%CONTAINER_SANDBOX_MOUNT_POINT%\\dxshim-release"}],
    })
    manifest = canonical({"schemaVersion": 2, "mediaType": MANIFEST_TYPE,
                          "config": descriptor(CONFIG_TYPE, config),
                          "layers": [descriptor(LAYER_TYPE, layer)], "annotations": labels})
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [descriptor(MANIFEST_TYPE, manifest,
                                      platform={"architecture": "amd64", "os": "windows"},
                                      annotations={REF_NAME: version})]}
    write_oci_tar(out_tar, [layer, config, manifest], index)
    print(f"{out_tar} manifest {sha256(manifest)} layer {sha256(layer)}")


def read_image(oci_tar):
    """(manifest, config, layer blob) of the single image in an OCI layout tar."""
    with tarfile.open(oci_tar) as t:
        blob = lambda d: t.extractfile("blobs/sha256/" + d.split(":", 1)[1]).read()
        index = json.loads(t.extractfile("index.json").read())
        if len(index["manifests"]) != 1:
            sys.exit(f"{oci_tar}: expected one manifest, found {len(index['manifests'])}")
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        if len(manifest["layers"]) != 1:
            sys.exit(f"{oci_tar}: expected one layer (scripts/build-installer-image.sh's output)")
        return manifest, json.loads(blob(manifest["config"]["digest"])), blob(manifest["layers"][0]["digest"])


def append(oci_tar, layout, base_tag, out_tag, base_ref):
    manifest, config, layer = read_image(oci_tar)
    blobs = os.path.join(layout, "blobs", "sha256")
    read_blob = lambda d: open(os.path.join(blobs, d.split(":", 1)[1]), "rb").read()
    index_path = os.path.join(layout, "index.json")
    index = json.load(open(index_path))
    found = [m for m in index["manifests"] if m.get("annotations", {}).get(REF_NAME) == base_tag]
    if len(found) != 1:
        sys.exit(f"{layout}: no single image tagged {base_tag}")
    base = json.loads(read_blob(found[0]["digest"]))
    base_config = json.loads(read_blob(base["config"]["digest"]))
    if (base_config.get("os"), base_config.get("architecture")) != ("windows", "amd64"):
        sys.exit(f"{base_ref} is {base_config.get('os')}/{base_config.get('architecture')}, "
                 "not a windows/amd64 image")
    if not base.get("layers"):
        sys.exit(f"{base_ref} has no layer: ours would be imported as a base layer")
    new = copy.deepcopy(base_config)
    new["os"], new["architecture"], new["created"] = "windows", "amd64", config["created"]
    new["rootfs"]["diff_ids"] = base_config["rootfs"]["diff_ids"] + config["rootfs"]["diff_ids"]
    new["history"] = base_config.get("history", []) + config["history"]
    labels = {**config["config"]["Labels"], "io.dxshim.base-image": base_ref}
    labels.pop("io.dxshim.assembly")
    new.setdefault("config", {})
    new["config"]["Labels"] = {**(new["config"].get("Labels") or {}), **labels}
    new_config = canonical(new)
    new_manifest = canonical({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE, "config": descriptor(CONFIG_TYPE, new_config),
        "layers": base["layers"] + manifest["layers"],
        "annotations": {**labels, "org.opencontainers.image.base.name": base_ref}})
    for data in (layer, new_config, new_manifest):
        with open(os.path.join(blobs, sha256(data)[7:]), "wb") as f:
            f.write(data)
    platform = {"architecture": "amd64", "os": "windows"}
    if "os.version" in new:
        platform["os.version"] = new["os.version"]
    index["manifests"] = [m for m in index["manifests"]
                          if m.get("annotations", {}).get(REF_NAME) != out_tag]
    index["manifests"].append(descriptor(MANIFEST_TYPE, new_manifest, platform=platform,
                                         annotations={REF_NAME: out_tag}))
    with open(index_path, "wb") as f:
        f.write(canonical(index))
    print(sha256(new_manifest))


if __name__ == "__main__":
    command, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command == "build" and len(args) >= 3:
        build(args[0], args[1], args[2], args[3:])
    elif command == "base-ref" and len(args) == 1:
        print(read_image(args[0])[0]["annotations"]["io.dxshim.base-image"])
    elif command == "append" and len(args) == 5:
        append(*args)
    else:
        sys.exit(__doc__)
