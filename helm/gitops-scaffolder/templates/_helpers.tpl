{{/* The chart's name, or nameOverride; 63 characters at most (a DNS-1123 label). */}}
{{- define "gitops-scaffolder.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified name of this release's objects: fullnameOverride, or <release>-<name> (just
<release> when it already contains the name); cut to 63 characters because some Kubernetes name
fields are limited to that.
*/}}
{{- define "gitops-scaffolder.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* A release-scoped name with a suffix, still within 63 characters: (fullname cut) + "-" + suffix. */}}
{{- define "gitops-scaffolder.scopedName" -}}
{{- $full := include "gitops-scaffolder.fullname" .root }}
{{- printf "%s-%s" ($full | trunc (int (sub 62 (len .suffix))) | trimSuffix "-") .suffix }}
{{- end }}

{{- define "gitops-scaffolder.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object of the release. */}}
{{- define "gitops-scaffolder.labels" -}}
helm.sh/chart: {{ include "gitops-scaffolder.chart" . }}
{{ include "gitops-scaffolder.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gitops-scaffolder
{{- end }}

{{/* The labels that select the service's pods: stable across upgrades, so never the version. */}}
{{- define "gitops-scaffolder.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gitops-scaffolder.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The labels that select the service's pods but not the migration hook's pod, which carries the release's
labels too: what the Service, the PodDisruptionBudget and the runner Jobs' NetworkPolicy point at.
*/}}
{{- define "gitops-scaffolder.servicePodSelector" -}}
{{ include "gitops-scaffolder.selectorLabels" . }}
app.kubernetes.io/component: service
{{- end }}

{{/* The port the service container listens on (its PORT; the Service's targetPort "http"): runner Jobs reach it there. */}}
{{- define "gitops-scaffolder.containerPort" -}}
8080
{{- end }}

{{- define "gitops-scaffolder.serviceAccountName" -}}
{{- include "gitops-scaffolder.fullname" . }}
{{- end }}

{{- define "gitops-scaffolder.runnerServiceAccountName" -}}
{{- include "gitops-scaffolder.scopedName" (dict "root" . "suffix" "runner") }}
{{- end }}

{{/* image.tag and runnerImage.tag default to the chart's appVersion. */}}
{{- define "gitops-scaffolder.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "gitops-scaffolder.runnerImage" -}}
{{- printf "%s:%s" .Values.runnerImage.repository (default .Chart.AppVersion .Values.runnerImage.tag) }}
{{- end }}

{{/*
A namespace entry of kubeconfigSecretNamespaces / credentialsSecretNamespaces: a plain namespace
name (every Secret there may be read: use a namespace dedicated to them), or {namespace, secretNames}
to allow only those Secrets.
*/}}
{{- define "gitops-scaffolder.secretReadRule" -}}
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
  {{- if and (kindIs "map" .) .secretNames }}
  resourceNames:
    {{- toYaml .secretNames | nindent 4 }}
  {{- end }}
{{- end }}

{{- define "gitops-scaffolder.secretNamespace" -}}
{{- if kindIs "map" . }}{{ .namespace }}{{ else }}{{ . }}{{ end }}
{{- end }}

{{/* Every namespace of kubeconfigSecretNamespaces and credentialsSecretNamespaces, comma-separated (SECRET_NAMESPACES). */}}
{{- define "gitops-scaffolder.secretNamespaces" -}}
{{- $names := list }}
{{- range concat .Values.kubeconfigSecretNamespaces .Values.credentialsSecretNamespaces }}
{{- $names = append $names (include "gitops-scaffolder.secretNamespace" .) }}
{{- end }}
{{- $names | uniq | join "," }}
{{- end }}

{{/* Where the service's and the hook Job's pods may run, and what they pull with. */}}
{{- define "gitops-scaffolder.podScheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "gitops-scaffolder.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  runAsGroup: 10001
  fsGroup: 10001
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{- define "gitops-scaffolder.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
{{- end }}

{{/* imagePullSecrets as the comma-separated names the service gives its runner Jobs. */}}
{{- define "gitops-scaffolder.pullSecretNames" -}}
{{- $names := list }}
{{- range .Values.imagePullSecrets }}{{ $names = append $names .name }}{{ end }}
{{- join "," $names }}
{{- end }}
