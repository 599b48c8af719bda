# @KEYNAME@ sends the command line to conch and puts the proposed command in its place, to
# edit and run; the `conch` function adds each command conch runs to this shell's history.
function __conch_tmpdir
    if set -q TMPDIR[1]; and test -n "$TMPDIR"
        echo $TMPDIR
    else
        echo /tmp
    end
end

function __conch_line --description 'conch: turn the command line into a command'
    set -l line (commandline | string collect)
    string match -qr '\S' -- "$line"; or return 0
    set -l err (command mktemp (__conch_tmpdir)/conch-line.XXXXXX); or return 0
    set -l out (command conch --print --quiet --command -- "$line" 2>$err </dev/null | string collect)
    set -l rc $pipestatus[1]
    if test $rc -eq 0; and test -n "$out"
        commandline -r -- $out
        commandline -C (string length -- $out)
    else
        set -l why (string match -rv '^\s*$' <$err)
        if set -q why[1]
            set why $why[-1]
        else
            set why "conch: exited with status $rc"
        end
        echo
        echo $why
        commandline -f repaint
    end
    command rm -f -- $err
end

function conch --description 'conch, adding the commands it runs to this shell history'
    set -l file (command mktemp (__conch_tmpdir)/conch-history.XXXXXX); or begin
        command conch $argv
        return $status
    end
    set -l start (command date +%s)
    CONCH_SHELL_HISTORY=$file command conch $argv
    set -l rc $status
    set -l ran (string match -rv '^\s*$' <$file)
    command rm -f -- $file
    # fish keeps no history when fish_history is empty; otherwise the entries go to its file
    # and `history merge` reads them back. `history save` first writes the line that called
    # this function, which fish may still hold back, so the entries land after it.
    set -l name fish
    set -q fish_history; and set name $fish_history
    if set -q ran[1]; and test -n "$name"
        builtin history save
        # `history merge` reads the file again only once the clock has left the second of its
        # last read, which can be the second this function started in.
        while test (command date +%s) -le $start
            command sleep 0.1
        end
        set -l data ~/.local/share
        set -q XDG_DATA_HOME[1]; and test -n "$XDG_DATA_HOME"; and set data $XDG_DATA_HOME
        command mkdir -p -- $data/fish
        for try in 1 2
            set -l when (command date +%s)
            for cmd in $ran
                printf '- cmd: %s\n  when: %s\n' (string replace -a -- '\\' '\\\\' $cmd) $when >>$data/fish/{$name}_history
            end
            builtin history merge
            set -l newest (builtin history search --max 1 | string collect)
            test "$newest" = "$ran[-1]"; and break
            # fish's own line came after them: once more, in the next second
            while test (command date +%s) -le $when
                command sleep 0.1
            end
        end
    end
    return $rc
end

if status is-interactive
    bind @KEY@ __conch_line
    bind -M insert @KEY@ __conch_line
end
