"""Catastrophic commands carried inside other commands' words are denylisted in every mode:
a shell string handed to a terminal, a multiplexer, a remote shell or a relay; a variable a
program runs; an argv list in interpreter code; the arguments after ``sh -c``'s script; a
directory reached by climbing or named with ``-t``. The same shapes carrying harmless work
are not. Data only: every command here reaches ``assess``, which runs nothing."""

from __future__ import annotations

import pytest

from conch.policy import Decision, ExecutionMode, PolicyContext, assess

EVERY_MODE = (
    PolicyContext(),
    PolicyContext(mode=ExecutionMode.FULL),
    PolicyContext(mode=ExecutionMode.INTERACTIVE),
    PolicyContext(unsafe=True),
    PolicyContext(unsafe=True, mode=ExecutionMode.FULL),
)

CARRIED = [
    # handed over as one argument
    "tmux new-session -d 'rm -rf /'",
    "screen -X stuff 'rm -rf ~'",
    "xterm -e 'rm -rf ~'",
    "ssh -p 22 me@host 'rm -rf ~'",
    "ssh host rm -rf /",
    "docker exec box sh -c 'rm -rf /'",
    "kubectl exec pod -- rm -rf /",
    "socat - EXEC:'rm -rf ~'",
    "ncat -l 9 --sh-exec 'rm -rf ~'",
    "vim -c '!rm -rf ~' -c q",
    "gdb -batch -ex 'shell rm -rf ~'",
    "make -f /dev/null --eval='x: ; rm -rf ~' x",
    # a variable the program runs
    "PAGER='rm -rf ~' man ls",
    "env EDITOR='rm -rf /' crontab -e",
    # argv written in code
    'python3 -c \'import subprocess; subprocess.run(["rm", "-rf", "/"])\'',
    'node -e \'require("child_process").spawnSync("rm", ["-rf", "~"])\'',
    "ruby -e '%x(rm -rf ~)'",
    # positional parameters of sh -c
    "sh -c 'rm -rf \"$1\"' _ ~",
    "bash -c 'rm -rf $@' x /",
    # spellings and reach
    "rm --rec --for ~",
    "rm -rf ${UNSET:-/}",
    "rsync -a --delete-before empty/ $HOME/",
    "cd ..; cd ..; rm -rf *",
    "cd && find -delete",
    "cp -t /etc /tmp/passwd",
    "shred -u ~/*",
    "find ~ -type f | xargs shred -u",
    "rm -rf $(ls -d /*)",
    "srm -r ~",
    "chattr -R +i /",
    "hdparm --security-erase NULL /dev/sda",
    "echo b > /proc/sysrq-trigger",
    # system files changed by code, compressors, globs and braces; find's hidden action
    "python3 -c \"open('/etc/shadow', 'w').close()\"",
    "python3 -c \"import pathlib; pathlib.Path('/etc/passwd').write_text('')\"",
    "emacs -Q --batch --eval '(delete-file \"/etc/passwd\")'",
    "perl -e 'unlink glob \"/etc/*\"'",
    "gzip /etc/passwd",
    "xz -r /usr",
    "cp /dev/null /e?c/p?ss?d",
    "mv /etc/passwd{,.bak}",
    "find / $(echo -delete)",
]

HARMLESS = [
    "tmux new-session -d 'htop'",
    "ssh host 'ls -la ~'",
    "PAGER='less -R' man ls",
    "env EDITOR=vim crontab -l",
    'python3 -c \'import subprocess; subprocess.run(["ls", "-la"])\'',
    "sh -c 'ls \"$1\"' _ ~",
    "cd ..; ls",
    "cp -t build/ src/a.txt",
    "shred -u secrets/*",
    "rm -rf $(ls -d build/*)",
    "git commit -m 'fix the docs'",
    "python3 -c \"print(open('/etc/passwd').read())\"",
    "gzip -c /etc/hosts",
    "gzip notes.txt",
    'find / -name "$NAME" -print',
]


@pytest.mark.parametrize("command", CARRIED)
def test_a_carried_catastrophe_is_denylisted_in_every_mode(command: str) -> None:
    for context in EVERY_MODE:
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT, (command, context)
        assert verdict.denylisted, (command, context, verdict.reasons)


@pytest.mark.parametrize("command", HARMLESS)
def test_the_same_shapes_carrying_harmless_work_are_not_denylisted(command: str) -> None:
    for context in EVERY_MODE:
        assert not assess(command, context).denylisted, (command, context)


def test_arguments_after_the_script_are_read_as_its_positional_parameters() -> None:
    # The script reads "$1": what it lists is the argument given, so the command is read-only.
    verdict = assess("sh -c 'ls \"$1\"' _ docs", PolicyContext())
    assert verdict.decision is Decision.ALLOW, verdict.reasons
