{{- define "edgeplane.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "edgeplane.labels" -}}
app.kubernetes.io/name: edgeplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "edgeplane.selectorLabels" -}}
app.kubernetes.io/name: edgeplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- /* A map as key=value,... in key order: a label selector or a tag list flag. */}}
{{- define "edgeplane.selectorString" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $pairs = append $pairs (printf "%s=%s" $k (toString $v)) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end }}

{{- /*
edgeplane.nodeTaintPolicies: "true" when selected nodes get their taint at
admission from MutatingAdmissionPolicies instead of the Node webhooks
(webhook.nodeTaints; "auto" asks the cluster).
*/ -}}
{{- define "edgeplane.nodeTaintPolicies" -}}
{{- $mode := .Values.webhook.nodeTaints | default "auto" -}}
{{- if or (eq $mode "policy") (and (eq $mode "auto") (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")) -}}
true
{{- end -}}
{{- end -}}

{{- /*
edgeplane.celMatchLabels: a CEL expression true when the object named .obj
("object" or "oldObject") carries every label of .labels, as an
objectSelector's matchLabels would match it.
*/ -}}
{{- define "edgeplane.celMatchLabels" -}}
{{- $obj := .obj -}}
has({{ $obj }}.metadata.labels)
{{- range $k, $v := .labels }} && {{ $k | quote }} in {{ $obj }}.metadata.labels && {{ $obj }}.metadata.labels[{{ $k | quote }}] == {{ $v | quote }}{{ end }}
{{- end -}}
