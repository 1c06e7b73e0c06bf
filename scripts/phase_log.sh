# The wall time of each phase of a test run, for the table scripts/test.sh prints at its end, so
# that a phase that grows shows itself. Sourced by the scripts that run a phase; a phase is logged
# only when DXSHIM_PHASE_LOG names the file to append it to (test.sh sets it).
#   start=$SECONDS; ...; phase_done "Linux build" "$start"
phase_done() {
  [ -n "${DXSHIM_PHASE_LOG:-}" ] || return 0
  printf '%s\t%s\n' "$1" "$((SECONDS - $2))" >>"$DXSHIM_PHASE_LOG"
}

# The logged phases as a table (minutes:seconds), the run's total last.
phase_table() {
  local total=$1 name seconds
  echo "phase wall times (each phase alone; the builds overlap):"
  while IFS=$'\t' read -r name seconds; do
    printf '  %-70s %3d:%02d\n' "$name" $((seconds / 60)) $((seconds % 60))
  done <"$DXSHIM_PHASE_LOG"
  printf '  %-70s %3d:%02d\n' "total" $((total / 60)) $((total % 60))
}
