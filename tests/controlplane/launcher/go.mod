// Module of the control plane's launcher (scripts/controlplane): etcd,
// kube-apiserver and, with --cluster, the simulated EKS cluster around them.
// The standard library only: it builds in seconds, before any of the pinned
// tools it starts.
module gpuplacement.io/testing/controlplane/launcher

go 1.26
