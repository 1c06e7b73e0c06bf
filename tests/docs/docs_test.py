#!/usr/bin/env python3
"""Checks that the docs describe the tree they ship in. The documents read are README.md,
CONTRIBUTING.md, SECURITY.md, docs/*.md, tests/README.md, bench/README.md and every README.md
under deploy/ (each one that exists). Four checks, each printing what it looked at:

1. Paths. Every repository path a document names exists:
   - a markdown link's target (before any #anchor; URLs skipped), relative to the document's
     folder as GitHub resolves it (a leading / is the repository root);
   - a word in `backticks` or in a fenced code block that contains a "/" and whose first part is a
     file or folder of the repository root or of the document's folder (so `dxshim.io/gpu` or
     `runtime.v1` are not paths, `scripts/nope.sh` is), relative to either of those;
   - a bare file name in `backticks` ending in .md .py .sh .cpp .h .proto .cmake, or
     CMakeLists.txt (not a suffix such as `.h` or `_test.py`): in the document's folder, at the
     root, or anywhere in the tree (a prose mention of `layering_test.py` names the one file of
     that name). Bare .ps1, .yaml and .json names are often a node's files (StartKubelet.ps1,
     config.yaml), so only paths with a "/" are checked for those.
   Not paths: URLs, absolute paths, Windows paths (anything with a backslash or a drive), words
   with placeholders or globs (< > * { } $ % | ... …), generated protobuf files (*.pb.*) and build
   outputs (build*/..., dist/...). `--flag=PATH` is read as PATH, `PATH:LINE` as PATH.
2. Anchors and section references.
   - A link to #anchor or to FILE.md#anchor names a heading of that file, by GitHub's rule
     (lower case; letters, digits, spaces, - and _ kept; spaces become -; repeats get -1, -2 ...),
     or an explicit <a name=...>/id=... anchor.
   - A section reference in prose, see "Heading" / see 'Heading' / see “Heading” (any case of
     "see", optionally "see also"), or FILE, "Heading" right after a file name, names a heading
     of the file named right before it (a .md path or link, or README for the top README.md, ending
     at most 60 characters before the quote) or else of the document itself. It matches a heading
     or a bold run-in title that opens a paragraph (**Title.**) when equal to it, or to its part
     before a colon, ignoring case, backticks and emphasis. The example pods' comments are read
     for the FILE, "Heading" form too ((README, "The scheduler")).
3. Commands. The README's command list equals what `dxshim help` prints. `dxshim help` lists one
   command per indented line after its "commands:" line. In README.md the list is read under
   every heading whose text contains the word "commands" (down to the next heading of the same or
   a higher level): each table row or list item whose first `code span` is `dxshim NAME` (options
   may follow, as in `dxshim rewrite CONTAINER POD`) documents NAME. The two sets must be equal,
   `help` included.
4. Example pods. Every deploy/examples/pods/*.yaml is one YAML document that is a Kubernetes Pod:
   apiVersion v1, kind Pod, metadata.name, a non-empty spec.containers, each container (init
   containers too) with a name and an image carrying an explicit tag (not latest) or digest. An
   image comes from mcr.microsoft.com (runs as written) or is registry.example.com/... (built from
   a Dockerfile: the pod's opening comment names deploy/examples/pods/<folder>/Dockerfile, which
   exists). deploy/examples/pods/README.md has a table row for each pod whose first cell names
   its file; the row's last cell starts with "Public image, not yet run on a Windows node" for a
   public image (none has run on a Windows node yet) and with
   "Build" and links that same Dockerfile for a built one.

usage: docs_test.py SOURCE_DIR DXSHIM_BINARY"""
import bisect
import glob
import os
import re
import subprocess
import sys

import yaml

source_dir, dxshim = os.path.abspath(sys.argv[1]), sys.argv[2]
problems = []

# ---------------------------------------------------------------------------------------------
# The documents and the tree.

DOCS = ["README.md", "CONTRIBUTING.md", "SECURITY.md", "tests/README.md", "bench/README.md"]
DOCS += sorted(os.path.relpath(p, source_dir) for p in glob.glob(f"{source_dir}/docs/*.md"))
DOCS += sorted(os.path.relpath(p, source_dir)
               for p in glob.glob(f"{source_dir}/deploy/**/README.md", recursive=True))
DOCS = [d for d in DOCS if os.path.isfile(os.path.join(source_dir, d))]

SKIP_DIRS = {".git", "dist"}
basenames = set()
for root, dirs, files in os.walk(source_dir):
    rel = os.path.relpath(root, source_dir)
    dirs[:] = [d for d in dirs
               if d not in SKIP_DIRS and not (rel == "." and d.startswith("build"))]
    basenames.update(files)


def exists(rel_path, folder):
    """Whether rel_path exists relative to the root or to folder (itself relative to the root)."""
    for base in ("", folder):
        if os.path.exists(os.path.join(source_dir, base, rel_path)):
            return True
    return False


def without_code(text):
    return re.sub(r"(`+)(.+?)\1", "", text)


class Doc:
    """A markdown file read once: its prose paragraphs, code spans, code blocks and headings."""

    def __init__(self, rel):
        self.rel = rel
        self.folder = os.path.dirname(rel)
        self.lines = open(os.path.join(source_dir, rel), encoding="utf-8").read().split("\n")
        self.headings = []  # (level, text, line number)
        self.paragraphs = []  # (first line number, each line's offset, lines joined with spaces)
        self.code_lines = []  # (line number, text) inside fenced blocks
        fence, para, start, prev = None, [], 0, ""
        for n, line in enumerate(self.lines, 1):
            stripped = line.strip()
            if fence:
                if stripped.startswith(fence):
                    fence = None
                else:
                    self.code_lines.append((n, line))
                continue
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if m:
                fence = m.group(1)
                self._end(para, start)
                para = []
                continue
            m = re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                self._end(para, start)
                para = []
                self.headings.append((len(m.group(1)), m.group(2), n))
                continue
            if para and re.match(r"^\s{0,3}(=+|-+)\s*$", line) and len(para) == 1 \
                    and "|" not in prev:
                self.headings.append((1 if "=" in line else 2, para[0].strip(), n - 1))
                para = []
                continue
            if not stripped:
                self._end(para, start)
                para = []
            else:
                if not para:
                    start = n
                para.append(stripped)
            prev = line
        self._end(para, start)
        self.anchors = set()
        seen = {}
        for _, text, _ in self.headings:
            slug = github_slug(text)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            self.anchors.add(slug if count == 0 else f"{slug}-{count}")
        for line in self.lines:
            self.anchors.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
        self.titles = [normal(t) for _, t, _ in self.headings]
        for _, _, text in self.paragraphs:  # bold run-in titles: **Title.** opening a paragraph
            m = re.match(r"^\*\*(.+?)\*\*", text)
            if m:
                self.titles.append(normal(m.group(1)))

    def _end(self, para, start):
        if para:
            offsets = [0]
            for line in para[:-1]:
                offsets.append(offsets[-1] + len(line) + 1)
            self.paragraphs.append((start, offsets, " ".join(para)))

    @staticmethod
    def line_of(start, offsets, at):
        """The line number of character `at` of a paragraph's text (lines joined with spaces)."""
        return start + bisect.bisect_right(offsets, at) - 1


def github_slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def normal(title):
    title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)
    title = title.replace("`", "").replace("*", "")
    return " ".join(title.split()).strip(" .:,;").casefold()


def names_title(ref, titles):
    ref = normal(ref)
    return any(t == ref or t.startswith(ref + ":") for t in titles)


docs = {rel: Doc(rel) for rel in DOCS}


def doc(rel):
    if rel not in docs and os.path.isfile(os.path.join(source_dir, rel)):
        docs[rel] = Doc(rel)
    return docs.get(rel)


# ---------------------------------------------------------------------------------------------
# 1. Paths.

KNOWN_EXT = (".md", ".py", ".sh", ".cpp", ".h", ".proto", ".cmake")
NOT_A_PATH = re.compile(r"[<>*{}$%|\\]|\.\.\.|…|://|^[A-Za-z]:|^[/~-]")
LINK = re.compile(r"!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")


def path_word(word):
    """The repository path a word of code names, or None."""
    word = re.sub(r"'s$", "", word.strip("([\"',;").rstrip(".:)]\"',;"))
    if "=" in word:
        word = word.rsplit("=", 1)[1]
    word = re.sub(r":\d+(:\d+)?$", "", word)
    if not word or NOT_A_PATH.search(word) or ":" in word or ".pb." in word:
        return None
    first = word.split("/", 1)[0]
    if first.startswith("build") or first in ("dist", "out"):
        return None
    return word


def check_paths(d):
    named, missing = 0, []

    def code_word(word, n, bare_ok):
        nonlocal named
        path = path_word(word)
        if path is None:
            return
        if "/" in path:
            first = path.split("/", 1)[0]
            if first not in (".", "..") and not exists(first, d.folder):
                return  # not a repository path: dxshim.io/gpu, runtime.v1/..., text/plain
            named += 1
            if not exists(path, d.folder):
                missing.append(f"{d.rel}:{n}: `{path}` does not exist")
        elif bare_ok and not path.startswith((".", "_")) and (path.endswith(KNOWN_EXT) or
                                                              path == "CMakeLists.txt"):
            named += 1
            if not exists(path, d.folder) and path not in basenames:
                missing.append(f"{d.rel}:{n}: `{path}` is no file of the repository")

    in_fence = {n for n, _ in d.code_lines}
    for n, line in enumerate(d.lines, 1):
        if n in in_fence:
            continue
        for code in re.findall(r"(`+)(.+?)\1", line):
            for word in code[1].split():
                code_word(word, n, bare_ok=True)
        for target in LINK.findall(without_code(line)) + REF_LINK.findall(line):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            named += 1
            full = (os.path.join(source_dir, path.lstrip("/")) if path.startswith("/")
                    else os.path.join(source_dir, d.folder, path))
            if not os.path.exists(full):
                missing.append(f"{d.rel}:{n}: link to {target}: {path} does not exist "
                               f"(links are relative to {d.folder or 'the repository root'})")
    for n, line in d.code_lines:
        for word in line.split():
            code_word(word, n, bare_ok=False)
    return named, missing


# ---------------------------------------------------------------------------------------------
# 2. Anchors and section references.

QUOTED = r"(?:\"([^\"]{2,80})\"|“([^”]{2,80})”|'([^']{2,80})')"
SEE = re.compile(r"\b[Ss]ee\s+(?:also\s+)?(?:the\s+)?" + QUOTED)
FILE_THEN_TITLE = re.compile(r"((?:\[[^\]]*\]\()?`?[\w./-]*\.md`?\)?|\bREADME\b),\s+"
                             r"(?:\"([^\"]{2,80})\"|“([^”]{2,80})”)")
FILE_NAMED = re.compile(
    r"\(([^)\s#]+\.md)(?:#[^)]*)?\)|`([^`\s]+\.md)`|\b([\w./-]+\.md)\b|\b(README)\b")


def named_file(word, folder):
    """The document a file word names: README is the top README.md."""
    if word == "README":
        return "README.md"
    for base in (folder, ""):
        rel = os.path.normpath(os.path.join(base, word))
        if os.path.isfile(os.path.join(source_dir, rel)):
            return rel
    return None


def check_reference(where, text, at, ref, own, folder, explicit_file=None):
    """A section reference `ref` found at `at` in `text`: names a heading of its file."""
    target = None
    if explicit_file:
        target = named_file(explicit_file, folder)
    else:
        before = text[max(0, at - 60):at]
        last = None
        for m in FILE_NAMED.finditer(before):
            last = next(g for g in m.groups() if g)
        if last:
            target = named_file(last, folder)
    target = target or own
    target_doc = doc(target) if target else None
    if target_doc is None:
        return f"{where}: see \"{ref}\": {target or 'its file'} is no document"
    if not names_title(ref, target_doc.titles):
        return f"{where}: see \"{ref}\": no such heading in {target}"
    return None


def check_sections(d):
    anchors, refs, wrong = 0, 0, []
    in_fence = {n for n, _ in d.code_lines}
    for n, line in enumerate(d.lines, 1):
        if n in in_fence:
            continue
        for target in LINK.findall(without_code(line)) + REF_LINK.findall(line):
            if "#" not in target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            path, anchor = target.split("#", 1)
            anchors += 1
            rel = d.rel if not path else os.path.normpath(os.path.join(d.folder, path))
            other = doc(rel) if rel.endswith(".md") else None
            if other is None:
                if rel.endswith(".md") or not path:
                    wrong.append(f"{d.rel}:{n}: link to {target}: no document {rel}")
                continue
            if anchor not in other.anchors:
                wrong.append(f"{d.rel}:{n}: link to {target}: {rel} has no heading with anchor "
                             f"#{anchor}")
    for start, offsets, text in d.paragraphs:
        prose = re.sub(r"(`+)(.+?)\1", lambda m: m.group(0).replace('"', "\u0000"), text)
        for m in SEE.finditer(prose):
            ref = next(g for g in m.groups() if g).replace("\u0000", '"')
            refs += 1
            where = f"{d.rel}:{Doc.line_of(start, offsets, m.start())}"
            err = check_reference(where, prose, m.start(), ref, d.rel, d.folder)
            if err:
                wrong.append(err)
        for m in FILE_THEN_TITLE.finditer(prose):
            ref = m.group(2) or m.group(3)
            word = re.sub(r"^\[[^\]]*\]\(|[`)]", "", m.group(1))
            refs += 1
            where = f"{d.rel}:{Doc.line_of(start, offsets, m.start())}"
            err = check_reference(where, prose, m.start(), ref, d.rel, d.folder, explicit_file=word)
            if err:
                wrong.append(err)
    return anchors, refs, wrong


print("1-2. paths, anchors and section references in the documents")
for rel in DOCS:
    d = docs[rel]
    named, missing = check_paths(d)
    anchors, refs, wrong = check_sections(d)
    print(f"  {rel}: {len(d.headings)} headings; {named} paths named; {anchors} links to anchors; "
          f"{refs} section references; {len(missing) + len(wrong)} wrong")
    problems += missing + wrong
absent = [d for d in ["README.md", "CONTRIBUTING.md", "tests/README.md", "bench/README.md"]
          if d not in DOCS]
if absent:
    print(f"  not present (not checked): {', '.join(absent)}")

# ---------------------------------------------------------------------------------------------
# 3. The README's commands against `dxshim help`.

print(f"3. commands: {os.path.basename(dxshim)} help against README.md")
try:
    done = subprocess.run([dxshim, "help"], capture_output=True, text=True, timeout=60)
    help_text, help_code = done.stdout + done.stderr, done.returncode
except OSError as e:
    help_text, help_code = "", f"could not run: {e}"
help_commands = []
if help_code != 0:
    problems.append(f"dxshim help: exit {help_code}")
else:
    lines = help_text.split("\n")
    if "commands:" not in [l.strip() for l in lines]:
        problems.append("dxshim help: no 'commands:' line; it printed:\n" + help_text)
    else:
        i = [l.strip() for l in lines].index("commands:") + 1
        while i < len(lines) and lines[i].strip():
            m = re.match(r"^\s+([a-z][a-z0-9-]*)\b", lines[i])
            if m:
                help_commands.append(m.group(1))
            i += 1
print(f"  dxshim help lists:  {' '.join(help_commands) or '(nothing)'}")

readme = docs.get("README.md")
readme_commands, sections = [], []
if readme:
    levels = [(lvl, text, n) for lvl, text, n in readme.headings]
    for k, (lvl, text, n) in enumerate(levels):
        if not re.search(r"\bcommands\b", text, re.I):
            continue
        end = next((m for l2, _, m in levels[k + 1:] if l2 <= lvl), len(readme.lines) + 1)
        sections.append(text)
        for line in readme.lines[n:end - 1]:
            if not re.match(r"^\s*(\||[-*+]\s|\d+[.)]\s)", line):
                continue
            m = re.search(r"`([^`]*)`", line)
            if m:
                words = m.group(1).split()
                if len(words) >= 2 and words[0] in ("dxshim", "dxshim.exe"):
                    if words[1] not in readme_commands:
                        readme_commands.append(words[1])
under = "; ".join(sections) or "no heading containing 'commands'"
print(f"  README.md lists:    {' '.join(readme_commands) or '(nothing)'}  (under: {under})")
if not readme_commands:
    problems.append(
        "README.md: no command list. Expected: a heading containing the word 'commands', and "
        "under it a table row or list item per command whose first code span is `dxshim NAME`, "
        f"for each of: {', '.join(help_commands)}")
else:
    if set(help_commands) - set(readme_commands):
        problems.append("README.md: commands dxshim help lists but the README does not: " +
                        ", ".join(c for c in help_commands if c not in readme_commands))
    if set(readme_commands) - set(help_commands):
        problems.append("README.md: commands the README lists but dxshim help does not: " +
                        ", ".join(c for c in readme_commands if c not in help_commands))

# ---------------------------------------------------------------------------------------------
# 4. The example pods.

PODS = "deploy/examples/pods"
PUBLIC = ("mcr.microsoft.com/",)
BUILT = "registry.example.com/"
pod_files = sorted(glob.glob(f"{source_dir}/{PODS}/*.yaml"))
pods_readme = doc(f"{PODS}/README.md")
rows = {}
if pods_readme is None:
    problems.append(f"{PODS}/README.md: missing (it lists every example pod)")
else:
    for n, line in enumerate(pods_readme.lines, 1):
        if not line.lstrip().startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.search(r"([\w.-]+\.yaml)", cells[0])
        if m:
            rows[m.group(1)] = (n, cells)
print(f"4. example pods: {len(pod_files)} in {PODS}, {len(rows)} rows in its README.md")
runs, built, dockerfiles, pod_refs = 0, 0, set(), 0
for path in pod_files:
    name = os.path.basename(path)
    where = f"{PODS}/{name}"
    text = open(path, encoding="utf-8").read()
    try:
        documents = [x for x in yaml.safe_load_all(text) if x is not None]
    except yaml.YAMLError as e:
        problems.append(f"{where}: not YAML: {e}")
        continue
    if len(documents) != 1 or not isinstance(documents[0], dict):
        problems.append(f"{where}: not one YAML mapping ({len(documents)} documents)")
        continue
    pod = documents[0]
    wrong = []
    if pod.get("apiVersion") != "v1":
        wrong.append(f"apiVersion is {pod.get('apiVersion')!r}, not v1")
    if pod.get("kind") != "Pod":
        wrong.append(f"kind is {pod.get('kind')!r}, not Pod")
    if not isinstance(pod.get("metadata"), dict) or not pod["metadata"].get("name"):
        wrong.append("no metadata.name")
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        wrong.append("no spec.containers")
        containers = []
    images = []
    for c in list(spec.get("initContainers") or []) + containers:
        if not isinstance(c, dict) or not c.get("name"):
            wrong.append("a container without a name")
            continue
        image = c.get("image")
        if not isinstance(image, str) or not image:
            wrong.append(f"container {c['name']}: no image")
            continue
        images.append(image)
        last = image.rsplit("/", 1)[-1]
        if "@sha256:" not in image and (":" not in last or not last.split(":", 1)[1]):
            wrong.append(f"container {c['name']}: image {image} has no tag or digest")
        elif last.endswith(":latest"):
            wrong.append(f"container {c['name']}: image {image}: latest is no version")
        if not image.startswith(PUBLIC + (BUILT,)):
            wrong.append(f"container {c['name']}: image {image} is from neither "
                         f"{', '.join(PUBLIC)} nor {BUILT} (an image built from a Dockerfile)")
    opening = " ".join(l.lstrip("#").strip() for l in text.split("\n")[:40] if l.startswith("#"))
    needs_build = any(i.startswith(BUILT) for i in images)
    named_dockerfiles = re.findall(rf"{PODS}/[\w.-]+/Dockerfile", opening)
    if needs_build:
        built += 1
        if not named_dockerfiles:
            wrong.append(f"its image is built ({BUILT}...) but its opening comment names no "
                         f"{PODS}/<folder>/Dockerfile")
        for f in named_dockerfiles:
            dockerfiles.add(f)
            if not os.path.isfile(os.path.join(source_dir, f)):
                wrong.append(f"{f}: missing")
    else:
        runs += 1
    for m in re.finditer(r"\b(README(?:\.md)?),\s+\"([^\"]+)\"", opening):
        pod_refs += 1
        err = check_reference(where, opening, m.start(), m.group(2), None, PODS,
                              explicit_file=m.group(1))
        if err:
            wrong.append(err.split(": ", 1)[1])
    if pods_readme is not None:
        if name not in rows:
            wrong.append(f"not listed in {PODS}/README.md")
        else:
            n, cells = rows[name]
            how = cells[-1]
            if needs_build:
                if not how.startswith("Build") or not any(
                        os.path.relpath(f, PODS) in how for f in named_dockerfiles):
                    wrong.append(f"{PODS}/README.md:{n}: its row must start with 'Build' and "
                                 f"link {', '.join(named_dockerfiles) or 'its Dockerfile'}")
            elif not how.startswith("Public image, not yet run on a Windows node"):
                wrong.append(f"{PODS}/README.md:{n}: its row must start with "
                             "'Public image, not yet run on a Windows node'")
    problems += [f"{where}: {w}" for w in wrong]
for name in sorted(set(rows) - {os.path.basename(p) for p in pod_files}):
    problems.append(f"{PODS}/README.md:{rows[name][0]}: lists {name}, which is no example pod")
print(f"  {runs} run as written, {built} use an image built from {len(dockerfiles)} Dockerfiles ("
      + ", ".join(sorted(os.path.relpath(f, PODS) for f in dockerfiles))
      + f"); {pod_refs} section references in their comments")

for p in problems:
    print("wrong:", p)
print(f"{len(problems)} problems" if problems else "the docs match the tree")
sys.exit(1 if problems else 0)
