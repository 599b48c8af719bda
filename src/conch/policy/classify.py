"""Risk classes per program, with the sub-commands and flags that change them."""

from __future__ import annotations

from enum import StrEnum

from conch.policy.model import Invocation, Redirect
from conch.policy.wrappers import SHELLS, is_interpreter


class Risk(StrEnum):
    """What running a command can do, from harmless to dangerous."""

    READ_ONLY = "read-only"
    WRITES = "writes"
    DESTRUCTIVE = "destructive"
    PRIVILEGED = "privileged"
    NETWORK = "network"
    UNKNOWN = "unknown"


# Network can leak data or fetch code, so it outranks local writes; an unknown program could
# be anything, but destroying data or acting as root are worse than "could be anything".
RISK_ORDER: tuple[Risk, ...] = (
    Risk.READ_ONLY,
    Risk.WRITES,
    Risk.NETWORK,
    Risk.UNKNOWN,
    Risk.DESTRUCTIVE,
    Risk.PRIVILEGED,
)


def highest(risks: list[Risk]) -> Risk:
    """The most severe of ``risks`` (read-only when empty)."""
    return max(risks, key=RISK_ORDER.index, default=Risk.READ_ONLY)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


READ_ONLY = _names(
    "ls cat head tail grep egrep fgrep rg ag ack wc du df sort uniq cut awk gawk mawk nawk sed "
    "jq yq echo printf pwd which whereis type stat file ps pgrep pidof top htop date cal whoami "
    "id groups uname hostname uptime free printenv tree less more most diff cmp comm basename "
    "dirname realpath readlink test [ true false seq tr rev fold fmt nl od xxd hexdump strings "
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum cksum b2sum base64 base32 column "
    "paste join expand unexpand look lsblk lscpu lsusb lspci lsmod lsof locale tty nproc getconf "
    "man info apropos whatis sleep wait tac shuf numfmt factor bc dc expr zcat bzcat xzcat zgrep "
    "zless bat fd fzf dmesg journalctl last lastlog w who users getent env ip ifconfig ss netstat "
    "route arp vmstat iostat mpstat free lsattr zipinfo find xargs time nohup nice ionice stdbuf "
    "timeout command builtin exec watch busybox toybox eval export declare typeset local readonly "
    "unset alias set shopt history hash cd pushd popd dirs jobs : yes iconv csvlook column "
    "setsid unbuffer flock help coproc parallel sem"
)
WRITES = _names(
    "touch mkdir cp mv tee ln chmod chown chgrp install mktemp mkfifo split csplit patch zip unzip "
    "gzip gunzip bzip2 bunzip2 xz unxz zstd 7z rar unrar tar cpio ssh-keygen vim vi nvim nano "
    "emacs ed code crontab sponge rename renice"
)
DESTRUCTIVE = _names(
    "rm rmdir unlink shred truncate dd wipe srm kill pkill killall xkill fallocate mkfs mke2fs "
    "wipefs mkswap fdisk sfdisk parted"
)
PRIVILEGED = _names(
    "sudo doas su pkexec runuser sudoedit systemctl service mount umount swapon swapoff modprobe "
    "insmod rmmod useradd userdel usermod groupadd groupdel passwd chpasswd visudo shutdown "
    "reboot poweroff halt init telinit iptables ip6tables nft ufw firewall-cmd dpkg rpm snap "
    "chroot hostnamectl timedatectl setenforce chattr launchctl sysctl docker podman "
    "kubectl losetup cryptsetup"
)
NETWORK = _names(
    "curl wget ssh scp sftp rsync nc ncat netcat socat telnet ftp tftp ping ping6 traceroute "
    "tracepath mtr dig nslookup host whois nmap http https xh aria2c lynx w3m links mail "
    "sendmail openssl gh"
)
_PACKAGE_MANAGERS = _names("apt apt-get aptitude dnf yum pacman zypper apk emerge port")
_LANGUAGE_PACKAGERS = _names("pip pip3 pipx npm pnpm yarn cargo gem go brew conda mamba uv bun")
_PACKAGE_READS = _names(
    "list search show info policy depends rdepends query -Q -Ss -Si -Qi freeze check outdated "
    "why view ls help --version -V version env"
)
_GIT_READ = _names(
    "status log diff show branch rev-parse ls-files ls-tree blame describe grep shortlog "
    "reflog cat-file show-ref tag remote config help version whatchanged"
)
_GIT_NETWORK = _names("clone pull push fetch ls-remote submodule")
_GIT_DESTRUCTIVE = _names("clean gc prune filter-branch")
_DOCKER_READ = _names("ps images logs inspect version info top stats port history")
_WRITE_FLAGS = ("-i", "--in-place")


def _subcommand(inv: Invocation) -> str | None:
    """The first literal operand, skipping options and ``-C dir``/``-c k=v`` style pairs."""
    texts = inv.texts()
    i = 0
    while i < len(texts):
        text = texts[i]
        if text is None:
            return None
        if text in ("-C", "-c", "--git-dir", "--work-tree", "-H", "--context", "-n"):
            i += 2
            continue
        if not text.startswith("-"):
            return text
        i += 1
    return None


def _git(inv: Invocation) -> Risk:
    sub = _subcommand(inv)
    texts = [t for t in inv.texts() if t is not None]
    if sub in _GIT_NETWORK:
        return Risk.NETWORK
    if sub in _GIT_DESTRUCTIVE or (sub == "reset" and "--hard" in texts):
        return Risk.DESTRUCTIVE
    if sub == "branch" and any(t in ("-D", "-d", "--delete") for t in texts):
        return Risk.DESTRUCTIVE
    if sub == "stash" and any(t in ("drop", "clear") for t in texts):
        return Risk.DESTRUCTIVE
    if sub in ("checkout", "restore") and any(t in (".", "--", "-f", "--force") for t in texts):
        return Risk.DESTRUCTIVE
    if sub == "remote" and len(texts) > 1 and texts[-1] not in ("-v", "show"):
        return Risk.WRITES
    if (
        sub in ("branch", "tag", "config")
        and len(texts) > 1
        and not any(
            t in ("-l", "--list", "-a", "-r", "-v", "--get", "--show-current") for t in texts
        )
    ):
        return Risk.WRITES
    return Risk.READ_ONLY if sub in _GIT_READ or sub is None else Risk.WRITES


def _packages(inv: Invocation) -> Risk:
    sub = _subcommand(inv)
    if sub in _PACKAGE_READS or (sub is None and inv.name in _PACKAGE_MANAGERS):
        return Risk.READ_ONLY
    if inv.name in _PACKAGE_MANAGERS:
        return Risk.PRIVILEGED
    if sub in ("uninstall", "remove", "rm", "cache", "clean"):
        return Risk.WRITES
    if sub in ("run", "exec", "test", "build", "x", "start", "dlx"):
        return Risk.UNKNOWN  # runs project scripts
    return Risk.NETWORK


def classify(inv: Invocation) -> Risk:
    """The risk of one invocation; wrappers are judged on their own, not on what they wrap."""
    name = inv.name
    if name is None or name == "":
        return Risk.UNKNOWN
    texts = [t for t in inv.texts() if t is not None]
    if name == "git":
        return _git(inv)
    if name in _PACKAGE_MANAGERS or name in _LANGUAGE_PACKAGERS:
        return _packages(inv)
    if name in ("docker", "podman"):
        return Risk.READ_ONLY if _subcommand(inv) in _DOCKER_READ else Risk.PRIVILEGED
    if name == "find":
        if "-delete" in texts:
            return Risk.DESTRUCTIVE
        if any(t.startswith(("-fprint", "-fls")) for t in texts):
            return Risk.WRITES
        return Risk.READ_ONLY
    if name == "sed" or name in ("awk", "gawk", "mawk", "nawk"):
        if any(t in _WRITE_FLAGS or t.startswith("-i") or t == "inplace" for t in texts):
            return Risk.WRITES
        if name != "sed" and any("system(" in t or "|" in t or ">" in t for t in texts):
            return Risk.UNKNOWN  # awk can run commands and write files itself
        return Risk.READ_ONLY
    if name == "sort" and any(t.startswith(("-o", "--output")) for t in texts):
        return Risk.WRITES
    if name == "tee":
        return Risk.WRITES if any(not t.startswith("-") for t in texts) else Risk.READ_ONLY
    if name == "tar":
        first = texts[0] if texts else ""
        listing = "t" in first.lstrip("-") or "--list" in texts
        return Risk.READ_ONLY if listing else Risk.WRITES
    if name == "unzip" and "-l" in texts:
        return Risk.READ_ONLY
    if name in ("sysctl",) and not any(t.startswith("-w") or "=" in t for t in texts):
        return Risk.READ_ONLY
    if name == "crontab" and "-l" in texts:
        return Risk.READ_ONLY
    if name == "crontab" and "-r" in texts:
        return Risk.DESTRUCTIVE
    if name == "rsync":
        return Risk.NETWORK if any(":" in t for t in texts) else Risk.WRITES
    if name == "hostname" and texts and not texts[0].startswith("-"):
        return Risk.PRIVILEGED  # sets the hostname
    if name == "date" and any(t in ("-s", "--set") or t.isdigit() for t in texts):
        return Risk.PRIVILEGED  # sets the clock
    if name == "env" and texts:
        return Risk.READ_ONLY  # the wrapped command is judged separately
    if name in ("xargs", "parallel", "sem") and _unbounded(texts):
        return Risk.UNKNOWN  # as many processes at once as there is input: a fork bomb
    if name in SHELLS:
        # With -c the code itself was parsed and is judged command by command.
        runs_string = _dash_c(texts) and any(not t.startswith("-") for t in texts)
        return Risk.READ_ONLY if runs_string else Risk.UNKNOWN
    if is_interpreter(name):
        return Risk.UNKNOWN
    for table, risk in (
        (READ_ONLY, Risk.READ_ONLY),
        (WRITES, Risk.WRITES),
        (DESTRUCTIVE, Risk.DESTRUCTIVE),
        (PRIVILEGED, Risk.PRIVILEGED),
        (NETWORK, Risk.NETWORK),
    ):
        if name in table:
            return risk
    if name.startswith("mkfs"):
        return Risk.DESTRUCTIVE
    return Risk.UNKNOWN


def _unbounded(texts: list[str]) -> bool:
    """``xargs -P 0`` / ``parallel -j 0``: no limit on processes running at once."""
    for i, text in enumerate(texts):
        value = None
        if text in ("-P", "-j", "--max-procs", "--jobs") and i + 1 < len(texts):
            value = texts[i + 1]
        elif text.startswith(("-P", "-j")) and not text.startswith("--"):
            value = text[2:]
        elif text.startswith(("--max-procs=", "--jobs=")):
            value = text.split("=", 1)[1]
        if value is not None and value.strip("0") == "" and value != "":
            return True
    return False


def _dash_c(texts: list[str]) -> bool:
    return any(t.startswith("-") and not t.startswith("--") and "c" in t for t in texts)


def redirect_risk(redirect: Redirect) -> Risk:
    """Writing to a file is a write; reading or writing the usual devices is not."""
    target = redirect.target.text
    if not redirect.writes or target in _HARMLESS_DEVICES:
        return Risk.READ_ONLY
    return Risk.WRITES


_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"}
)
