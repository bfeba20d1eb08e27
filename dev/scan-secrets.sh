#!/usr/bin/env bash
# dev/scan-secrets.sh - look for secrets in every log line a test run produced.
#
#   dev/scan-secrets.sh [--self-test] FILE|DIR...
#
# It knows the secrets of the run by value, from where they live:
#   - the local Cinder's passwords and application credential (cinder-local.env), its database
#     password, and every CHAP password Cinder ever handed out (the volumes table keeps the
#     provider_auth of deleted volumes too);
#   - the cephx keys of the local Ceph (keyring files);
#   - every Secret value in the local Kubernetes (service-account tokens, the webhook's TLS key,
#     the clone-token key, CHAP and cephx Secrets still there), and the resolver tokens the
#     installations wrote;
# and by shape: Keystone (Fernet) tokens, private keys in PEM, and auth_password / password /
# X-Auth-Token / key followed by a value that is not masked.
# A hit prints the file, the line number and the kind of secret, never the secret. Exit 1 when
# anything is found, 0 when nothing is.
# --self-test first plants one secret of each kind in a file and fails unless each is found (so
# that a scan that finds nothing means something).
# Env: CINDER_LOCAL_STATE (/tmp/cinder-local), KUBE_LOCAL_STATE (/tmp/kube-local).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CINDER_STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
KUBE_STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
SELF_TEST=0
if [ "${1:-}" = --self-test ]; then SELF_TEST=1; shift; fi
[ $# -gt 0 ] || { echo "usage: dev/scan-secrets.sh [--self-test] FILE|DIR..." >&2; exit 2; }

WORK="$(mktemp -d)"; chmod 700 "$WORK"
trap 'rm -rf "$WORK"' EXIT
VALUES="$WORK/values"   # kind<TAB>value, one per line
: > "$VALUES"
add() { # kind value: values shorter than 8 characters would match ordinary words
  [ "${#2}" -ge 8 ] && printf '%s\t%s\n' "$1" "$2" >> "$VALUES"
  return 0
}

# ------------------------------------------------------------------ secrets by value
ENV_FILE="$CINDER_STATE/cinder-local.env"
if [ -f "$ENV_FILE" ]; then
  for k in OS_PASSWORD OS_ADMIN_PASSWORD CINDER_LOCAL_APPCRED_SECRET CINDER_LOCAL_TRUSTEE_PASSWORD; do
    v=$(sed -n "s/^$k=//p" "$ENV_FILE")
    add "cinder-local $k" "$v"
  done
  add "cinder database password" lab-db-secret
  sock="$CINDER_STATE/mysql/mysqld.sock"
  if [ -S "$sock" ] && command -v mysql >/dev/null; then
    mysql -S "$sock" -u root -N -B cinder -e \
      "SELECT provider_auth FROM volumes WHERE provider_auth IS NOT NULL" 2>/dev/null |
      awk '{print $3}' | sort -u | while read -r chap; do add "CHAP password" "$chap"; done
  fi
fi
for keyring in "$CINDER_STATE"/ceph/*.keyring; do
  [ -f "$keyring" ] || continue
  sed -n 's/^[[:space:]]*key[[:space:]]*=[[:space:]]*//p' "$keyring" | while read -r key; do
    add "cephx key ($(basename "$keyring"))" "$key"
  done
done
if [ -f "$KUBE_STATE/admin.kubeconfig" ] && command -v kubectl >/dev/null; then
  kubectl --kubeconfig "$KUBE_STATE/admin.kubeconfig" --request-timeout=10s get secrets -A \
    -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\t"}{.data}{"\n"}{end}' 2>/dev/null |
    python3 -c '
import sys, json, base64
for line in sys.stdin:
    name, _, data = line.rstrip("\n").partition("\t")
    if not data or data == "map[]":
        continue
    for key, value in json.loads(data).items():
        # certificates, user names and the namespace name are not secrets
        if key.endswith(".crt") or "user" in key.lower() or key in ("namespace", "caBundle"):
            continue
        try:
            text = base64.b64decode(value).decode()
        except Exception:
            continue
        for part in text.splitlines():
            part = part.strip()
            if len(part) >= 8 and not part.startswith("-----"):
                print("Secret " + name + " " + key + "\t" + part)
' >> "$VALUES"
fi
for token in "$ROOT"/*/target/*/resolver-token "$ROOT"/*/target/*/*/resolver-token; do
  [ -f "$token" ] && add "resolver token" "$(cat "$token")"
done
sort -u -o "$VALUES" "$VALUES"

# ------------------------------------------------------------------ secrets by shape
SHAPES="$WORK/shapes"
cat > "$SHAPES" <<'EOF'
Keystone token	gAAAAA[A-Za-z0-9_-]{80,}
private key	-----BEGIN ([A-Z]+ )?PRIVATE KEY-----
password value	"?(auth_password|password|secret|app_cred_secret|application_credential_secret)"?[[:space:]]*[:=][[:space:]]*"?[^"*[:space:],}]{6,}
token header	X-Auth-Token:[[:space:]]*[A-Za-z0-9_-]{20,}
cephx key	AQ[A-Za-z0-9+/]{38}==
EOF

logs() { # dirs or files...: the log files among them, NUL-separated
  find "$@" -type f \( -name '*.log' -o -name '*.txt' -o -name '*.stdout' -o -name '*.out' \) \
    -not -path '*/node_modules/*' -print0 2>/dev/null
}

scan() { # dirs or files...: prints hits, returns 0 when there were any
  local hits="$WORK/hits" kind pattern
  : > "$hits"
  logs "$@" > "$WORK/files"
  cut -f2- "$VALUES" > "$WORK/fixed"
  if [ -s "$WORK/fixed" ] && [ -s "$WORK/files" ]; then
    xargs -0 grep -nHF -f "$WORK/fixed" -- < "$WORK/files" 2>/dev/null | while IFS= read -r hit; do
      loc="${hit%%:*}"; rest="${hit#*:}"; line="${rest%%:*}"
      kind=$(while IFS=$'\t' read -r k v; do
               case "$hit" in *"$v"*) echo "$k"; break ;; esac
             done < "$VALUES")
      echo "$loc:$line: ${kind:-a secret of the run}" >> "$hits"
    done
  fi
  while IFS=$'\t' read -r kind pattern; do
    [ -s "$WORK/files" ] || break
    xargs -0 grep -nHE -- "$pattern" < "$WORK/files" 2>/dev/null | cut -d: -f1,2 |
      sed "s|\$|: $kind|" >> "$hits"
  done < "$SHAPES"
  sort -u "$hits"
  [ -s "$hits" ]
}

if [ "$SELF_TEST" = 1 ]; then
  plant="$WORK/planted.log"
  add "self-test value" "planted-$(date +%s%N)"
  { printf 'calling with %s\n' "$(tail -1 "$VALUES" | cut -f2)"
    printf 'token gAAAAA%s\n' "$(head -c 120 /dev/zero | tr '\0' 'x')"
    printf -- '-----BEGIN PRIVATE KEY-----\n'
    printf '{"auth_password": "abcdef123"}\n'
    printf 'X-Auth-Token: %s\n' "$(head -c 32 /dev/zero | tr '\0' 'y')"
    printf 'key = AQ%s==\n' "$(head -c 38 /dev/zero | tr '\0' 'z')"
    printf '{"auth_password": "***"} masked, must not count\n'
  } > "$plant"
  found=$(scan "$plant" | wc -l)
  if [ "$found" != 6 ]; then
    echo "scan-secrets: self-test FAILED: $found of 6 planted secrets found:" >&2
    scan "$plant" >&2
    exit 1
  fi
  echo "scan-secrets: self-test found 6 of 6 planted secrets and not the masked one"
  sed -i '$d' "$VALUES"
fi

files=$(logs "$@" | tr -cd '\0' | wc -c)
lines=$(logs "$@" | xargs -0 cat 2>/dev/null | wc -l)
known=$(wc -l < "$VALUES")
by_kind=$(cut -f1 "$VALUES" | sed 's/ (.*//; s/^Secret .*/Kubernetes Secret values/' | sort | uniq -c | awk '{n=$1; $1=""; printf "%s%s %s", sep, n, substr($0,2); sep=", "}')
if scan "$@" > "$WORK/result"; then
  echo "scan-secrets: FOUND secrets in the logs (kind only, never the value):" >&2
  cat "$WORK/result" >&2
  exit 1
fi
echo "scan-secrets: no secret in $files log files ($lines lines); looked for $known secrets of the run ($by_kind) and 5 shapes"
