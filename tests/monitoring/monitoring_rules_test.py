#!/usr/bin/env python3
"""Checks what operators copy from deploy/monitoring/ to see which pod is on which GPU: promtool
accepts both rule files, every promtool unit test under deploy/monitoring/tests/ passes, every
join and aggregation keeps `node` (a LUID is unique on one machine only), the Grafana dashboard's
queries are PromQL promtool accepts and name only recording rules the rules file defines (or the
dxshim and windows_exporter series the rules start from), the scrape jobs exist, keep Windows
nodes only, label them `node` and point at the right ports, and every file states one scrape
interval (SCRAPE_INTERVAL) and takes rate(), irate(), increase(), delta(), idelta() and deriv()
over windows of four samples or more at it: the rules and alerts, the scrape file (its commented
alternative too), the promtool tests, docs/metrics.md and the dashboard (read only).

usage: monitoring_rules_test.py SOURCE_DIR    (promtool is looked up on PATH)"""
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

source_dir = sys.argv[1]
monitoring = os.path.join(source_dir, "deploy", "monitoring")
rules_file = os.path.join(monitoring, "dxshim-gpu-rules.yaml")
alerts_file = os.path.join(monitoring, "dxshim-gpu-alerts.yaml")
dashboard_file = os.path.join(monitoring, "dxshim-gpu-dashboard.json")
scrape_file = os.path.join(monitoring, "prometheus-scrape.yaml")
tests_dir = os.path.join(monitoring, "tests")

promtool = shutil.which("promtool")
if promtool is None:
    sys.exit("promtool is not on PATH: install Debian's `prometheus` package "
             "(scripts/install-deps.sh does)")

problems = []


def run(args, what):
    """Runs promtool, prints the command and its output, and returns (exit code, output)."""
    print("$ " + " ".join(os.path.relpath(a, source_dir) if a.startswith(source_dir) else a
                          for a in [os.path.basename(args[0])] + args[1:]), flush=True)
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    print(out.rstrip() + "\n", flush=True)
    if done.returncode != 0:
        problems.append(f"{what}: promtool exited {done.returncode}")
    return done.returncode, out


# 1. Both rule files, as Prometheus would load them.
code, out = run([promtool, "check", "rules", rules_file, alerts_file], "check rules")
if out.count("SUCCESS") != 2:
    problems.append("check rules: promtool did not say SUCCESS for both files")

# 2. The unit tests: each file names its rule files relative to itself.
test_files = sorted(f for f in os.listdir(tests_dir) if f.endswith((".yaml", ".yml")))
if not test_files:
    problems.append(f"no promtool unit tests in {tests_dir}")
for name in test_files:
    run([promtool, "test", "rules", os.path.join(tests_dir, name)], f"test rules {name}")

# 3. The rules themselves: names, and `node` kept through every join and aggregation.
rule_groups = [yaml.safe_load(open(f, encoding="utf-8"))["groups"] for f in (rules_file, alerts_file)]
rules = [r for groups in rule_groups for g in groups for r in g["rules"]]
recorded = {r["record"] for r in rules if "record" in r}
RECORD_NAME = re.compile(r"^[a-z_]+:[A-Za-z0-9_]+:[A-Za-z0-9_]+$")
for name in sorted(recorded):
    if not RECORD_NAME.match(name):
        problems.append(f"recording rule {name}: not level:metric:operations")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`' + r"|'(?:[^'\\]|\\.)*'")
for r in rules:
    expr = STRING.sub('""', r["expr"])
    name = r.get("record") or r.get("alert")
    for on in re.findall(r"\bon\s*\(([^)]*)\)", expr):
        labels = {l.strip() for l in on.split(",")}
        if not {"node", "luid"} <= labels:
            problems.append(f"{name}: joins on({on}); every join needs node and luid")
    if re.search(r"\bignoring\s*\(", expr):
        problems.append(f"{name}: joins with ignoring(); name node and luid with on()")
    for by in re.findall(r"\bby\s*\(([^)]*)\)", expr):
        if "node" not in {l.strip() for l in by.split(",")}:
            problems.append(f"{name}: aggregates by ({by}) without node")
    if re.search(r"\bwithout\s*\([^)]*\bnode\b", expr):
        problems.append(f"{name}: aggregates node away")
print(f"{len(recorded)} recording rule names and the joins and aggregations of {len(rules)} rules "
      "checked (level:metric:operations; on(node, luid ...); by (node ...))")

# Series the rules and the dashboard may start from: dxshim's (deploy/monitoring's contract with
# shim/metrics) and windows_exporter's gpu collector's.
SOURCE_SERIES = {
    "dxshim_container_gpu_info", "dxshim_pod_gpu_memory_reserved_bytes", "dxshim_gpu_pods",
    "dxshim_gpu_pod_slots", "dxshim_gpu_exclusive", "dxshim_gpu_memory_bytes",
    "dxshim_gpu_memory_reserved_bytes", "dxshim_gpu_present",
    "windows_gpu_info", "windows_gpu_engine_time_seconds",
    "windows_gpu_adapter_memory_dedicated_bytes", "windows_gpu_dedicated_video_memory_size_bytes",
}


def names_used(expr):
    """Recording-rule names (with a colon) and dxshim/windows series names in a PromQL
    expression, strings and durations left out."""
    bare = re.sub(r"\[[^\]]*\]", "", STRING.sub('""', expr))
    tokens = re.findall(r"(?<![\w:])[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z0-9_]*)*", bare)
    return ({t for t in tokens if ":" in t},
            {t for t in tokens if t.startswith(("dxshim_", "windows_")) and ":" not in t})


for r in rules:
    rule_names, series = names_used(r["expr"])
    name = r.get("record") or r.get("alert")
    for missing in sorted(rule_names - recorded):
        problems.append(f"{name}: uses {missing}, which no rule records")
    for unknown in sorted(series - SOURCE_SERIES):
        problems.append(f"{name}: uses {unknown}, not a series of dxshim's or windows_exporter's")

# 4. The dashboard: every panel queries something, every query is PromQL promtool accepts once
# Grafana's variables are replaced, and names only what the rules record or the source series.
dashboard = json.load(open(dashboard_file, encoding="utf-8"))


def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


queries = []  # (where, PromQL)
for panel in all_panels(dashboard.get("panels", [])):
    if panel.get("type") == "row":
        continue
    exprs = [t.get("expr", "").strip() for t in panel.get("targets", [])]
    if not exprs or not all(exprs):
        problems.append(f"dashboard panel {panel.get('title')!r}: a panel without a query")
    queries += [(f"panel {panel.get('title')!r}", e) for e in exprs if e]
variables = dashboard.get("templating", {}).get("list", [])
if not any(v.get("name") == "node" for v in variables):
    problems.append("dashboard: no `node` variable")
for v in variables:
    if v.get("type") != "query":
        continue
    q = v.get("query")
    q = q.get("query", "") if isinstance(q, dict) else (q or "")
    # Grafana's own functions around PromQL: label_values(SELECTOR, label), query_result(EXPR).
    m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", q) or \
        re.fullmatch(r"\s*query_result\((.*)\)\s*", q)
    queries.append((f"variable {v.get('name')}", m.group(1) if m else q))
    if v.get("datasource", {}).get("uid") != "${datasource}":
        problems.append(f"dashboard variable {v.get('name')}: not on the ${{datasource}} variable")
for panel in all_panels(dashboard.get("panels", [])):
    for t in [panel] + panel.get("targets", []):
        if "datasource" in t and t["datasource"].get("uid") != "${datasource}":
            problems.append(f"dashboard panel {panel.get('title')!r}: not on ${{datasource}}")

DURATIONS = {"__rate_interval": "1m", "__interval": "1m", "__range": "1h"}


def substitute(expr):
    """Grafana's variables ($node, ${node}, ${node:regex}, [[node]]) replaced by literals."""
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)(?::\w+)?\]\]|\$(\w+)",
                  lambda m: DURATIONS.get(next(g for g in m.groups() if g), "win-gpu-01"), expr)


with tempfile.TemporaryDirectory() as tmp:
    checked = os.path.join(tmp, "dashboard-queries.yaml")
    as_rules = [{"record": f"dashboard_query_{i}", "expr": substitute(e)}
                for i, (_, e) in enumerate(queries)]
    for i, (where, e) in enumerate(queries):
        print(f"dashboard_query_{i}: {where}: {substitute(e)}")
    with open(checked, "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": as_rules}]}, f)
    code, out = run([promtool, "check", "rules", checked], "dashboard queries")
    if "SUCCESS" not in out:
        problems.append("dashboard queries: promtool did not accept them")
for where, e in queries:
    rule_names, series = names_used(e)
    for missing in sorted(rule_names - recorded):
        problems.append(f"dashboard {where}: uses {missing}, which dxshim-gpu-rules.yaml does not record")
    for unknown in sorted(series - SOURCE_SERIES):
        problems.append(f"dashboard {where}: uses {unknown}, not a series of dxshim's or windows_exporter's")
print(f"{len(queries)} dashboard queries checked")

# 5. The scrape jobs. Debian's promtool is built without Kubernetes discovery, so the jobs are
# checked by promtool with a static target in its place, and their relabelling is applied here to
# nodes as Kubernetes discovery gives them (keep, replace: the two actions the jobs use).
scrape = yaml.safe_load(open(scrape_file, encoding="utf-8"))
jobs = {j["job_name"]: j for j in scrape.get("scrape_configs", [])}
PORTS = {"windows_exporter": "9182", "dxshim": "9464"}
if set(jobs) != set(PORTS):
    problems.append(f"prometheus-scrape.yaml: jobs {sorted(jobs)}, expected {sorted(PORTS)}")


def relabel(target, configs):
    labels = dict(target)
    for c in configs:
        value = c.get("separator", ";").join(labels.get(s, "") for s in c.get("source_labels", []))
        m = re.fullmatch(c.get("regex", "(.*)"), value)
        action = c.get("action", "replace")
        if action == "keep":
            if not m:
                return None
        elif action == "replace":
            if m:
                labels[c["target_label"]] = re.sub(
                    r"\$\{(\d+)\}|\$(\d+)", lambda g: m.group(int(g.group(1) or g.group(2))),
                    c.get("replacement", "$1"))
        else:
            problems.append(f"prometheus-scrape.yaml: relabel action {action} not checked here")
    return labels


NODES = [  # (discovered target, the address expected for the job's port, or None: dropped)
    ({"__address__": "10.240.0.4:10250", "__meta_kubernetes_node_name": "win-gpu-01",
      "__meta_kubernetes_node_label_kubernetes_io_os": "windows"}, "10.240.0.4:{port}"),
    ({"__address__": "[fd00:10:240::4]:10250", "__meta_kubernetes_node_name": "win-gpu-02",
      "__meta_kubernetes_node_label_kubernetes_io_os": "windows"}, "[fd00:10:240::4]:{port}"),
    ({"__address__": "10.240.0.9:10250", "__meta_kubernetes_node_name": "linux-01",
      "__meta_kubernetes_node_label_kubernetes_io_os": "linux"}, None),
]
for name, job in sorted(jobs.items()):
    if [c.get("role") for c in job.get("kubernetes_sd_configs", [])] != ["node"]:
        problems.append(f"prometheus-scrape.yaml job {name}: not kubernetes_sd_configs role node")
    for node, address in NODES:
        got = relabel(node, job.get("relabel_configs", []))
        want = None if address is None else {
            "__address__": address.format(port=PORTS.get(name)),
            "node": node["__meta_kubernetes_node_name"]}
        seen = None if got is None else {k: got.get(k) for k in ("__address__", "node")}
        if seen != want:
            problems.append(f"prometheus-scrape.yaml job {name}: node "
                            f"{node['__meta_kubernetes_node_name']} gives {seen}, expected {want}")
    job = dict(job)
    del job["kubernetes_sd_configs"]
    job["static_configs"] = [{"targets": ["10.240.0.4:10250"]}]
    jobs[name] = job
with tempfile.TemporaryDirectory() as tmp:
    static = os.path.join(tmp, "prometheus-scrape-static.yaml")
    with open(static, "w", encoding="utf-8") as f:
        yaml.safe_dump({"scrape_configs": list(jobs.values())}, f)
    run([promtool, "check", "config", static], "check config (prometheus-scrape.yaml, static targets)")
print(f"prometheus-scrape.yaml: jobs {', '.join(sorted(jobs))}; relabelling of "
      f"{len(NODES)} discovered nodes checked")

# 6. One scrape interval everywhere, and windows of at least four samples at it. A range [W]
# evaluated at t holds the samples in (t-W, t] from Prometheus 3.0 (in [t-W, t] before it): at
# one sample every I seconds that is W/I of them, rounded down, at the least. Four leave rate() a
# figure when one scrape is missed, and irate() and the others their two samples.
SCRAPE_INTERVAL = 15  # seconds
MIN_SAMPLES = 4
RATE_FUNCTIONS = re.compile(r"\b(rate|irate|increase|delta|idelta|deriv)\s*\(")
# $__rate_interval is at least four of the scrape intervals Grafana is told of by definition
# (max($__interval + scrape interval, 4 x scrape interval)); $__range is the whole time range.
GRAFANA_WINDOWS = {"$__rate_interval", "${__rate_interval}", "$__range", "${__range}"}
UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000,
                "second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600,
                "hours": 3600}
DURATION = re.compile(r"(\d+(?:\.\d+)?)\s?(ms|seconds?|minutes?|hours?|[smhdwy])(?![A-Za-z0-9_])")


def duration_seconds(text):
    """A Prometheus duration ("15s", "1m30s", "2m") in seconds; None when it is not one."""
    text = text.strip()
    parts = re.findall(r"(\d+)(ms|[smhdwy])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * UNIT_SECONDS[u] for n, u in parts)


def call_windows(text):
    """(function, window) of each rate-like call in `text`: the [range] inside its parentheses
    at their own depth (a subquery's [range:step] gives its range)."""
    found = []
    for m in RATE_FUNCTIONS.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "[" and depth == 1:
                end = text.find("]", i)
                if end < 0:
                    break
                found.append((m.group(1), text[i + 1:end].split(":")[0].strip()))
                i = end
            i += 1
    return found


def prose_intervals(text):
    """Durations stated as a scrape interval: after a word starting with "scrap" (not
    scrape_timeout), up to the end of its sentence (80 characters at most), [ranges] left out."""
    flat = re.sub(r"\s*\n\s*(?:#\s?)?", " ", text)  # comment and paragraph lines joined
    found = []
    for m in re.finditer(r"\bscrap\w*", flat, re.IGNORECASE):
        if m.group(0).lower().startswith("scrape_timeout"):
            continue
        clause = re.split(r"\.(?:\s|$)", flat[m.end():m.end() + 80])[0]
        clause = re.sub(r"\[[^\]]*\]", "", clause)
        found += [(f"{m.group(0)}{clause[:d.end()]}", float(d.group(1)) * UNIT_SECONDS[d.group(2)])
                  for d in DURATION.finditer(clause)]
    return found


def check_windows(where, text):
    count = 0
    for function, window in call_windows(text):
        count += 1
        if window in GRAFANA_WINDOWS:
            continue
        seconds = duration_seconds(window)
        if seconds is None:
            problems.append(f"{where}: {function}(...[{window}]): not a duration whose samples "
                            f"can be counted (use a literal, or $__rate_interval)")
        elif seconds // SCRAPE_INTERVAL < MIN_SAMPLES:
            problems.append(f"{where}: {function}(...[{window}]) holds "
                            f"{int(seconds // SCRAPE_INTERVAL)} samples at a {SCRAPE_INTERVAL}s "
                            f"scrape; at least {MIN_SAMPLES} needed ([{MIN_SAMPLES * SCRAPE_INTERVAL}s])")
    return count


def check_interval(where, value):
    seconds = duration_seconds(str(value)) if not isinstance(value, (int, float)) else value
    if seconds != SCRAPE_INTERVAL:
        problems.append(f"{where}: scrape interval {value}, not the one of every file: "
                        f"{SCRAPE_INTERVAL}s")


def check_scrape_configs(where, config):
    """Each job's scrape interval, its own or the global one (Prometheus' default is 1m)."""
    default = (config.get("global") or {}).get("scrape_interval", "1m")
    jobs_seen = config.get("scrape_configs") or []
    for job in jobs_seen:
        check_interval(f"{where} job {job.get('job_name')}", job.get("scrape_interval", default))
    return len(jobs_seen)


metrics_doc = os.path.join(source_dir, "docs", "metrics.md")
test_paths = [os.path.join(tests_dir, n) for n in test_files]
windows_checked = stated = scrape_jobs = 0
for path in [rules_file, alerts_file, scrape_file, metrics_doc, dashboard_file] + test_paths:
    where = os.path.relpath(path, source_dir)
    text = open(path, encoding="utf-8").read()
    if path == dashboard_file:
        # The dashboard's strings (queries, descriptions), read as written.
        strings = []

        def walk(node):
            if isinstance(node, dict):
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)
            elif isinstance(node, str):
                strings.append(node)
        walk(dashboard)
        text = "\n".join(strings)
        # A panel's or query's min interval is the scrape interval Grafana's $__rate_interval counts
        # with.
        for panel in all_panels(dashboard.get("panels", [])):
            for t in [panel] + panel.get("targets", []):
                if t.get("interval"):
                    check_interval(f"{where} panel {panel.get('title')!r} interval", t["interval"])
                    stated += 1
    windows_checked += check_windows(where, text)
    for said, seconds in prose_intervals(text):
        stated += 1
        if seconds != SCRAPE_INTERVAL:
            problems.append(f"{where}: \"{said}\": a scrape interval other than {SCRAPE_INTERVAL}s")
    if path == scrape_file:
        scrape_jobs += check_scrape_configs(where, scrape)
        # The commented alternative, uncommented: the comment lines from the first commented job.
        lines = text.splitlines()
        first = next((i for i, l in enumerate(lines) if re.match(r"^#\s+- job_name:", l)), None)
        commented = "" if first is None else "\n".join(
            l[1:] for l in itertools.takewhile(lambda l: l.startswith("#"), lines[first:]))
        alternative = yaml.safe_load("scrape_configs:\n" + commented) if commented else None
        if alternative and alternative.get("scrape_configs"):
            scrape_jobs += check_scrape_configs(f"{where} (commented alternative)", alternative)
    if path == metrics_doc:
        for block in re.findall(r"```ya?ml\n(.*?)```", text, re.DOTALL):
            config = yaml.safe_load(block)
            if isinstance(config, dict) and "scrape_configs" in config:
                scrape_jobs += check_scrape_configs(f"{where} (a yaml block)", config)
    if path in test_paths:
        for i, test in enumerate(yaml.safe_load(text).get("tests", [])):
            check_interval(f"{where} test {i + 1} interval (the scrape it stands for)",
                           test.get("interval", "1m"))
            stated += 1
print(f"scrape interval {SCRAPE_INTERVAL}s: {scrape_jobs} scrape jobs, {stated} other statements "
      f"of it and {windows_checked} rate-like windows (at least {MIN_SAMPLES} samples) checked")

for p in problems:
    print("wrong:", p)
print("FAILED" if problems else "OK")
sys.exit(1 if problems else 0)
