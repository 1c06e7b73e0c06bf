#!/usr/bin/env bash
# deploy/windows/install.ps1 without Windows: Debian has no pwsh, so the script is parsed with the
# tree-sitter PowerShell grammar (ps1_syntax_check) and linted for the settings it relies on.
# Broken copies must be caught too, or this test proves nothing. Running it is the manual
# check list in deploy/windows/CHECKLIST.md.
# usage: install_script_test.sh SOURCE_DIR PS1_SYNTAX_CHECK
set -uo pipefail
src=${1:?usage: install_script_test.sh SOURCE_DIR PS1_SYNTAX_CHECK}
check=${2:?usage: install_script_test.sh SOURCE_DIR PS1_SYNTAX_CHECK}
script="$src/deploy/windows/install.ps1"
work=$(mktemp -d /tmp/dxshim-ps1-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
result() {  # result OK_CONDITION_EXIT_CODE DESCRIPTION
  if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAILED: $2"; failures=$((failures + 1)); fi
}

"$check" "$script"
result $? "install.ps1 parses without a syntax error"
"$check" "$src/deploy/windows/installer-pod.ps1"
result $? "installer-pod.ps1 parses without a syntax error"

# The HostProcess installer's inline command is PowerShell too.
python3 - "$src/deploy/windows/installer-daemonset.yaml" >"$work/hostprocess-command.ps1" <<'PY'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    spec = (doc or {}).get("spec", {}).get("template", {}).get("spec", {})
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        probe = container.get("readinessProbe", {}).get("exec", {}).get("command", [])
        for command in container.get("command", []), probe:
            if "-Command" in command:
                print(command[command.index("-Command") + 1])
PY
[ -s "$work/hostprocess-command.ps1" ] && "$check" "$work/hostprocess-command.ps1" >/dev/null
result $? "the HostProcess installer's -Command lines parse"
[ "$(grep -c 'installer-pod.ps1' "$work/hostprocess-command.ps1")" = 4 ]
result $? "both DaemonSets run installer-pod.ps1, and their readiness probes ask it"

# Lint: strict mode and stop-on-error before the first command that changes anything, no
# aliases that change meaning between hosts, CRLF-safe (no carriage returns mixed in).
first_change=$(grep -n -m1 -E '^\s*(Copy-Item|New-Item|Move-Item|& \$Installed)' "$script" | cut -d: -f1)
strict=$(grep -n -m1 '^Set-StrictMode -Version Latest' "$script" | cut -d: -f1)
stop=$(grep -n -m1 "^\$ErrorActionPreference = 'Stop'" "$script" | cut -d: -f1)
[ -n "$strict" ] && [ -n "$stop" ] && [ "$strict" -lt "$first_change" ] && [ "$stop" -lt "$first_change" ]
result $? "strict mode and ErrorActionPreference=Stop come before the first change (line $first_change)"
! grep -n -E '(^|[|;(]\s*)(%|\?|gci|ls|dir|cat|rm|del|cp|mv|iwr|curl|wget)\s' "$script"
result $? "no command aliases"
! grep -q $'\r' "$script"
result $? "one line ending throughout"
grep -q '^\s*\[switch\]\$Uninstall' "$script"
result $? "has -Uninstall"
# The node's part is dxshim.exe's (tested under wine: node_install_<distribution>_test.sh); the wrapper passes
# its switches through and never edits kubelet's or containerd's settings itself.
grep -q '^\s*\[switch\]\$NoNodeLabels' "$script" && grep -q "'--node-labels', 'none'" "$script"
result $? "-NoNodeLabels becomes --node-labels none"
grep -q '^\s*\[switch\]\$ServiceOnly' "$script" && grep -q "'--service-only'" "$script" &&
  grep -q '^\s*\[switch\]\$DryRun' "$script" && grep -q -- "--dry-run" "$script"
result $? "-ServiceOnly and -DryRun are passed through"
grep -q '& \$Installed @arguments' "$script" && grep -q '& \$Installed uninstall' "$script"
result $? "install and uninstall are dxshim.exe's"
! grep -n -E 'Set-ItemProperty|sc\.exe config|ImagePath|Restart-Service|Stop-Service|containerRuntimeEndpoint' "$script"
result $? "the wrapper changes no kubelet or containerd setting and stops no service itself (Stop-Service -Force would stop kubelet too)"
grep -q "^  Protect-DataDir" "$script" && grep -q "'\*S-1-5-32-544:(OI)(CI)F'" "$script" &&
  grep -q -- '/inheritance:r' "$script"
result $? "dxshim's ProgramData folder is made SYSTEM's and Administrators' only before anything is copied there"
grep -q "'--restart-service'" "$script"
result $? "a replaced binary restarts the dxshim service through dxshim.exe install (alone)"

# Broken copies: an unbalanced brace, an unterminated string, an unclosed parenthesis.
sed '0,/^}$/{/^}$/d}' "$script" >"$work/brace.ps1"
sed "0,/'Stop'/s/'Stop'/'Stop/" "$script" >"$work/string.ps1"
sed '0,/if (\$build -lt 20348)/s/if (\$build -lt 20348)/if ($build -lt 20348/' "$script" >"$work/parenthesis.ps1"
! cmp -s "$script" "$work/parenthesis.ps1"
result $? "the parenthesis breakage applies"
for broken in brace string parenthesis; do
  out=$("$check" "$work/$broken.ps1")
  code=$?
  [ "$code" = 1 ]
  result $? "a copy with a broken $broken is refused: $(echo "$out" | head -1)"
done

echo "$failures failure(s)"
[ "$failures" = 0 ]
