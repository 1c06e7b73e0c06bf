#!/usr/bin/env python3
"""Checks that the arrows between dxshim's folders run one way: every `#include "..."` in a
library's folder names a header of that library or of a dxshim library it links (directly or
not). The rule is the build's own: LAYERS is written by CMake from each library's source folder
and its link list (tests/CMakeLists.txt), so declaring a dependency in CMake is the only way to
allow an include. A file belongs to the library whose folder is its nearest ancestor; generated
headers (`runtime/v1/api.pb.h`, `deviceplugin/...`) belong to cri-api. Also checked: the tests
mirror the code, and platform code lives only in *_windows.* / *_posix.* files or windows/,
posix/ folders (no `#ifdef _WIN32` elsewhere in shim/, devices/, config/, cri-api/, tests/, bench/).

usage: layering_test.py SOURCE_DIR LAYERS_FILE"""
import os
import re
import sys

source_dir, layers_file = sys.argv[1], sys.argv[2]
folder_of, links = {}, {}
for line in open(layers_file, encoding="utf-8"):
    target, folder, *deps = line.split()
    folder_of[target] = os.path.relpath(folder, source_dir)
    links[target] = deps


def closure(target, seen=None):
    seen = set() if seen is None else seen
    if target not in seen:
        seen.add(target)
        for dep in links.get(target, []):
            closure(dep, seen)
    return seen


folders = sorted(set(folder_of.values()), key=len, reverse=True)


def layer(path):
    """The library folder that holds `path` (relative to the source tree), or None."""
    for folder in folders:
        if path == folder or path.startswith(folder + "/"):
            return folder
    return None


allowed = {}  # library folder -> the library folders its files may include
for target, folder in folder_of.items():
    allowed.setdefault(folder, set()).update(folder_of[t] for t in closure(target))

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
problems, checked = [], 0
for folder in sorted(allowed):
    for root, _, files in os.walk(os.path.join(source_dir, folder)):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.relpath(os.path.join(root, name), source_dir)
            if layer(path) != folder:
                continue  # a nested library's file: checked as that library's
            text = open(os.path.join(source_dir, path), encoding="utf-8").read()
            for header in include.findall(text):
                checked += 1
                if "/" not in header:
                    continue  # a header generated next to the library (build_info.inc)
                if not os.path.exists(os.path.join(source_dir, header)):
                    header = "cri-api/" + header  # generated from cri-api's protos
                to = layer(header)
                if to is None:
                    problems.append(f"{path}: includes \"{header}\", which no library holds")
                elif to not in allowed[folder]:
                    others = ", ".join(sorted(allowed[folder] - {folder})) or "none"
                    problems.append(f"{path}: includes \"{header}\" ({to}), a library {folder} "
                                    f"does not link (it links: {others})")

# A source file outside every library folder (say, a new file put in shim/ itself) has no rule.
for top in sorted({folder.split("/")[0] for folder in allowed}):
    for root, _, files in os.walk(os.path.join(source_dir, top)):
        for name in sorted(files):
            path = os.path.relpath(os.path.join(root, name), source_dir)
            if name.endswith((".h", ".cpp")) and layer(path) is None:
                problems.append(f"{path}: in no library's folder (give it one in CMake)")

# The tests mirror the code. tests/<path> holds the tests of the folder <path>, or of the library
# folder that ends with it (tests/proxy: shim/proxy, tests/cri-api/runtime/v1: cri-api/runtime/v1), one unit's tests
# per file named after it (<unit>_test.cpp for <unit>.h, .cpp or .proto); every test that starts
# the whole program (a containerd through tests/support/containerd.h or gpu_node.h, the dxshim
# binary through dxshim_process.h or by its path, DXSHIM_BINARY or DXSHIM_WINDOWS_EXE) is
# tests/e2e/<what>_e2e_test.cpp and nothing else is; every
# test file opens with a comment saying what it proves.
OWN_RULES = {"support", "e2e", "fuzz", "golden", "demo", "proto", "images"}
STARTS_PROGRAM = re.compile(
    r'#include "tests/support/(containerd|gpu_node|dxshim_process)\.h"|\bDXSHIM_(BINARY|WINDOWS_EXE)\b')
tests_dir = os.path.join(source_dir, "tests")
mirrored = 0
for root, _, files in os.walk(tests_dir):
    sub = os.path.relpath(root, tests_dir)
    top = sub.split("/")[0]
    for name in sorted(files):
        path = os.path.relpath(os.path.join(root, name), source_dir)
        is_test = name.endswith(("_test.cpp", "_test.sh", "_test.py"))
        if not is_test:
            continue
        lines = open(os.path.join(root, name), encoding="utf-8").read().split("\n")
        first = lines[1] if lines[0].startswith("#!") else lines[0]
        opening = ("//",) if name.endswith(".cpp") else ("# ", '"""')
        if not first.startswith(opening):
            problems.append(f"{path}: no opening comment saying what it proves")
        if not name.endswith(".cpp"):
            continue
        starts = STARTS_PROGRAM.search("\n".join(lines)) is not None
        if top == "e2e":
            if not name.endswith("_e2e_test.cpp") or not starts:
                problems.append(f"{path}: tests/e2e holds <what>_e2e_test.cpp that start the program")
            continue
        if starts or name.endswith("_e2e_test.cpp"):
            problems.append(f"{path}: starts the program or is named _e2e: it belongs in tests/e2e")
        if top in OWN_RULES or sub == ".":
            if sub == ".":
                problems.append(f"{path}: in no folder (tests/<folder> mirrors the code)")
            continue
        code = [sub] if os.path.isdir(os.path.join(source_dir, sub)) else [
            f for f in folders if f.endswith("/" + sub)]
        unit = name[: -len("_test.cpp")]
        if not code:
            problems.append(f"{path}: tests/{sub} mirrors no library folder")
        elif not any(os.path.exists(os.path.join(source_dir, code[0], unit + ext))
                     for ext in (".h", ".cpp", ".proto")):
            problems.append(f"{path}: no unit {unit} in {code[0]} (name a test file after its unit)")
        else:
            mirrored += 1
print(f"{mirrored} unit test files mirror their unit")

# One rule for platform code (containerd's): it lives only in files named *_windows.* or
# *_posix.* (*_linux.*), or in a folder named windows/, posix/ or linux/, which CMake chooses
# between (if(WIN32) ... else() ... endif()). Nowhere else may the preprocessor test the platform:
# a portable file calls a portable header, and each platform's file implements it.
PLATFORM_IF = re.compile(
    r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b.*\b(_WIN32|_WIN64|__linux__|__unix__|_MSC_VER|"
    r"__MINGW\w*|__APPLE__|__CYGWIN__)\b.*$", re.M)
PLATFORM_FILE = re.compile(r"_(windows|posix|linux)\.\w+$")
PLATFORM_FOLDERS = {"windows", "posix", "linux"}
platform_checked = 0
for top in ("shim", "devices", "config", "cri-api", "tests", "bench"):
    for root, _, files in os.walk(os.path.join(source_dir, top)):
        for name in sorted(files):
            if not name.endswith((".h", ".hpp", ".cpp", ".cc", ".c", ".inc")):
                continue
            path = os.path.relpath(os.path.join(root, name), source_dir)
            if PLATFORM_FILE.search(name) or PLATFORM_FOLDERS & set(path.split("/")[:-1]):
                continue  # a platform's own file
            platform_checked += 1
            text = open(os.path.join(source_dir, path), encoding="utf-8").read()
            for m in PLATFORM_IF.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(
                    f"{path}:{line}: `{m.group(0).strip()}` tests the platform ({m.group(1)}) in a "
                    "portable file: put each branch in a *_windows.cpp / *_posix.cpp file (or a "
                    "windows/, posix/ folder) chosen in CMake, behind a portable header")
print(f"{platform_checked} portable files checked for platform #if")

for folder in sorted(allowed):
    print(f"{folder}: may include {', '.join(sorted(allowed[folder] - {folder})) or '-'}")
print(f"{checked} includes checked in {len(allowed)} library folders")
for p in problems:
    print("wrong way:", p)
sys.exit(1 if problems else 0)
