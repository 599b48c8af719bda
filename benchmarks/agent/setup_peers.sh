#!/usr/bin/env bash
# Create the virtual envs the agent benchmark's peers run from, one per peer, apart from conch's.
#
#     benchmarks/agent/setup_peers.sh [DIR]     (default: ~/.cache/conch-bench/agent-peers)
#
# DIR/smolagents gets smolagents (with its OpenAI-compatible model class), DIR/llm gets llm,
# each at the version the benchmark was run with. Idempotent: a venv that already has its
# pinned versions is left as it is. PYTHON selects the interpreter (default: python3.11, else
# python3). CONCH_AGENT_PEERS names DIR for the benchmark as well as for this script.
set -euo pipefail

root="${1:-${CONCH_AGENT_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/conch-bench/agent-peers}}"

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    python="$(command -v python3.11 || command -v python3)"
fi

# venv name -> pinned requirements (the first one is the peer itself)
declare -A PEERS=(
    [smolagents]="smolagents[openai]==1.26.0"
    [llm]="llm==0.36"
)

has_pins() {
    local venv="$1" spec name version
    shift
    for spec in "$@"; do
        name="${spec%%==*}"
        name="${name%%[*}"
        version="${spec##*==}"
        [[ "$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')" == "$version" ]] ||
            return 1
    done
}

for name in smolagents llm; do
    venv="$root/$name"
    # shellcheck disable=SC2206
    specs=(${PEERS[$name]})
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "creating $venv with $("$python" --version 2>&1)"
        mkdir -p "$root"
        "$python" -m venv "$venv"
    fi
    if has_pins "$venv" "${specs[@]}"; then
        echo "$name already installed in $venv"
    else
        "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "${specs[@]}"
    fi
done

"$root/smolagents/bin/python" -c "import smolagents, openai; print('smolagents', smolagents.__version__, 'openai', openai.__version__)"
"$root/llm/bin/python" -c "import importlib.metadata as m; print('llm', m.version('llm'), 'openai', m.version('openai'))"
echo "agent peers ready: $root"
