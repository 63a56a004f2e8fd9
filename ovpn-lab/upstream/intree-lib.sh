# SPDX-License-Identifier: GPL-2.0
# What the in-tree checks share (intree-check.sh, series-check.sh): they
# run inside the lab root, in an overlay of the prepared kernel tree at
# /ktree.  Sourced, never run.

cd /ktree || exit 1
jobs=$(nproc)
# A sparse that knows this tree (sparse.sh), laid into the overlay.
CHECK=/ktree/.ovpn-lab/sparse

# A build's findings: every compiler or sparse diagnostic, or the build's
# own failure.
build_findings()
{
	local out rc

	out=$("$@" 2>&1)
	rc=$?
	grep -E 'warning:|error:|: note:' <<<"$out"
	[ "$rc" = 0 ] || { tail -n 20 <<<"$out"; echo "build failed ($rc)"; }
	return 0
}
