#!/usr/bin/env bash
# Print the path of a Python 3.12 interpreter (Isaac Lab 3.0 needs exactly 3.12), or explain how to get one.
# Order: $PYTHON, python3.12 on PATH, pyenv, uv-managed Pythons.
set -euo pipefail

is312() { [ -x "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; }

candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
command -v python3.12 >/dev/null 2>&1 && candidates+=("$(command -v python3.12)")
if command -v pyenv >/dev/null 2>&1; then
    for dir in "$(pyenv root)"/versions/3.12*; do candidates+=("$dir/bin/python3.12"); done
fi
command -v uv >/dev/null 2>&1 && candidates+=("$(uv python find 3.12 2>/dev/null || true)")

for python in "${candidates[@]}"; do
    if is312 "$python"; then echo "$python"; exit 0; fi
done
cat >&2 <<'MSG'
error: no Python 3.12 found (Isaac Lab 3.0 requires Python >=3.12,<3.13).
Install one, then rerun, e.g. one of:
  uv python install 3.12            # https://docs.astral.sh/uv/
  pyenv install 3.12                # https://github.com/pyenv/pyenv
  sudo apt install python3.12-venv  # Ubuntu 24.04
or point PYTHON at an interpreter: PYTHON=/path/to/python3.12 scripts/setup.sh
MSG
exit 1
