#!/bin/bash
# What periodic checkpoints add to a run's wall time; run after changing the writer or the snapshot path.
# Wall time of a run with periodic checkpoints against the same run with only
# the first and final ones (output.every = 0), interleaved repetitions, medians:
# the whole process, and the time loop alone (the summary line's time, which
# leaves out start-up such as GPU initialisation and the initial checkpoint).
# usage: tools/checkpoint_overhead.sh [CONFIG] [REPS] [EVERY...] [-- heatsolve options]
# e.g.   tools/checkpoint_overhead.sh inputs/letters.cfg 9 400 200
set -euo pipefail
config=${1:-inputs/letters.cfg}; reps=${2:-9}; shift $(( $# >= 2 ? 2 : $# ))
intervals=(); while (( $# )) && [[ $1 != -- ]]; do intervals+=("$1"); shift; done
(( $# )) && shift
(( ${#intervals[@]} )) || intervals=(400 200)
program=${HEATSOLVE:-build/heatsolve}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
declare -A times loops
for ((r = 0; r < reps; ++r)); do
  for every in 0 "${intervals[@]}"; do
    start=$(date +%s.%N)
    "$program" "$config" --set output.every="$every" --set output.dir=\""$dir/$every"\" \
      --set output.png=false "$@" > "$dir/log"
    times[$every]+="$(echo "$(date +%s.%N) - $start" | awk '{print $1 - $3}') "
    loops[$every]+="$(awk '/^summary:/ {for (i = 1; i < NF; ++i) if ($(i + 1) == "s,") print $i}' "$dir/log") "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
base=$(echo "${times[0]}" | median); base_loop=$(echo "${loops[0]}" | median)
printf 'config %s %s, %d interleaved runs each, medians\n' "$config" "$*" "$reps"
printf '  every %-6s process %.3f s          loop %.3f s\n' 0 "$base" "$base_loop"
for every in "${intervals[@]}"; do
  m=$(echo "${times[$every]}" | median); l=$(echo "${loops[$every]}" | median)
  printf '  every %-6s process %.3f s  %+6.1f%%  loop %.3f s  %+6.1f%%\n' "$every" "$m" \
    "$(awk -v a="$m" -v b="$base" 'BEGIN{print (a/b-1)*100}')" "$l" \
    "$(awk -v a="$l" -v b="$base_loop" 'BEGIN{print (a/b-1)*100}')"
done
