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
