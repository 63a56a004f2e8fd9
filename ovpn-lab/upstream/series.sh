#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series ("./lab series"): this repository as a git format-patch
# series against the lab's linux-source tree, cut as series/series.txt
# says, then checked patch by patch.
#
# 1. A git repository of the pristine tree is kept in $OVPN_LAB_CACHE
#    (made once per source version).
# 2. Each patch's version of our files is derived from the repository:
#    starting from the files as they are, the additions each later patch
#    makes to earlier files (series/NN-*.diff) are taken out again, last
#    patch first.  The last patch's tree must equal the repository laid
#    over the pristine tree (overlay.sh): that is checked.
# 3. One commit per patch, message from series/NN-*.msg, then
#    git format-patch with a cover letter (series/cover.txt).
# 4. On an overlay of the prepared tree (ktree.sh), every patch is applied
#    in turn with git apply, and after each the tree is checked
#    (series-check.sh): the driver builds with W=1 and sparse, the uapi
#    headers and the selftests build when present, and checkpatch --strict
#    passes on the patch.
#
# Usage: series.sh [OUTDIR]     default OUTDIR: .build/series
# Writes OUTDIR/*.patch and OUTDIR/build.log; ends with "N findings".

. "$(dirname "$0")/../host/common.sh"

series=$LAB_DIR/upstream/series
outrel=${1:-.build/series}
out=$REPO_DIR/$outrel
root=$("$LAB_DIR/root/mkroot.sh")
tree=$("$LAB_DIR/upstream/ktree.sh")
sparse=$("$LAB_DIR/upstream/sparse.sh")
srcpkg=$(cd "$root/usr/src" && ls -d linux-source-* | sort -V | tail -n1)
version=$(basename "$tree" | sed 's/^ktree-\(.*\)-[0-9a-f]*$/\1/')
kgit=$OVPN_LAB_CACHE/kgit-$version
work=$(mktemp -d "$OVPN_LAB_CACHE/series.XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)

# Commits dated like the repository's last one: the same repository
# gives the same series.
date=$(git -C "$REPO_DIR" log -1 --format=%cI 2>/dev/null || date -R)

git_tree()
{
	lab_chroot_tree "$root" "$kgit" env GIT_AUTHOR_DATE="$date" \
		GIT_COMMITTER_DATE="$date" git -C /ktree \
		-c user.name="Firstname Lastname" -c user.email=you@example.org \
		-c core.abbrev=12 "$@"
}

# 1. The pristine tree under git; one series at a time uses it.
mkdir -p "$OVPN_LAB_CACHE"
exec 8>"$OVPN_LAB_CACHE/.series.lock"
flock 8
if [ ! -e "$kgit/.git/ovpn-lab-ready" ]; then
	lab_log "committing the pristine $srcpkg to git (once)"
	rm -rf "$kgit"
	cp -a "$root/usr/src/$srcpkg" "$kgit"
	git_tree init -q -b base
	# Debian's source ignores everything at its top level (its .gitignore
	# is made for the packaging repository): add by force, here and for
	# each patch.  Nothing here is ever built.
	git_tree add -A -f
	git_tree commit -q -m "Linux $version (Debian $srcpkg)"
	touch "$kgit/.git/ovpn-lab-ready"
fi

# 2. Each patch's version of our files, in snap/NN, laid out as the
# repository is.
patches=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series/series.txt" |
	awk '{ print $1 }')
last=$(tail -n1 <<<"$patches")
paths=$(sed -e 's/#.*//' "$series/series.txt" | awk '{ $1 = ""; print }' |
	xargs)
prev=
for p in $(tac <<<"$patches"); do
	snap=$work/snap/${p%%-*}
	if [ -z "$prev" ]; then
		mkdir -p "$snap"
		(cd "$REPO_DIR" && cp -a --parents $paths "$snap/")
	else
		cp -a "$work/snap/${prev%%-*}" "$snap"
		for f in $(sed -e 's/#.*//' "$series/series.txt" |
			awk -v p="$prev" '$1 == p { $1 = ""; print }'); do
			rm -rf "${snap:?}/$f"
		done
		if [ -e "$series/$prev.diff" ] &&
		   ! patch -s -R -p1 -d "$snap" <"$series/$prev.diff"; then
			lab_die "series/$prev.diff no longer applies to the code: update it"
		fi
	fi
	find "$snap" -name '*.orig' -delete
	find "$snap" -type d -empty -delete
	prev=$p
done

# 3. One commit per patch.
lab_log "making the series on $srcpkg"
git_tree checkout -q -f -B series base
git_tree clean -q -fdx
for p in $patches; do
	snap=$work/snap/${p%%-*}
	if [ "$p" = 01-remove ]; then
		rm -rf "$kgit/drivers/net/ovpn" "$kgit/tools/testing/selftests/net/ovpn"
		awk '/^config OVPN$/ { skip = 1; next }
		     skip && /^config / { skip = 0 }
		     !skip' "$kgit/drivers/net/Kconfig" >"$work/Kconfig"
		cp "$work/Kconfig" "$kgit/drivers/net/Kconfig"
		sed -i '/^TARGETS += net\/ovpn$/d' \
			"$kgit/tools/testing/selftests/Makefile"
	else
		parts=
		for part in drivers/net/ovpn include/uapi/linux/ovpn.h \
			Documentation/netlink Documentation/networking \
			tools/testing/selftests/net/ovpn MAINTAINERS; do
			[ -e "$snap/$part" ] && parts="$parts $part"
		done
		# shellcheck disable=SC2086
		OVPN_OVERLAY_SRC=$snap "$LAB_DIR/upstream/overlay.sh" "$kgit" $parts
	fi
	git_tree add -A -f
	git_tree commit -q -F "/src/ovpn-lab/upstream/series/$p.msg"
done

# The last patch's tree is the repository laid over the pristine tree.
mkdir "$work/full"
git_tree archive base drivers/net/Kconfig MAINTAINERS \
	Documentation/networking/index.rst tools/testing/selftests/Makefile |
	tar -C "$work/full" -x
"$LAB_DIR/upstream/overlay.sh" "$work/full"
for f in $(cd "$work/full" && find . -type f | sed 's|^\./||'); do
	cmp -s "$work/full/$f" "$kgit/$f" ||
		lab_die "after the last patch, $f differs from the repository's"
done

rm -rf "$out"
mkdir -p "$out"
git_tree format-patch -q --cover-letter --no-signature \
	--subject-prefix="PATCH net-next" -o /src/"$outrel" base..series
cover=$(ls "$out"/0000-*.patch)
subject=$(head -n1 "$series/cover.txt")
awk -v subject="$subject" -v blurb="$series/cover.txt" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
	/^\*\*\* BLURB HERE \*\*\*$/ {
		getline l < blurb	# the subject line
		getline l < blurb	# the blank line after it
		while ((getline l < blurb) > 0) print l
		next
	}
	{ print }' "$cover" >"$cover.new"
mv "$cover.new" "$cover"
lab_log "$(ls "$out"/*.patch | wc -l) files in $outrel (cover letter included)"

# 4. Patch by patch, on the prepared tree.
mkdir "$work/upper" "$work/work" "$work/merged"
set +e
unshare --mount --propagation private -- /bin/bash -c '
	set -e
	lab=$1 root=$2 tree=$3 work=$4 sparse=$5 out=$6
	mount -t overlay overlay \
		-o "lowerdir=$tree,upperdir=$work/upper,workdir=$work/work" \
		"$work/merged"
	install -D "$sparse" "$work/merged/.ovpn-lab/sparse"
	mkdir "$work/merged/.ovpn-lab/series"
	cp "$out"/0*.patch "$work/merged/.ovpn-lab/series/"
	. "$lab/host/common.sh"
	lab_chroot_tree "$root" "$work/merged" \
		/src/ovpn-lab/upstream/series-check.sh
' series "$LAB_DIR" "$root" "$tree" "$work" "$sparse" "$out" |
	tee "$out/build.log"
rc=${PIPESTATUS[0]}
set -e
lab_log "series took $(($(date +%s) - t0)) s; per-patch log: $outrel/build.log"
exit "$rc"
