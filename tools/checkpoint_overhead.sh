#!/bin/bash
# Wall time of a run with periodic checkpoints against the same run with only
# the first and final ones (output.every = 0), interleaved repetitions, medians.
# usage: tools/checkpoint_overhead.sh [CONFIG] [REPS] [EVERY...] [-- heatsolve options]
# e.g.   tools/checkpoint_overhead.sh inputs/letters.cfg 9 400 200
set -euo pipefail
config=${1:-inputs/letters.cfg}; reps=${2:-9}; shift $(( $# >= 2 ? 2 : $# ))
intervals=(); while (( $# )) && [[ $1 != -- ]]; do intervals+=("$1"); shift; done
(( $# )) && shift
(( ${#intervals[@]} )) || intervals=(400 200)
program=${HEATSOLVE:-build/heatsolve}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
declare -A times
for ((r = 0; r < reps; ++r)); do
  for every in 0 "${intervals[@]}"; do
    start=$(date +%s.%N)
    "$program" "$config" --quiet --set output.every="$every" --set output.dir=\""$dir/$every"\" \
      --set output.png=false "$@" >/dev/null
    times[$every]+="$(echo "$(date +%s.%N) - $start" | awk '{print $1 - $3}') "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
base=$(echo "${times[0]}" | median)
printf 'config %s, %d interleaved runs each, median wall time\n' "$config" "$reps"
printf '  every %-6s %.3f s\n' 0 "$base"
for every in "${intervals[@]}"; do
  m=$(echo "${times[$every]}" | median)
  printf '  every %-6s %.3f s  %+.1f%%\n' "$every" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN{print (a/b-1)*100}')"
done
