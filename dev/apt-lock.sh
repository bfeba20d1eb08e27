# dev/apt-lock.sh - sourced by the dev/ scripts that install Debian packages. dev/test.sh starts
# the local Cinder, control plane and nodes at once; their apt-get update, debconf preseeding and
# installs must take turns (apt-get update does not wait for another's lists lock, and debconf
# fails on a locked database), so each holds this lock around its package work only.
# apt_lock waits up to 30 minutes (a fresh machine's Cinder install takes a few); apt_unlock
# releases it before anything long-lived starts, so no daemon inherits the lock.
APT_LOCK_FILE=/run/lock/standalone-cinder-apt.lock

apt_lock() {
  mkdir -p "$(dirname "$APT_LOCK_FILE")"
  exec 9>"$APT_LOCK_FILE"
  if ! flock -w 1800 9; then
    echo "$(basename "$0"): another dev/ script held $APT_LOCK_FILE for 30 minutes" >&2
    return 1
  fi
}

apt_unlock() {
  flock -u 9 2>/dev/null || true
  exec 9>&-
}
