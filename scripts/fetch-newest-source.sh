#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Download the newest linux-source-7.* that Debian's unstable / trixie-backports suites carry,
# without touching the machine's own apt configuration: the sources entry is generated here from
# the machine's own Debian archive entry (same URI and keyring, other suites) and used with a
# private lists directory.
#
# Usage: fetch-newest-source.sh OUTDIR
# Leaves OUTDIR/linux-source.tar.xz and OUTDIR/version (package=version); prints the version.
set -euo pipefail

out=${1:?usage: fetch-newest-source.sh OUTDIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The machine's Debian archive entry: URI and keyring of the suite that carries "main".
uri= keyring=
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	u=$(awk '/^URIs:/ {print $2; exit}' "$f")
	case "$u" in
	*/debian) uri=$u; keyring=$(awk '/^Signed-By:/ {print $2; exit}' "$f"); break ;;
	esac
done
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
	uri=$(awk '$1 == "deb" && $0 ~ /\/debian[ \/]/ && $0 !~ /security/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
fi
[ -n "$uri" ] || { echo "fetch-newest: no Debian archive entry in /etc/apt" >&2; exit 1; }
[ -n "$keyring" ] || keyring=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$work/sources.d" "$work/lists/partial" "$work/cache/archives/partial"
cat >"$work/sources.d/newest.sources" <<EOF
Types: deb
URIs: $uri
Suites: unstable trixie-backports
Components: main
Signed-By: $keyring
EOF

apt_opts=(
	-o Dir::Etc::SourceList=/dev/null
	-o Dir::Etc::SourceParts="$work/sources.d"
	-o Dir::State::Lists="$work/lists"
	-o Dir::Cache="$work/cache"
	-o APT::Architectures::=amd64
	-o Acquire::Languages=none
	-o APT::Sandbox::User=root
)
apt-get "${apt_opts[@]}" -qq update >&2

# Highest version of any linux-source-7.N package.
best=
for pkg in $(apt-cache "${apt_opts[@]}" pkgnames linux-source-7. | grep -E '^linux-source-7\.[0-9]+$'); do
	for ver in $(apt-cache "${apt_opts[@]}" madison "$pkg" | awk -F'|' '{gsub(/ /, "", $2); print $2}'); do
		if [ -z "$best" ] || dpkg --compare-versions "$ver" gt "${best#*=}"; then
			best="$pkg=$ver"
		fi
	done
done
[ -n "$best" ] || { echo "fetch-newest: no linux-source-7.* in unstable/trixie-backports" >&2; exit 1; }
echo "fetch-newest: using $best" >&2

(cd "$work" && apt-get "${apt_opts[@]}" -qq download "$best" >&2)
dpkg-deb -x "$work"/linux-source-*.deb "$work/x"
mv "$work"/x/usr/src/linux-source-*.tar.xz "$out/linux-source.tar.xz"
echo "$best" >"$out/version"
echo "$best"
