#!/bin/sh
# Usage: xvfb_run_checked.sh FIRST_DISPLAY COMMAND [ARGS...]
#
# Runs COMMAND under `xvfb-run -a`, but only once the new X server has accepted a client.
# Why: in CI a fresh Xvfb once refused pvpython's first connection ("bad X server connection",
# then SIGABRT inside ParaView), which failed a test before it checked anything. xvfb-run
# discards Xvfb's messages, so this script keeps them (-e) and prints them when a server fails
# the probe, then tries a new server on another display; three servers in a row failing is an
# error. A failure of COMMAND itself is never retried.
set -u
first_display=$1
shift

probe='import ctypes, sys
display = ctypes.CDLL("libX11.so.6").XOpenDisplay(None)
sys.exit(0 if display else 1)'

attempt=1
while [ "$attempt" -le 3 ]; do
    xvfb_log=$(mktemp) || exit 1
    refused="$xvfb_log.refused"
    xvfb-run -a -n "$first_display" -e "$xvfb_log" \
        sh -c 'python3 -c "$0" || { : > "$1"; exit 1; }; shift; exec "$@"' "$probe" "$refused" "$@"
    status=$?
    if [ ! -e "$refused" ]; then
        rm -f "$xvfb_log"
        exit "$status"
    fi
    rm -f "$refused"
    echo "xvfb_run_checked: X server $attempt of 3 (search from :$first_display) refused a client; Xvfb said:" >&2
    cat "$xvfb_log" >&2
    rm -f "$xvfb_log"
    first_display=$((first_display + 5))
    attempt=$((attempt + 1))
done
echo "xvfb_run_checked: no X server accepted a client; is Xvfb working here?" >&2
exit 1
