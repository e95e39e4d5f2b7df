{{- define "gitops-scaffolder.fullname" -}}
{{ .Release.Name }}-gitops-scaffolder
{{- end }}

{{- define "gitops-scaffolder.labels" -}}
app.kubernetes.io/name: gitops-scaffolder
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gitops-scaffolder.selector" -}}
app.kubernetes.io/name: gitops-scaffolder
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
