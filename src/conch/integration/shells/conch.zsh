# @KEYNAME@ sends the command line to conch and puts the proposed command in its place, to
# edit and run; the `conch` function adds each command conch runs to this shell's history.
function __conch_line {
    [[ -z ${BUFFER//[[:space:]]/} ]] && return 0
    local __conch_err __conch_out __conch_rc __conch_why __conch_l
    __conch_err=$(command mktemp "${TMPDIR:-/tmp}/conch-line.XXXXXX") || return 0
    zle -R "conch: working on it..."
    __conch_out=$(command conch --print --quiet --command -- "$BUFFER" 2>|"$__conch_err" </dev/null)
    __conch_rc=$?
    if (( __conch_rc == 0 )) && [[ -n $__conch_out ]]; then
        BUFFER=$__conch_out
        CURSOR=${#BUFFER}
        zle -R
    else
        while IFS= read -r __conch_l || [[ -n $__conch_l ]]; do
            [[ -n ${__conch_l//[[:space:]]/} ]] && __conch_why=$__conch_l
        done <"$__conch_err"
        zle -M "${__conch_why:-conch: exited with status $__conch_rc}"
    fi
    command rm -f -- "$__conch_err"
}

function conch {
    local __conch_file __conch_rc __conch_cmd
    __conch_file=$(command mktemp "${TMPDIR:-/tmp}/conch-history.XXXXXX") || {
        command conch "$@"
        return
    }
    CONCH_SHELL_HISTORY=$__conch_file command conch "$@"
    __conch_rc=$?
    while IFS= read -r __conch_cmd || [[ -n $__conch_cmd ]]; do
        [[ -n $__conch_cmd ]] && print -s -r -- "$__conch_cmd"
    done <"$__conch_file"
    command rm -f -- "$__conch_file"
    return $__conch_rc
}

if [[ -o interactive ]]; then
    zle -N __conch_line
    bindkey -M emacs '@KEY@' __conch_line
    bindkey -M viins '@KEY@' __conch_line
fi
