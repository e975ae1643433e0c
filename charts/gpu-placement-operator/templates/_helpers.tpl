{{/* The release's full name, at most 63 characters. */}}
{{- define "gpu-placement.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpu-placement.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpu-placement.labels" -}}
{{ include "gpu-placement.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gpu-placement.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gpu-placement.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "gpu-placement.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- with .Values.image.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
kube-score checks the Deployment does not pass on purpose, each a choice
explained in values.yaml next to the value that makes it.
*/}}
{{- define "gpu-placement.kubeScoreChoices" -}}
{{- $choices := list -}}
{{- if ne .Values.image.pullPolicy "Always" -}}
{{- $choices = append $choices "container-image-pull-policy" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) .Values.topologySpreadConstraints (not (dig "podAntiAffinity" nil .Values.affinity)) -}}
{{- $choices = append $choices "deployment-has-host-podantiaffinity" -}}
{{- end -}}
{{- join "," $choices -}}
{{- end -}}

{{/*
The oldest Kubernetes the chart supports, checked only when helm talks to a
cluster (install, upgrade, template --validate): offline, lookup answers
nothing and .Capabilities holds helm's default, not the cluster's version.
*/}}
{{- define "gpu-placement.checkKubeVersion" -}}
{{- if and (lookup "v1" "Namespace" "" "kube-system") (not (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version)) -}}
{{- fail (printf "gpu-placement-operator needs Kubernetes 1.30 or newer (CEL validation rules in its CRDs, ValidatingAdmissionPolicy v1 for Jobs); this cluster runs %s" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- end -}}
