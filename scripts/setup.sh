#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build simhash-store: libclang (RocksDB's
# bindgen needs it), a C++ compiler, and for the Python package and its Spark tests Python's
# venv module and a Java runtime. Safe to run again: it installs only what is missing.
set -euo pipefail

need=()
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s libclang-dev >/dev/null 2>&1; then
  need+=(libclang-dev)
fi
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
else
  need+=(python3 python3-venv)
fi

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup: run as root or install: ${need[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust (https://rustup.rs), then run this again" >&2
  exit 1
fi
