#!/usr/bin/env bash
# Checks the release artifacts the way a user meets them: on a fresh Debian 12 (bookworm)
# with no Rust, no C compiler and no build tools.
#
#   scripts/check-fresh-debian.sh [--keep] [--no-build] ROOT
#
# 1. Builds dist/ from this checkout (scripts/build-wheels.sh, scripts/build-release.sh;
#    --no-build takes dist/ as it is).
# 2. debootstraps a minimal bookworm into ROOT (a directory outside the repository that does
#    not exist yet): --variant=minbase plus only python3, python3-venv, ca-certificates and a
#    Java runtime (default-jre-headless, for the Spark tests).
# 3. In the chroot, as an unprivileged user: unpacks the command's archive and runs
#    `simhash-store --version`, `simhash-store demo` and a load/query round trip; makes a
#    venv, times `pip install --only-binary :all:` of the manylinux2014 wheel, installs the
#    test extras from PyPI and runs the whole Python suite (python/tests, Spark, Ray and
#    datatrove included) against the installed wheel, with the archive's binary as the
#    command the tests compare with.
# 4. Unmounts and deletes ROOT (unless --keep).
#
# Not run by CI. Needs: root (debootstrap, chroot, mount), debootstrap (apt-get install
# debootstrap), network access to deb.debian.org and PyPI, about 2.5 GB free in ROOT while it
# runs (the system 0.5 GB, the venv with pyspark and ray 1.3 GB, pip's cache). Takes about 10
# minutes on 2 quiet cores with a warm release target directory (builds 1-2 minutes,
# debootstrap 1-2, the test extras 1, the Python suite 3-4), up to 35 on a busy machine;
# add 10+ minutes for RocksDB when the release target directory is cold.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keep=0
build=1
root=
for arg in "$@"; do
  case $arg in
    --keep) keep=1 ;;
    --no-build) build=0 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-fresh-debian: unknown option $arg" >&2; exit 2 ;;
    *) root=$arg ;;
  esac
done
if [ -z "$root" ]; then
  echo "usage: scripts/check-fresh-debian.sh [--keep] [--no-build] ROOT" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "check-fresh-debian: needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi
command -v debootstrap >/dev/null || {
  echo "check-fresh-debian: debootstrap is missing: apt-get install debootstrap" >&2
  exit 1
}
root=$(realpath -m "$root")
case $root/ in
  "$repo"/*) echo "check-fresh-debian: $root is inside the repository: give a directory outside it" >&2; exit 1 ;;
esac
if [ -e "$root" ]; then
  echo "check-fresh-debian: $root exists: give a directory that does not" >&2
  exit 1
fi

say() { echo "check-fresh-debian: $*" >&2; }
now() { date +%s.%N; }
since() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$(now)"; }

mounts=()
cleanup() {
  local m
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[i]}
    mountpoint -q "$m" && umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  if [ "$keep" = 0 ] && [ -d "$root" ]; then
    if findmnt -rn -o TARGET | grep -q "^$root"; then
      say "not deleting $root: something is still mounted under it"
      return
    fi
    rm -rf --one-file-system "$root"
    say "deleted $root"
  elif [ -d "$root" ]; then
    say "kept $root ($(du -sh --one-file-system "$root" | cut -f1))"
  fi
}
trap cleanup EXIT

# 1. The artifacts.
if [ "$build" = 1 ]; then
  start=$(now)
  scripts/build-wheels.sh
  scripts/build-release.sh
  say "built dist/ in $(since "$start") s"
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
wheel=$(ls dist/simhash_store-"$version"-*manylinux2014_x86_64*.whl)
archive=dist/simhash-store-$version-x86_64-unknown-linux-gnu.tar.gz
[ -f "$archive" ] || { say "$archive is missing: run scripts/build-release.sh"; exit 1; }
say "wheel $(basename "$wheel"): $(stat -c %s "$wheel") bytes"
say "archive $(basename "$archive"): $(stat -c %s "$archive") bytes"

# 2. The fresh system.
start=$(now)
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,default-jre-headless \
  bookworm "$root" http://deb.debian.org/debian >"$root.debootstrap.log" 2>&1 || {
  tail -n 30 "$root.debootstrap.log" >&2
  exit 1
}
rm -f "$root.debootstrap.log"
say "debootstrap (minbase + python3, python3-venv, ca-certificates, default-jre-headless) took $(since "$start") s, $(du -sh --one-file-system "$root" | cut -f1)"
chroot "$root" apt-get clean
for tool in cc gcc c++ g++ clang cargo rustc ld make; do
  if chroot "$root" sh -c "command -v $tool" >/dev/null; then
    say "the fresh system has $tool"
    exit 1
  fi
done

mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount -t sysfs sysfs "$root/sys" && mounts+=("$root/sys")
mount --bind /dev "$root/dev" && mounts+=("$root/dev")
# Its own /dev/shm (Ray's object store and Python's multiprocessing live there).
mount -t tmpfs -o size=4g,mode=1777 shm "$root/dev/shm" && mounts+=("$root/dev/shm")
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# The host name resolves, as the installer sets it up (Spark looks its own address up).
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
  "$(hostname)" >"$root/etc/hosts"
chroot "$root" useradd -m -s /bin/bash user
# The host's local certificate authorities (a network that inspects TLS, as this script's
# own machine has), installed as an administrator would; pip is pointed at the system's
# bundle, which then holds them.
user_env=()
shopt -s nullglob
local_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
if [ ${#local_cas[@]} -gt 0 ]; then
  cp "${local_cas[@]}" "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null
  user_env=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  say "installed ${#local_cas[@]} local certificate authorities of the host"
fi
home=$root/home/user
mkdir -p "$home/dist" "$home/src"
cp "$wheel" "$archive" "$home/dist/"
# The sources of this checkout, for the tests and the documents they read (the package is
# imported from the venv, not from here).
git archive HEAD | tar -x -C "$home/src"
chroot "$root" chown -R user:user /home/user

# 3. As a user would: a shell in the chroot, unprivileged.
as_user() {
  chroot --userspec=user:user "$root" env -i HOME=/home/user PATH=/usr/local/bin:/usr/bin:/bin \
    LANG=C.UTF-8 "${user_env[@]}" "$@"
}

say "the archive"
as_user bash -euo pipefail -c '
cd ~
tar -xzf dist/simhash-store-*-x86_64-unknown-linux-gnu.tar.gz
bin=$(ls -d ~/simhash-store-*-x86_64-unknown-linux-gnu)/simhash-store
ls $(dirname $bin) $(dirname $bin)/completions
$bin --version
$bin demo
mkdir docs
for i in 1 2 3; do
  echo "the storage engine keeps a write ahead log and flushes the memtable to level zero files number $i" > docs/page$i.txt
done
echo "a completely different document about gardening tomatoes and watering them in the summer" > docs/other.txt
$bin load docs --store pages.db --quiet
$bin query --store pages.db --text "the storage engine keeps a write ahead log and flushes the memtable to level zero files number 1" -k 8 --json | tee query.json
python3 - <<PY
import json
found = json.load(open("query.json"))
text = json.dumps(found)
assert "page1.txt" in text and "other.txt" not in text, text
print("check-fresh-debian: the query found page1.txt and not other.txt")
PY
$bin verify --store pages.db
'

say "the wheel"
as_user bash -euo pipefail -c '
cd ~
python3 -m venv venv
. venv/bin/activate
python -m pip install -q --upgrade pip
wheel=$(ls dist/simhash_store-*.whl)
start=$(date +%s.%N)
python -m pip install -q --only-binary :all: "$wheel"
end=$(date +%s.%N)
python -c "import sys; print(f\"check-fresh-debian: pip install --only-binary :all: {sys.argv[1]} took {float(sys.argv[3]) - float(sys.argv[2]):.1f} s\")" "${wheel##*/}" $start $end
python -m pip list 2>/dev/null | grep -i -E "^(simhash-store|numpy) "
python -c "import simhash_store, sysconfig; assert simhash_store.__file__.startswith(sysconfig.get_paths()[\"purelib\"]); print(simhash_store.__version__, simhash_store.__file__)"
start=$(date +%s.%N)
python -m pip install -q "${wheel}[test,spark,ray,datatrove]"
end=$(date +%s.%N)
python -c "import sys; print(f\"check-fresh-debian: the test extras took {float(sys.argv[2]) - float(sys.argv[1]):.1f} s\")" $start $end
du -sh venv
cd src
SIMHASH_STORE_BIN=$(ls -d ~/simhash-store-*-x86_64-unknown-linux-gnu)/simhash-store \
  python -m pytest -q -p no:cacheprovider python/tests
'
say "all checks passed"
