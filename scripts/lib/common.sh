# Shared by scripts/*: where things live and how to find the pinned versions.
# Sourced, never executed.

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CONTROLPLANE_MODULES="$REPO_ROOT/tests/controlplane"
CACHE_ROOT="${GPU_PLACEMENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-placement}"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The version a wrapper module pins, read from its go.mod so that the module
# is the only place a version is written down.
pinned_version() { # module-dir module-path
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit }
    $1 == "require" && $2 == m && $3 ~ /^v/ { print $3; exit }' "$1/go.mod"
}

K8S_VERSION=$(pinned_version "$CONTROLPLANE_MODULES" k8s.io/kubernetes)
# The previous line still supported, for the compatibility suite
# (scripts/controlplane start --kubernetes 1.34): kube-apiserver and kubectl only.
K8S_COMPAT_MODULE="$CONTROLPLANE_MODULES/k8s-1.34"
K8S_COMPAT_VERSION=$(pinned_version "$K8S_COMPAT_MODULE" k8s.io/kubernetes)
ETCD_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/etcd" go.etcd.io/etcd/server/v3)
HELM_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/helm" helm.sh/helm/v3)
# helm-docs writes the chart's README from values.yaml (scripts/chart-docs).
HELM_DOCS_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/helm-docs" github.com/norwoodj/helm-docs)
# The simulated cluster (scripts/controlplane start --cluster): kube-scheduler
# and kube-controller-manager of the same Kubernetes release and kwok, from
# kube-apiserver's module; simcluster, the node generator, and Karpenter with
# its kwok provider (--karpenter), from simcluster's.
KWOK_VERSION=$(pinned_version "$CONTROLPLANE_MODULES" sigs.k8s.io/kwok)
KARPENTER_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/simcluster" sigs.k8s.io/karpenter)

# kube-score, the chart test's static checker of the rendered chart.
KUBE_SCORE_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/kube-score" github.com/zegl/kube-score)
# The controllers of the kinds GPU work runs as, real ones, that the
# simulated cluster can run beside it (scripts/controlplane start --cluster
# --kinds kuberay,lws,jobset,trainer,kueue): KubeRay's operator (RayCluster,
# RayService, RayJob), the LeaderWorkerSet controller, the JobSet controller,
# Kubeflow Trainer v2's controller manager (TrainJob, which runs as a
# JobSet) and Kueue's.
KUBERAY_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/kuberay" github.com/ray-project/kuberay/ray-operator)
LWS_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/lws" sigs.k8s.io/lws)
JOBSET_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/jobset" sigs.k8s.io/jobset)
TRAINER_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/trainer" github.com/kubeflow/trainer/v2)
# Kueue's controller manager (ClusterQueue, LocalQueue, ResourceFlavor,
# Workload): it queues Jobs and the kinds above and admits them.
KUEUE_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/kueue" sigs.k8s.io/kueue)

# kube-apiserver, kubectl, kube-scheduler, kube-controller-manager, kwok and
# kwok-stages: one module, one build, one directory.
K8S_BIN="$CACHE_ROOT/k8s-$K8S_VERSION/bin"
CLUSTER_BIN=$K8S_BIN
KWOK_BIN=$K8S_BIN
K8S_COMPAT_BIN="$CACHE_ROOT/k8s-$K8S_COMPAT_VERSION/bin"
ETCD_BIN="$CACHE_ROOT/etcd-$ETCD_VERSION/bin"
HELM_BIN="$CACHE_ROOT/helm-$HELM_VERSION/bin"
KUBE_SCORE_BIN="$CACHE_ROOT/kube-score-$KUBE_SCORE_VERSION/bin"
HELM_DOCS_BIN="$CACHE_ROOT/helm-docs-$HELM_DOCS_VERSION/bin"
KARPENTER_BIN="$CACHE_ROOT/karpenter-kwok-$KARPENTER_VERSION/bin"
# Each with its CRDs, copied from its module, in crds/ beside bin/.
KUBERAY_BIN="$CACHE_ROOT/kuberay-$KUBERAY_VERSION/bin"
LWS_BIN="$CACHE_ROOT/lws-$LWS_VERSION/bin"
JOBSET_BIN="$CACHE_ROOT/jobset-$JOBSET_VERSION/bin"
TRAINER_BIN="$CACHE_ROOT/trainer-$TRAINER_VERSION/bin"
KUEUE_BIN="$CACHE_ROOT/kueue-$KUEUE_VERSION/bin"
# simcluster is this project's own program: its cache is named by its
# sources too, so two clones (worktrees) with different generators on one
# machine keep a binary each instead of rebuilding the other's away.
SIMCLUSTER_SOURCE=$(find "$CONTROLPLANE_MODULES/simcluster" -name '*.go' -print0 | sort -z |
  xargs -0 -r cat | sha256sum | cut -c1-8)
SIMCLUSTER_BIN="$CACHE_ROOT/simcluster-karpenter-$KARPENTER_VERSION-$SIMCLUSTER_SOURCE/bin"
# The control plane's launcher (scripts/controlplane), also named by its
# sources (not its tests): the standard library only, so they are all it
# depends on.
LAUNCHER_SOURCE=$(find "$CONTROLPLANE_MODULES/launcher" -name '*.go' ! -name '*_test.go' -print0 | sort -z |
  xargs -0 -r cat | sha256sum | cut -c1-8)
LAUNCHER_BIN="$CACHE_ROOT/controlplane-launcher-$LAUNCHER_SOURCE/bin"
# The image's SBOM generator (scripts/build-image).
SYFT_VERSION=$(pinned_version "$CONTROLPLANE_MODULES/syft" github.com/anchore/syft)
SYFT_BIN="$CACHE_ROOT/syft-$SYFT_VERSION/bin"

# The documentation site's tools (MkDocs, Material, jsonschema2md): a Python
# virtual environment named by the hash of docs/requirements.txt, so a pin
# changed there gets an environment of its own.
DOCS_REQUIREMENTS="$REPO_ROOT/docs/requirements.txt"
DOCS_VENV="$CACHE_ROOT/docs-$(sha256sum "$DOCS_REQUIREMENTS" | cut -c1-16)"

# Runs a build quietly: on failure it prints what the compiler said, without
# ninja's progress lines, and returns the failure.
quiet_build() { # command...
  local output
  output=$("$@" 2>&1) && return
  local status=$?
  echo "$output" | grep -vE '^\[[0-9]+/[0-9]+\] ' >&2
  return "$status"
}

# What ships, scripts/build-release, into a tree under the repository.
build_release() { # build-dir
  quiet_build "$REPO_ROOT/scripts/build-release" "$REPO_ROOT/$1" ||
    die "the release build in $1 (scripts/build-release) failed"
}

# Configures (first time) and builds a tree; extra arguments go to cmake.
# BUILD_TARGETS (space-separated) builds only those, e.g. the unit tests.
build_tree() { # build-dir cmake-args...
  local dir=$1
  shift
  if [[ ! -f "$REPO_ROOT/$dir/build.ninja" ]]; then
    cmake -S "$REPO_ROOT" -B "$REPO_ROOT/$dir" -G Ninja "$@" >/dev/null
  else
    cmake "$REPO_ROOT/$dir" "$@" >/dev/null
  fi
  # shellcheck disable=SC2086 # one target a word
  quiet_build ninja -C "$REPO_ROOT/$dir" ${BUILD_TARGETS:-} || die "the build in $dir failed"
}
