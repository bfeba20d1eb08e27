{{/* The labels of every object: the two the manifests have, and Helm's own. */}}
{{- define "standalone-cinder.labels" -}}
app.kubernetes.io/name: standalone-cinder
app.kubernetes.io/part-of: standalone-cinder
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/*
The name of the release's cluster-wide objects (ClusterRoles and their bindings, the webhook
configurations): the release name when it holds the chart's name (the documented
`helm install standalone-cinder ...` gives the names manifests/base has), else
<release>-<name>; fullnameOverride sets it. Objects in the release's namespace keep their fixed
names: one release per namespace.
*/}}
{{- define "standalone-cinder.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := .Values.nameOverride | default .Chart.Name -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* The cloud.conf Secret the Pod mounts. */}}
{{- define "standalone-cinder.cloudSecret" -}}
{{- .Values.cloudConfig.existingSecret | default "standalone-cinder-cloud-config" -}}
{{- end }}

{{/*
Match conditions (Kubernetes 1.28+) of the claim entries: only claims that ask for a clone, say
they are one, carry a token, or share a filesystem (ReadWriteMany) reach the webhook. The same
expressions as manifests/match-conditions.
*/}}
{{- define "standalone-cinder.cloneConditions" -}}
- name: asks-for-a-clone-or-shares-a-filesystem
  expression: >-
    (has(object.metadata.annotations) && ('k8s.io/CloneRequest' in object.metadata.annotations
    || 'k8s.io/CloneOf' in object.metadata.annotations
    || 'standalone-cinder.io/clone-token' in object.metadata.annotations))
    || has(object.spec.dataSource) || has(object.spec.dataSourceRef)
    || (has(object.spec.accessModes) && 'ReadWriteMany' in object.spec.accessModes)
{{- end }}

{{/* ... and of the claim-update entry: changes of the clone annotations or of the request, by
anyone but the PV controller and the protection controller. */}}
{{- define "standalone-cinder.updateConditions" -}}
- name: not-a-bind-nor-a-finalizer-removal
  expression: >-
    !(request.userInfo.username in ['system:serviceaccount:kube-system:persistent-volume-binder',
    'system:serviceaccount:kube-system:pvc-protection-controller', 'system:kube-controller-manager'])
- name: touches-a-clone-annotation-or-the-request
  expression: >-
    ['k8s.io/CloneRequest', 'k8s.io/CloneOf', 'standalone-cinder.io/clone-token'].exists(k,
    (has(object.metadata.annotations) && k in object.metadata.annotations
    ? object.metadata.annotations[k] : '') != (has(oldObject.metadata.annotations)
    && k in oldObject.metadata.annotations ? oldObject.metadata.annotations[k] : ''))
    || (has(object.spec.resources) && has(object.spec.resources.requests)
    && 'storage' in object.spec.resources.requests ? object.spec.resources.requests['storage']
    : '') != (has(oldObject.spec.resources) && has(oldObject.spec.resources.requests)
    && 'storage' in oldObject.spec.resources.requests
    ? oldObject.spec.resources.requests['storage'] : '')
{{- end }}

{{/* ... and of the StatefulSet entry: only StatefulSets whose claim templates ask for a clone. */}}
{{- define "standalone-cinder.statefulSetConditions" -}}
- name: a-template-asks-for-a-clone
  expression: >-
    has(object.spec.volumeClaimTemplates) && object.spec.volumeClaimTemplates.exists(t,
    (has(t.metadata.annotations) && 'k8s.io/CloneRequest' in t.metadata.annotations)
    || has(t.spec.dataSource) || has(t.spec.dataSourceRef))
{{- end }}
