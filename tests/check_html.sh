#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium loads `estimate --format html` of SCENARIO
# and the test fails on any console message, on a page without its pictures, or on anything the
# page would fetch from the network. A probe page with a deliberate console error checks first that
# this Chromium reports console messages at all, so the test cannot pass by seeing nothing.
# usage: check_html.sh GPUSIM CHROMIUM SCENARIO WORKDIR
set -euo pipefail
gpusim=$1
chromium=$2
scenario=$3
dir=$4
rm -rf "$dir"
mkdir -p "$dir"
load() {  # file -> DOM on stdout, browser log in $dir/log
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$dir/profile" --enable-logging=stderr --v=0 --dump-dom "file://$1" 2>"$dir/log"
}
printf '<!DOCTYPE html><html><body><script>console.error("gpusim-probe")</script></body></html>\n' >"$dir/probe.html"
load "$dir/probe.html" >/dev/null
if ! grep -q 'CONSOLE.*gpusim-probe' "$dir/log"; then
  echo "this chromium does not log console messages to stderr: the check would be blind" >&2
  exit 1
fi
"$gpusim" estimate "$scenario" --format html -o "$dir/report.html"
load "$dir/report.html" >"$dir/dom.html"
if grep 'CONSOLE' "$dir/log"; then
  echo "the report logs to the browser console (above)" >&2
  exit 1
fi
svgs=$(grep -c '<svg' "$dir/dom.html" || true)
if [ "$svgs" -lt 2 ]; then
  echo "the rendered page has $svgs SVG pictures, expected the roofline and the break-even" >&2
  exit 1
fi
for heading in Report Roofline "Kernels of one step" "Owning against renting"; do
  grep -q "<h2>$heading</h2>" "$dir/dom.html" || { echo "the rendered page lacks the section \"$heading\"" >&2; exit 1; }
done
if grep -Eo '(src|href)="(https?:)?//[^"]*' "$dir/report.html"; then
  echo "the report would fetch the above from the network" >&2
  exit 1
fi
echo "HTML report: no console messages, $svgs pictures, every section, nothing fetched"
