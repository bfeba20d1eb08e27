{{/* Labels Helm adds to every object (beside the app name the manifests have). */}}
{{- define "standalone-cinder.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The cloud.conf Secret the Pod mounts. */}}
{{- define "standalone-cinder.cloudSecret" -}}
{{- .Values.cloudConfig.existingSecret | default "standalone-cinder-cloud-config" -}}
{{- end }}
