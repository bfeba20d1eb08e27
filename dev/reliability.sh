#!/usr/bin/env bash
# dev/reliability.sh - the reliability and security suite at full size (docs/reliability.md):
# the webhook fuzzer (120,000 hostile requests, 500 slow clients), the webhook flooded with 3,000
# connections of 3 MiB bodies while the API server's reviews go on (WebhookFloodE2EIT), the clone
# policy attacked by deputies, forged reviews and withdrawn consent (CloneAttacksE2EIT), the
# provisioner killed after
# every step (CrashEveryStepE2EIT), the real Cinder's API killed and frozen mid-burst, a volume in
# error and a quota running out (CinderFaultsE2EIT, bursts of 36 claims), the real API server
# killed mid-burst and 409 conflicts (KubeFaultsE2EIT), 10,000 hostile claims, PVs and classes
# (HostileObjectsFuzzE2EIT) and 2,000 claims of 200 KiB (HostileObjectsE2EIT), fault injection into the provisioner
# against the real Cinder (NoLeakIT), failover, the webhook down, CA rotation, the webhook's TLS,
# deadline, token and rule tables, and (through dev/test.sh) the scan of every log line of the run
# for secrets. CI runs the same tests at a bounded size on every run
# (`dev/test.sh`); this runs them alone, bigger. Same set-up as dev/test.sh (root, installs what is
# missing, starts and stops the local Cinder and Kubernetes). Extra arguments go to Maven, e.g.
# -Dfuzz.seed=20261123 to replay a run, -Dfuzz.cases=1000000.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/dev/test.sh" \
  -Dtest='WebhookServerTest*,*RuleTest,ClonePolicyTest,StorageClassPolicyTest,CloneTokenTest,CloneTokenGuardTest,CloneAuthorizationTest,ErrorsTest,SecretsNeverShownTest' \
  -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='WebhookFuzzE2EIT,WebhookFloodE2EIT,CloneAttacksE2EIT,HostileObjectsE2EIT,HostileObjectsFuzzE2EIT,NoLeakIT,FailoverE2EIT,WebhookDownE2EIT,CaRotationE2EIT,CrashEveryStepE2EIT,CinderFaultsE2EIT,KubeFaultsE2EIT' \
  -Dit.failIfNoSpecifiedTests=false \
  -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dfuzz.cases="${FUZZ_CASES:-120000}" -Dfuzz.slow="${FUZZ_SLOW:-500}" \
  -Dfaults.burst="${FAULTS_BURST:-36}" \
  -Dflood.requests="${FLOOD_REQUESTS:-3000}" -Dflood.claims="${FLOOD_CLAIMS:-50}" \
  -Dcrowd.claims="${CROWD_CLAIMS:-2000}" -Dfuzz.objects="${FUZZ_OBJECTS:-10000}" \
  "$@"
