#!/bin/sh
# UML's slirp transport gives slirp a socketpair on stdin/stdout, and Debian's slirp 1.0.17 exits
# at once when stdin is not a terminal: give it a raw pty. slirp-fullbolt drops plain slirp's
# 115,200-baud throttle.
exec socat -b 65536 STDIO EXEC:"/usr/bin/slirp-fullbolt",pty,rawer 2>>"${SLIRP_LOG:-/dev/null}"
