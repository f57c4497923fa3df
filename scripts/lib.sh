# SPDX-License-Identifier: MIT
# Shared helpers for the build scripts: logging with elapsed time, steps that
# log to build/logs/, the cache directory, and the private apt configuration.
# Sourced, never executed.

NEURON_TOP=${NEURON_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NEURON_BUILD=${NEURON_BUILD:-$NEURON_TOP/build}
NEURON_LOGS=$NEURON_BUILD/logs
# Expensive outputs (QEMU build, guest root, kernel source extracts) live here,
# outside the clone, so a fresh clone on the same machine reuses them.
NEURON_CACHE=${NEURON_CACHE:-/var/cache/neuron-stack}
mkdir -p "$NEURON_LOGS" "$NEURON_CACHE"

: "${NEURON_T0:=$(date +%s)}"
export NEURON_T0

elapsed() {
	local s=$(( $(date +%s) - NEURON_T0 ))
	printf '%d:%02d' $((s / 60)) $((s % 60))
}

log() { printf '[%s] %s\n' "$(elapsed)" "$*"; }
die() { printf '[%s] error: %s\n' "$(elapsed)" "$*" >&2; exit 1; }

# step NAME LOG CMD...: run CMD with its output in $NEURON_LOGS/LOG, print one
# line when it starts and one when it ends (with its duration). On failure,
# show the log's tail and name the log, then exit non-zero.
step() {
	local name=$1 logf=$NEURON_LOGS/$2 t0 rc
	shift 2
	t0=$(date +%s)
	log "$name ..."
	rc=0
	"$@" >"$logf" 2>&1 </dev/null || rc=$?
	if [ $rc -ne 0 ]; then
		printf '[%s] error: %s failed (exit %d); last lines of %s:\n' \
			"$(elapsed)" "$name" "$rc" "$logf" >&2
		tail -n 25 "$logf" | sed 's/^/    /' >&2
		printf '[%s] error: %s failed; full log: %s\n' "$(elapsed)" "$name" "$logf" >&2
		exit $rc
	fi
	log "$name done in $(( $(date +%s) - t0 ))s"
}

# hash_inputs FILE|DIR|STRING...: a short hash of files' contents and strings,
# used to key cached outputs so that any change of inputs rebuilds them.
hash_inputs() {
	local a
	for a in "$@"; do
		if [ -d "$a" ]; then
			(cd "$a" && find . -type f -print0 | LC_ALL=C sort -z |
				xargs -0 sha256sum)
		elif [ -f "$a" ]; then
			sha256sum <"$a"
		else
			printf '%s\n' "$a"
		fi
	done | sha256sum | cut -c1-16
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "this step needs root (apt, chroot, mounts): run as root"
}

# The Debian mirror, as the host's apt configuration names it (never written
# into the repo). deb822 files first, then the one-line format.
apt_mirror() {
	local uri
	uri=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) print $i }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v -- '-security' | head -n1)
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }' |
			grep -v -- '-security' | head -n1)
	fi
	[ -n "$uri" ] || die "cannot find a Debian mirror in /etc/apt/sources.list{,.d}"
	printf '%s\n' "${uri%/}"
}

# A private apt configuration under the cache that adds bookworm-backports and
# trixie (with deb-src) to the host's own sources, without touching /etc/apt.
APT_PRIV=$NEURON_CACHE/apt
apt_private_setup() {
	local mirror
	mirror=$(apt_mirror)
	mkdir -p "$APT_PRIV/lists/partial" "$APT_PRIV/sources.list.d"
	cat >"$APT_PRIV/sources.list.d/extra.sources.new" <<SRC
Types: deb deb-src
URIs: $mirror
Suites: bookworm-backports trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

SRC
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && { cat "$f"; echo; }
	done >>"$APT_PRIV/sources.list.d/extra.sources.new"
	[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$APT_PRIV/sources.list.d/host.list"
	mv "$APT_PRIV/sources.list.d/extra.sources.new" "$APT_PRIV/sources.list.d/extra.sources"
	# Keep trixie from being picked by default on the bookworm host.
	cat >"$APT_PRIV/preferences" <<PREF
Package: *
Pin: release n=trixie
Pin-Priority: 100
PREF
}

apt_priv() {
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$APT_PRIV/sources.list.d" \
		-o Dir::State::Lists="$APT_PRIV/lists" \
		-o Dir::Etc::Preferences="$APT_PRIV/preferences" \
		-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 "$@"
}

# Refresh the private indexes at most once every 6 hours.
apt_priv_update() {
	local stamp=$APT_PRIV/updated
	if [ -z "$(find "$stamp" -mmin -360 2>/dev/null)" ]; then
		apt_priv apt-get update && touch "$stamp"
	fi
}

# The guest root for the current inputs (built by scripts/build-guest).
guest_key() {
	hash_inputs "$NEURON_TOP/scripts/build-guest" "$NEURON_TOP/scripts/guest/packages" \
		"$NEURON_TOP/scripts/guest/rootfs-init"
}
guest_dir() { printf '%s\n' "$NEURON_CACHE/guest-$(guest_key)"; }
guest_root() { printf '%s\n' "$(guest_dir)/root"; }
