#!/usr/bin/env bash
# Installs what the local cluster's real nodes run besides the binaries built from
# Go modules (kubelet, kube-proxy, CNI plugins): containerd and runc from Debian's
# packages (kubelet 1.37 accepts Debian 12's containerd 1.6, which serves the CRI
# v1 API), iptables for kube-proxy's iptables mode (nf_tables backend), and
# nsenter and mount from util-linux and mount. Installs only what is missing, so a
# second run is a no-op; prints the versions in use.
#
# The packages' services are not what the nodes run: each node starts its own
# containerd with its own configuration, socket and state (where a distribution
# starts containerd.service on install, it keeps running beside them untouched).
set -euo pipefail

# command:package
wanted=(containerd:containerd containerd-shim-runc-v2:containerd ctr:containerd runc:runc
	iptables:iptables iptables-save:iptables nsenter:util-linux mount:mount)
missing=()
for w in "${wanted[@]}"; do
	command -v "${w%%:*}" > /dev/null || missing+=("${w##*:}")
done
if ((${#missing[@]} > 0)); then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	if [[ $(id -u) != 0 ]]; then
		echo "the real nodes need ${missing[*]}; run this as root to install them with apt-get" >&2
		exit 1
	fi
	if ! command -v apt-get > /dev/null; then
		echo "the real nodes need ${missing[*]} (Debian's package names); install them, then run this again" >&2
		exit 1
	fi
	echo "installing ${missing[*]} (Debian packages)" >&2
	start=$SECONDS
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; then
		# A fresh machine may have no package lists yet.
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	fi
	echo "installed ${missing[*]} in $((SECONDS - start))s" >&2
fi

# containerd's CRI plugin serves the v1 API from 1.6 on; older ones the kubelet refuses.
version=$(containerd --version | awk '{print $3}')
version=${version#v}
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
if ((major < 1 || (major == 1 && minor < 6))); then
	echo "containerd $version is older than 1.6, which the kubelet needs" >&2
	exit 1
fi
echo "containerd $version, $(runc --version | head -1), $(iptables --version)"
