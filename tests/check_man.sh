#!/usr/bin/env bash
# The man page has a section (.SS gpusim CMD) for every command `gpusim --help` lists, and there
# are at least ten commands, so the check cannot pass on an empty list.
# usage: check_man.sh GPUSIM MANPAGE
set -euo pipefail
n=0
for c in $("$1" --help | sed -n 's/^  gpusim \([a-z]*\).*/\1/p'); do
  grep -q "^\.SS gpusim $c\$" "$2" || { echo "the man page has no section for gpusim $c" >&2; exit 1; }
  n=$((n + 1))
done
[ "$n" -ge 10 ] || { echo "gpusim --help lists $n commands, expected at least 10" >&2; exit 1; }
echo "man page: a section for each of $n commands"
# It renders: groff reads it without a warning in the C locale, the page is ASCII (non-ASCII
# characters written as groff glyphs), and the usage lines come out one per line as --help has them.
if LC_ALL=C groff -ww -man -Tascii -z "$2" 2>&1 | grep -q .; then
  echo "groff warns on the man page:" >&2
  LC_ALL=C groff -ww -man -Tascii -z "$2" >&2
  exit 1
fi
if LC_ALL=C grep -nP '[^\x00-\x7F]' "$2" >&2; then
  echo "the man page holds non-ASCII bytes (lines above)" >&2
  exit 1
fi
rendered=$(LC_ALL=C groff -man -Tascii -P-c -P-b -P-u "$2")
while IFS= read -r line; do
  grep -qF -- "$(echo "$line" | sed 's/^ *//')" <<<"$rendered" || { echo "usage line not rendered as one line: $line" >&2; exit 1; }
done < <("$1" --help | sed -n 's/^  \(gpusim [a-z]*.*\)/\1/p')
echo "man page renders: no groff warning, ASCII only, every usage line intact"
