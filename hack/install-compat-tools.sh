#!/usr/bin/env bash
# Installs the independent clients the compatibility tests (test/compat)
# drive against the cloud emulator, if they are missing:
#   - the AWS CLI (Debian package awscli; any `aws` on PATH is accepted),
#   - Node.js and npm (Debian packages nodejs, npm),
#   - the Tencent Cloud Node.js SDK, pinned in test/compat/node/package-lock.json
#     (npm ci into test/compat/node/node_modules, which git ignores);
# and containerd and runc (Debian packages containerd, runc), which the image
# tests (internal/images) import the images into and run them with. Nothing
# is started: the tests run containerd with directories of their own.
# Safe to run repeatedly; `make test` runs it before the tests.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node_dir="${repo_root}/test/compat/node"

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  fi
fi

# apt_install installs Debian packages, refreshing the package index only if
# the first attempt fails (a stale index is the usual reason).
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-compat-tools: apt-get is not available; install $* by hand" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Waits for another apt or dpkg run (a parallel install) instead of failing.
  local lock=(-o DPkg::Lock::Timeout=300)
  if ! "${sudo_cmd[@]}" apt-get install "${lock[@]}" -y --no-install-recommends "$@"; then
    "${sudo_cmd[@]}" apt-get update "${lock[@]}"
    "${sudo_cmd[@]}" apt-get install "${lock[@]}" -y --no-install-recommends "$@"
  fi
}

if ! command -v aws >/dev/null 2>&1; then
  echo "install-compat-tools: installing the AWS CLI (awscli)"
  apt_install awscli
fi
aws --version

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-compat-tools: installing Node.js and npm"
  apt_install nodejs npm
fi
node --version

# npm ci only when the installed SDK does not match the lock file.
stamp="${node_dir}/node_modules/.package-lock.json"
if [[ ! -f "${stamp}" || "${node_dir}/package-lock.json" -nt "${stamp}" || ! -d "${node_dir}/node_modules/tencentcloud-sdk-nodejs" ]]; then
  echo "install-compat-tools: installing the Tencent Cloud Node.js SDK (npm ci)"
  (cd "${node_dir}" && npm ci --no-audit --no-fund)
fi
echo "install-compat-tools: tencentcloud-sdk-nodejs $(cd "${node_dir}" && node -p 'require("tencentcloud-sdk-nodejs/package.json").version')"

if ! command -v containerd >/dev/null 2>&1 || ! command -v ctr >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
  echo "install-compat-tools: installing containerd and runc"
  apt_install containerd runc
fi
containerd --version
