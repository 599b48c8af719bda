#!/usr/bin/env bash
# Create the virtual env the peer tools run from, separate from conch's own.
#
#     benchmarks/accuracy/setup_peers.sh [VENV]     (default: benchmarks/.work/peers-venv)
#
# Installs the peers from their own PyPI packages at the versions the benchmark was run with.
# Idempotent: an existing venv that already has these versions is left as it is.
# PYTHON selects the interpreter (default: python3.11, else python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-$repo/benchmarks/.work/peers-venv}"

PEERS=(
    "shell-gpt==1.5.1"
    "llm==0.32.1"
    "llm-cmd==0.2a0"
)

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    python="$(command -v python3.11 || command -v python3)"
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating $venv with $("$python" --version 2>&1)"
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
fi

installed() {
    local spec name version
    for spec in "${PEERS[@]}"; do
        name="${spec%%==*}"
        version="${spec##*==}"
        [[ "$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')" == "$version" ]] ||
            return 1
    done
}

if installed; then
    echo "peers already installed in $venv"
else
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "${PEERS[@]}"
fi

"$venv/bin/python" -m pip show shell-gpt llm llm-cmd 2>/dev/null | sed -n 's/^\(Name\|Version\): //p' |
    paste - - | sed 's/\t/ /'
test -x "$venv/bin/sgpt" && test -x "$venv/bin/llm"
# find_spec only: importing sgpt would read (and create) the user's own sgpt config.
"$venv/bin/python" -c "import importlib.util as u; assert u.find_spec('llm_cmd') and u.find_spec('sgpt')"
echo "peers ready: $venv"
