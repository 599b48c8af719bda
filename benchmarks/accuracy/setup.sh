#!/bin/sh
# Debian packages the accuracy benchmark needs: bubblewrap for the sandbox, and the tools the
# tasks' original images had. Idempotent; run as root (or with sudo).
set -eu

PACKAGES="bubblewrap tree ncal cron bind9-dnsutils iputils-ping cpio hashdeep busybox"

missing=""
for package in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $package"
    fi
done

if [ -z "$missing" ]; then
    echo "all benchmark packages are installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

echo "installing:$missing"
$SUDO apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
