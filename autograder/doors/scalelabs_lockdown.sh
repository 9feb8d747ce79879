#!/usr/bin/env bash
# scalelabs lockdown for the Gradescope container (run as root by setup.sh and run_autograder).
#
# Where bubblewrap cannot run, the engine's worker runs student code as a separate unprivileged
# uid; that is a boundary only if the secrets are unreadable to that uid. This makes the zip's
# contents (engine source, reference, hidden-test files, otter config) and the installed
# scalelabs packages (`autograder`, `labs`, `reference`: engine, keys, hidden domains, reference bodies) readable
# by root only, and the results folder writable by root only.
#
# usage: scalelabs_lockdown.sh [AUTOGRADER_DIR [PACKAGE_DIR...]]
#   AUTOGRADER_DIR defaults to /autograder; PACKAGE_DIRs default to where the `python` on PATH
#   imports autograder, labs and reference from.
set -euo pipefail

ag="${1:-/autograder}"
[ "$#" -gt 0 ] && shift
if [ "$#" -eq 0 ]; then
    mapfile -t packages < <(python -c 'from autograder.course import package_dirs
print("\n".join(map(str, package_dirs())))')
    set -- "${packages[@]}"
fi

for path in "$ag/source" "$@"; do
    if [ ! -e "$path" ]; then
        echo "scalelabs lockdown: $path does not exist" >&2
        exit 1
    fi
    chown -R root:root "$path"
    chmod -R go-rwx "$path"
done
if [ -d "$ag/results" ]; then
    chown root:root "$ag/results"
    chmod go-w "$ag/results"
fi
echo "scalelabs lockdown: $ag/source and $* readable by root only"
