#!/bin/sh
# Run inside a lab node (lab/lab.sh exec I "$(cat lab/node-tree.sh)"): what the node's
# files and units are, one line each, sorted: every path outside the kernel's and the
# runtime's own trees with its type, mode, owner and link target (and, for regular files,
# its size, and its sha256 where kdeploy writes: /etc, /usr/local, /opt, /var/lib, /root),
# then `unit NAME STATE` for every unit file. lab.sh writes it at
# boot (.lab/run/kdnodeN.boot), before any switch; tests/lab/reset.rs compares a reset
# node with it: what a reset leaves behind is what differs.
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
	-o -path /var/tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/systemd \
	-o -path /root/.ssh -o -path /var/lib/kdeploy-lab \) -prune \
	-o -type f -printf 'f %p %m %u:%g %s\n' -o -printf '%y %p %m %u:%g %l\n' | sort >/tmp/tree.$$
while read -r t p rest; do
	case $t:$p in
	f:/etc/* | f:/usr/local/* | f:/opt/* | f:/var/lib/* | f:/root/*) echo "$t $p $rest $(sha256sum <"$p" | cut -c1-16)" ;;
	*) echo "$t $p $rest" ;;
	esac
done </tmp/tree.$$
rm -f /tmp/tree.$$
systemctl list-unit-files --no-legend --no-pager 2>/dev/null | awk '{ print "unit", $1, $2 }' | sort
