# Sourced by scripts/test and scripts/check-image, after lib/common.sh: one
# operator binary, started by the caller's function, places a sample on a
# real control plane (etcd + kube-apiserver) that this starts and stops.
# The CRDs from crds/, the sample PlacementPolicy with capacity.source None
# (this control plane has no nodes), the sample Deployments and GpuWorkloads
# of config/samples/; placed means: the GpuWorkload ml-serving/llama-chat
# says Applied=True, and its Deployment's pod template selects the instance
# type of its status.placement.

readonly SAMPLE_NAMESPACE=ml-serving
readonly SAMPLE_NAME=llama-chat
readonly SAMPLE_TIMEOUT_S=60

# place_sample DIR START [CHECK-RUNNING]
#   START KUBECONFIG runs the operator in the foreground (exec), its output
#   going to DIR/operator.log; CHECK-RUNNING PID, if given, checks the
#   running operator's process once the sample is placed.
place_sample() {
  local dir=$1 start_operator=$2 check_running=${3:-}
  local kubeconfig="$dir/kubeconfig" operator="" status=0
  "$REPO_ROOT/scripts/controlplane" start "$dir" --owner-pid $$ || return 1
  {
    _sample_kubectl apply -f "$REPO_ROOT/crds/" >/dev/null &&
      _sample_kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null
  } || status=1
  if ((status == 0)); then
    "$start_operator" "$kubeconfig" >"$dir/operator.log" 2>&1 &
    operator=$!
    _apply_samples && _wait_placed "$operator" && _check_template || status=1
    if ((status == 0)) && [[ -n "$check_running" ]]; then
      "$check_running" "$operator" || status=1
    fi
  fi
  if ((status != 0)); then
    log "the sample was not placed; last lines of $dir/operator.log:"
    tail -n 20 "$dir/operator.log" >&2 || true
    _sample_kubectl get gpuworkload -n "$SAMPLE_NAMESPACE" "$SAMPLE_NAME" -o yaml >&2 2>/dev/null || true
  fi
  if [[ -n "$operator" ]]; then
    kill "$operator" 2>/dev/null || true
    wait "$operator" 2>/dev/null || true
  fi
  "$REPO_ROOT/scripts/controlplane" stop "$dir" >/dev/null 2>&1 || true
  return "$status"
}

_sample_kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$kubeconfig" "$@"; }

_apply_samples() {
  local samples="$REPO_ROOT/config/samples" policy
  policy=$(cat "$samples/placementpolicy.yaml")
  [[ "$policy" == *"source: Auto"* ]] ||
    { log "config/samples/placementpolicy.yaml no longer sets capacity.source: Auto"; return 1; }
  _sample_kubectl apply -f - >/dev/null <<<"${policy/source: Auto/source: None}" &&
    _sample_kubectl create namespace ml-serving >/dev/null &&
    _sample_kubectl create namespace research >/dev/null &&
    _sample_kubectl apply -f "$samples/deployments.yaml" >/dev/null &&
    _sample_kubectl apply -f "$samples/gpuworkloads.yaml" >/dev/null
}

_wait_placed() { # operator-pid
  local deadline=$((SECONDS + SAMPLE_TIMEOUT_S)) applied
  while ((SECONDS < deadline)); do
    kill -0 "$1" 2>/dev/null || { log "the operator exited"; return 1; }
    applied=$(_sample_kubectl get gpuworkload -n "$SAMPLE_NAMESPACE" "$SAMPLE_NAME" \
      -o jsonpath='{.status.conditions[?(@.type=="Applied")].status}' 2>/dev/null || true)
    [[ "$applied" == True ]] && return 0
    sleep 0.5
  done
  log "$SAMPLE_NAMESPACE/$SAMPLE_NAME is not Applied=True after $SAMPLE_TIMEOUT_S s"
  return 1
}

_check_template() {
  local placed selected
  placed=$(_sample_kubectl get gpuworkload -n "$SAMPLE_NAMESPACE" "$SAMPLE_NAME" \
    -o jsonpath='{.status.placement.instanceType}')
  selected=$(_sample_kubectl get deployment -n "$SAMPLE_NAMESPACE" "$SAMPLE_NAME" \
    -o jsonpath='{.spec.template.spec.nodeSelector.node\.kubernetes\.io/instance-type}')
  if [[ -z "$placed" || "$selected" != "$placed" ]]; then
    log "status.placement.instanceType is '$placed', the pod template selects '$selected'"
    return 1
  fi
  log "placed $SAMPLE_NAMESPACE/$SAMPLE_NAME on $placed: Applied=True, the pod template selects it"
}
