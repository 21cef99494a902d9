#!/usr/bin/env bash
# Proves a set-up command on a clean Debian 12: debootstraps a fresh root into
# DIR (default /var/tmp/octet-clean-room), copies the committed tree (git
# archive of HEAD) and ../shared/data/cifar10 into it, and runs
# `tools/setup.sh MODE` there as root, which installs what that mode needs and
# nothing else. Needs root and Debian's debootstrap; MODE defaults to core (the
# build without LibTorch).
#   tools/clean_room.sh [MODE] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-core}
root=${2:-/var/tmp/octet-clean-room}
[ "$(id -u)" -eq 0 ] || { echo "clean_room.sh: run as root (debootstrap and chroot need it)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "clean_room.sh: install debootstrap first" >&2; exit 1; }
[ ! -e "$root" ] || { echo "clean_room.sh: $root exists; remove it or name another folder" >&2; exit 1; }

cleanup() { umount "$root/proc" 2>/dev/null || true; }
trap cleanup EXIT

echo "clean_room: debootstrap bookworm into $root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
mkdir -p "$root/work/octet" "$root/work/shared/data"
git archive HEAD | tar -x -C "$root/work/octet"
if [ -d ../shared/data/cifar10 ]; then cp -r ../shared/data/cifar10 "$root/work/shared/data/"; fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
echo "clean_room: tools/setup.sh $mode in the fresh root"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  bash -c "cd /work/octet && tools/setup.sh $mode"
echo "clean_room: installed in the fresh root, LibTorch packages among them:"
chroot "$root" dpkg-query -W -f='${Package}\n' 'libtorch*' 'python3-torch' 2>/dev/null || echo "  none"
